// Every table, for drizzle-kit and for the typed client: the schema layer that the platform and
// every feature read and write through (tables never live inside a feature).
export * from './tables/users.js';
export * from './tables/auth.js';
export * from './tables/organizations.js';
export * from './tables/projects.js';
export * from './tables/audit.js';
export * from './tables/webhooks.js';
export * from './tables/api-keys.js';
export * from './tables/billing.js';
export * from './tables/passkeys.js';
