// The event catalogue (docs/api.md#event-types) and how endpoints subscribe to it.
import { validationError } from '../lib/errors.js';

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

/** Accepted in an endpoint's `events` as another name of billing.updated, which is what is sent. */
export const ALIASES: Record<string, string> = { 'subscription.updated': 'billing.updated' };

const CUSTOM = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

export function validateEventTypes(types: string[]): string[] {
  const out = new Set<string>();
  for (const t of types) {
    if (!(EVENT_TYPES as readonly string[]).includes(t) && !ALIASES[t] && !CUSTOM.test(t)) {
      throw validationError(
        'Invalid request body',
        `events: "${t}" is not a known event type nor a custom type like "order.shipped"`,
      );
    }
    out.add(t);
  }
  return [...out];
}

/** The `events` values an endpoint may hold that select this type. */
export function subscriptionNames(type: string): string[] {
  return [
    type,
    ...Object.entries(ALIASES)
      .filter(([, target]) => target === type)
      .map(([alias]) => alias),
  ];
}
