// The monthly apiRequests quota (docs/api.md#monthly-api-request-quota): API-key requests, and events
// published with an access token (POST …/events, which stores what it is sent), per organization. The
// count is kept with the audit entries (in audit_log_counters, audit/counters.ts: the key requests'
// entries and the publishes'); each instance reads it at most every 2 s and adds what it let through
// since, so the check costs no query on the hot path. Across instances it can overshoot by what
// they let through within those 2 s.
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { AppError } from '../lib/errors.js';
import { apiRequestsInMonth } from './audit/counters.js';
import type { Clock } from '../lib/clock.js';
import { organizations } from '../db/tables/organizations.js';
import { PLANS } from './plans.js';

const REFRESH_MS = 2000;

export const periodOf = (d: Date) => d.toISOString().slice(0, 7);

export function createQuotaGuard(db: Db, clock: Clock) {
  const state = new Map<string, { period: string; used: number; limit: number | null; at: number }>();

  async function load(orgId: string, period: string) {
    const [org] = await db.select({ plan: organizations.plan }).from(organizations).where(eq(organizations.id, orgId));
    const used = await apiRequestsInMonth(db, orgId, period);
    const s = { period, used, limit: PLANS[org?.plan ?? 'free'].limits.apiRequests, at: Date.now() };
    state.set(orgId, s);
    return s;
  }

  return {
    /** Throws 429 QUOTA_EXCEEDED when the organization has used its month; otherwise counts one. */
    async take(orgId: string): Promise<void> {
      const now = clock.now();
      const period = periodOf(now);
      let s = state.get(orgId);
      if (!s || s.period !== period || Date.now() - s.at > REFRESH_MS) s = await load(orgId, period);
      if (s.limit !== null && s.used >= s.limit) {
        const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
        const retryAfter = Math.max(1, Math.ceil((next - now.getTime()) / 1000));
        throw new AppError(
          'QUOTA_EXCEEDED',
          'Monthly API request quota exceeded',
          `The plan allows ${s.limit} API requests per month (API-key requests and published events)`,
          {
            'Retry-After': String(retryAfter),
          },
        );
      }
      s.used++;
    },
    /** After a plan change: read it again on the next request. */
    forget(orgId: string) {
      state.delete(orgId);
    },
  };
}

export type QuotaGuard = ReturnType<typeof createQuotaGuard>;
