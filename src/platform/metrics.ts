// What the process counts for GET /metrics (http/metrics.ts) that is not an HTTP request: the
// outcome of each webhook attempt, counted by the delivery worker, and the mails the cap held back. One registry per Infra (never
// prom-client's global one): the tests build many apps in one process, and the app's own registry
// (request durations, gauges, process defaults) is merged with this one when the route is made.
import { Counter, Registry } from 'prom-client';
import { MAIL_KINDS, type MailKind } from './mail-cap.js';

/** An attempt's result as the worker records it: `pending` after an attempt means it will be retried. */
export type DeliveryResult = 'delivered' | 'pending' | 'failed' | 'canceled';
export type DeliveryOutcome = 'delivered' | 'retried' | 'failed' | 'canceled';

const OUTCOMES: readonly DeliveryOutcome[] = ['delivered', 'retried', 'failed', 'canceled'];

export interface ServiceMetrics {
  readonly registry: Registry;
  /** One attempt's result (or a cancellation) has been handed to the recorder. */
  webhookResult(result: DeliveryResult): void;
  /** A mail of `kind` was not sent: its address had its 5 of the hour (platform/mail-cap.ts). */
  mailCapped(kind: MailKind): void;
}

export function createServiceMetrics(): ServiceMetrics {
  const registry = new Registry();
  const deliveries = new Counter({
    name: 'tenantry_webhook_deliveries_total',
    help: 'Webhook attempt results recorded by this process, by outcome (retried: failed, another attempt is scheduled)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  // Every outcome is exported from the start (at 0), so a rate() over it never lacks a series.
  for (const outcome of OUTCOMES) deliveries.inc({ outcome }, 0);
  const capped = new Counter({
    name: 'tenantry_mails_capped_total',
    help: 'Mails not sent because their address had its 5 of that kind in the last hour, by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  for (const kind of MAIL_KINDS) capped.inc({ kind }, 0);
  return {
    registry,
    webhookResult(result) {
      deliveries.inc({ outcome: result === 'pending' ? 'retried' : result });
    },
    mailCapped(kind) {
      capped.inc({ kind });
    },
  };
}
