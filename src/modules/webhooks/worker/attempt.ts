// One delivery attempt: decide whether it is still wanted (endpoint deleted or disabled since the
// event), open the signing secret (and the previous one while a rotation's grace lasts), sign the
// body, send it through the sender (which enforces the SSRF rules and the timeout) and classify what
// came back with the retry rule. Nothing here writes to the database: the result goes to the recorder.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { Infra } from '../../../infra.js';
import { DecryptError, decrypt, hmacSha256Hex } from '../../../lib/secrets.js';
import type { ClaimedDelivery } from './claim.js';
import { afterAttempt, type Outcome } from './retry.js';
import type { createWebhookSender, SendResult } from './sender.js';

type Secret = string | KeyObject;

/**
 * `t=<unix>,v1=<hex>`: HMAC-SHA256 keyed with the whole `whsec_…` secret over `<t>.<body>` (Stripe's
 * scheme). Given several secrets (a rotation's grace: the new one, then the previous one), one `v1`
 * each, in that order: a receiver verifies with either (Stripe's libraries accept any matching v1).
 */
export function signatureHeader(secrets: Secret | readonly Secret[], timestampS: number, body: string): string {
  const signed = `${timestampS}.${body}`;
  const mac = (s: Secret) =>
    typeof s === 'string' ? hmacSha256Hex(s, signed) : createHmac('sha256', s).update(signed).digest('hex');
  const list = (Array.isArray(secrets) ? secrets : [secrets]) as readonly Secret[];
  return `t=${timestampS}${list.map((s) => `,v1=${mac(s)}`).join('')}`;
}

export type AttemptResult =
  /** No request was made and none will be: the delivery ends `canceled` with this reason. */
  | { canceled: string; at: Date }
  /** Attempt `number` was made (or failed before sending); `outcome` says what follows it. */
  | { canceled: null; number: number; sent: SendResult; outcome: Outcome; at: Date };

/** The stored lastError of an attempt whose secret no key of ENCRYPTION_KEY opens. */
const unreadableSecret = (reason: DecryptError['reason']) =>
  reason === 'no-key'
    ? "the endpoint's signing secret cannot be decrypted with ENCRYPTION_KEY: it was encrypted with a key the list no longer holds (list the old key after the new one, or rotate the endpoint's secret)"
    : "the endpoint's signing secret cannot be decrypted with ENCRYPTION_KEY: the stored value is damaged (rotate the endpoint's secret)";

type Sender = Pick<ReturnType<typeof createWebhookSender>, 'send'>;

export function createAttempter(deps: Pick<Infra, 'config' | 'clock' | 'logger'>, sender: Sender) {
  const { retryDelaysS } = deps.config.webhook;
  // Decrypted secrets (as HMAC keys) by ciphertext: decrypting for every attempt would cost more
  // than signing, and a rotation writes a new ciphertext, so the new secret is used at once.
  const secrets = new Map<string, KeyObject>();

  function secretOf(enc: string): KeyObject {
    let secret = secrets.get(enc);
    if (secret === undefined) {
      secret = createSecretKey(Buffer.from(decrypt(deps.config.encryptionKeys, enc), 'utf8'));
      if (secrets.size >= 10_000) secrets.clear();
      secrets.set(enc, secret);
    }
    return secret;
  }

  // Previous secrets already found unreadable: logged once, then skipped.
  const unreadablePrevious = new Set<string>();

  /**
   * The secret a rotation replaced, while its grace lasts at `nowMs` (the signature's time). One no
   * key of ENCRYPTION_KEY opens does not stop the delivery: it is signed with the current secret
   * alone (docs/decisions.md, "Rotation with a grace period").
   */
  function previousOf(d: ClaimedDelivery, nowMs: number): KeyObject | null {
    const enc = d.previousSecretEnc;
    if (
      enc === null ||
      d.previousSecretExpiresAt === null ||
      d.previousSecretExpiresAt.getTime() <= nowMs ||
      unreadablePrevious.has(enc)
    )
      return null;
    try {
      return secretOf(enc);
    } catch (err) {
      if (!(err instanceof DecryptError)) throw err;
      if (unreadablePrevious.size >= 10_000) unreadablePrevious.clear();
      unreadablePrevious.add(enc);
      deps.logger.warn(
        { endpointId: d.endpointId, reason: err.reason },
        "the endpoint's previous signing secret cannot be decrypted with ENCRYPTION_KEY: deliveries are signed with the current secret only",
      );
      return null;
    }
  }

  function attempted(d: ClaimedDelivery, sent: SendResult): AttemptResult {
    const at = deps.clock.now();
    const number = d.attempts + 1;
    return {
      canceled: null,
      number,
      sent,
      outcome: afterAttempt(number, sent.status, retryDelaysS, at, sent.retryAfter ?? null),
      at,
    };
  }

  return async function attempt(d: ClaimedDelivery): Promise<AttemptResult> {
    // The endpoint changed after the event was recorded: nothing is sent (see docs/decisions.md).
    if (d.deleted || d.url === null || d.secretEnc === null)
      return { canceled: 'endpoint deleted', at: deps.clock.now() };
    if (!d.isActive) return { canceled: 'endpoint disabled', at: deps.clock.now() };
    let secret: KeyObject;
    try {
      secret = secretOf(d.secretEnc);
    } catch (err) {
      if (!(err instanceof DecryptError)) throw err;
      // Encrypted with a key ENCRYPTION_KEY no longer lists (or damaged): nothing is sent, and the
      // attempt fails like an unreachable endpoint, so the delivery is retried (another instance in
      // the middle of a rolling key change may still open it) and then ends `failed`, instead of
      // going back to the queue forever.
      const error = unreadableSecret(err.reason);
      deps.logger.error({ deliveryId: d.id, endpointId: d.endpointId }, error);
      return attempted(d, { status: null, body: null, error, durationMs: 0 });
    }
    // The body keeps a fixed key order (id, type, timestamp, data) so that every attempt of a
    // delivery, and every delivery of the event, sends the same bytes: all read from the event row.
    // The signature's t is the time of this attempt; during a rotation's grace the previous secret
    // signs too, after the current one.
    const e = d.event;
    const body = JSON.stringify({ id: d.eventId, type: e.type, timestamp: e.timestamp, data: e.data });
    const nowMs = deps.clock.now().getTime();
    const t = Math.floor(nowMs / 1000);
    const previous = previousOf(d, nowMs);
    const sent = await sender.send(d.url, body, {
      'content-type': 'application/json',
      'user-agent': 'Tenantry-Webhooks/1.0',
      'x-webhook-signature': signatureHeader(previous ? [secret, previous] : secret, t, body),
      'x-webhook-event': d.eventType,
      'x-webhook-delivery-id': d.id,
    });
    return attempted(d, sent);
  };
}

export type Attempter = ReturnType<typeof createAttempter>;
