// Auto-disable (docs/api.md#auto-disable): an endpoint whose every attempt has failed for
// WEBHOOK_DISABLE_AFTER_H hours is turned off. The worker's recorder finds such endpoints as it
// writes results (worker/recorder.ts); this turns each off in one transaction: isActive false,
// disabledReason 'failing', its pending deliveries failed (recover can queue them again once it is
// back on), and the event webhook_endpoint.disabled for the organization's other endpoints. After
// the commit its owners and admins are mailed. The update is guarded on the endpoint still being
// active and still failing, so of several workers finding it at once one turns it off, and an
// endpoint that answered or was changed by a person meanwhile stays as it is.
import { and, eq, inArray, isNull, lte, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import { memberships, organizations } from '../../db/tables/organizations.js';
import { users } from '../../db/tables/users.js';
import { webhookDeliveries, webhookEndpoints } from '../../db/tables/webhooks.js';
import { transaction } from '../../db/transaction.js';
import { recordEvent } from '../../platform/outbox.js';
import { sendLater } from '../../providers/mail/mailer.js';
import { endpointDisabledMail } from '../../providers/mail/templates.js';
import type { FailingEndpoint } from './worker/recorder.js';

type Deps = Pick<Infra, 'db' | 'clock' | 'config' | 'mailer' | 'logger'>;

/** Turns off the endpoints that are still active and still failing; answers how many it turned off. */
export async function disableFailing(deps: Deps, endpoints: FailingEndpoint[]): Promise<number> {
  let disabled = 0;
  for (const { organizationId, endpointId } of endpoints) {
    if (await disableOne(deps, organizationId, endpointId)) disabled++;
  }
  return disabled;
}

async function disableOne(deps: Deps, organizationId: string, endpointId: string): Promise<boolean> {
  const hours = deps.config.webhook.disableAfterH;
  const now = deps.clock.now();
  const cutoff = new Date(now.getTime() - hours * 3_600_000);
  return transaction(deps.db, async (tx, afterCommit) => {
    const [e] = await tx
      .update(webhookEndpoints)
      .set({ isActive: false, disabledReason: 'failing', updatedAt: now })
      .where(
        and(
          eq(webhookEndpoints.organizationId, organizationId),
          eq(webhookEndpoints.id, endpointId),
          eq(webhookEndpoints.isActive, true),
          isNull(webhookEndpoints.deletedAt),
          lte(webhookEndpoints.failingSince, cutoff),
        ),
      )
      .returning();
    if (!e) return false;
    const error = `endpoint turned off: every attempt failed for ${hours} hours`;
    await tx
      .update(webhookDeliveries)
      .set({ status: 'failed', lastError: error, nextRetryAt: null, lockedUntil: null, lockedBy: null, updatedAt: now })
      .where(
        and(
          eq(webhookDeliveries.organizationId, organizationId),
          eq(webhookDeliveries.endpointId, endpointId),
          eq(webhookDeliveries.status, 'pending'),
        ),
      );
    await recordEvent(deps, tx, organizationId, 'webhook_endpoint.disabled', {
      webhookId: e.id,
      organizationId,
      url: e.url,
      reason: 'failing',
      failingSince: e.failingSince!.toISOString(),
    });
    const admins = await tx
      .select({ email: users.email, orgName: organizations.name })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(
        and(
          eq(memberships.organizationId, organizationId),
          inArray(memberships.role, ['owner', 'admin']),
          sql`${users.isActive}`,
        ),
      );
    afterCommit(async () => {
      const link = `${deps.config.appOrigin}/organizations/${organizationId}/webhooks/${endpointId}`;
      for (const a of admins)
        sendLater(
          deps.mailer,
          deps.logger,
          endpointDisabledMail(deps.config.branding, a.email, a.orgName, e.url, hours, link),
        );
      deps.logger.warn(
        { organizationId, endpointId, failingSince: e.failingSince },
        'webhook endpoint turned off: every attempt failed',
      );
    });
    return true;
  });
}
