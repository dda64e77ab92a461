// Every table, for drizzle-kit and for the typed client. Tables live beside their module.
export * from '../modules/users/tables.js';
export * from '../modules/auth/tables.js';
export * from '../modules/organizations/tables.js';
export * from '../modules/projects/tables.js';
export * from '../modules/audit/tables.js';
export * from '../modules/webhooks/tables.js';
export * from '../modules/api-keys/tables.js';
export * from '../modules/billing/tables.js';
