// Every table, for drizzle-kit and for the typed client. Tables live beside their module.
export * from '../modules/users/tables.js';
export * from '../modules/auth/tables.js';
