// Plans and their limits, in one place (docs/api.md#plans-and-limits). null means unlimited.
import { eq } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import { AppError } from '../lib/errors.js';
import { organizations, type PlanName } from '../db/tables/organizations.js';

export interface PlanLimits {
  members: number | null;
  apiRequests: number | null;
  storage: number | null;
  apiKeys: number | null;
  webhookEndpoints: number | null;
}

export const PLANS: Record<PlanName, { name: string; limits: PlanLimits }> = {
  free: {
    name: 'Free',
    limits: { members: 3, apiRequests: 10_000, storage: 1_073_741_824, apiKeys: 1, webhookEndpoints: 1 },
  },
  pro: {
    name: 'Pro',
    limits: { members: 25, apiRequests: 100_000, storage: 10_737_418_240, apiKeys: 10, webhookEndpoints: 10 },
  },
  enterprise: {
    name: 'Enterprise',
    limits: { members: null, apiRequests: null, storage: null, apiKeys: 50, webhookEndpoints: null },
  },
};

/**
 * Locks the organization row for the rest of the transaction and returns its plan's limits, so
 * parallel requests that check a limit and then add a row are serialized and cannot overshoot.
 * NO KEY UPDATE: inserts that only reference the organization (events, audit entries) still proceed.
 */
export async function lockPlanLimits(tx: Tx, organizationId: string): Promise<PlanLimits> {
  const [org] = await tx
    .select({ plan: organizations.plan })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .for('no key update');
  return PLANS[org?.plan ?? 'free'].limits;
}

export function assertWithinLimit(limit: number | null, current: number, what: string) {
  if (limit !== null && current >= limit) {
    throw new AppError(
      'PLAN_LIMIT_EXCEEDED',
      `Plan limit reached: ${limit} ${what}`,
      `Upgrade the organization's plan to add more ${what}`,
    );
  }
}
