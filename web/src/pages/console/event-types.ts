// The built-in event types an endpoint may subscribe to (docs/api.md#event-types), as the endpoint
// form offers them. src/platform/event-catalogue.ts is the source; test/web-event-types.test.ts fails
// when the two differ.
export const EVENT_TYPES = [
  'member.added',
  'member.removed',
  'member.updated',
  'billing.updated',
  'billing.canceled',
  'api_key.created',
  'api_key.revoked',
  'project.created',
  'project.updated',
  'project.deleted',
  'webhook_endpoint.disabled',
  'role.created',
  'role.updated',
  'role.deleted',
  'test',
] as const;
