// Verifying Tenantry webhook deliveries (for servers: node:crypto). Each delivery carries
// `X-Webhook-Signature: t=<unix seconds>,v1=<hex>`, where v1 is the HMAC-SHA256 of `<t>.<raw body>`
// keyed with the endpoint's whole secret (`whsec_…`, as UTF-8 bytes): Stripe's scheme
// (docs/api.md#webhook-signatures). During a secret rotation's grace the header carries one v1 per
// secret (`t=…,v1=<new>,v1=<old>`): any v1 that matches verifies, so either secret works. Verify
// against the raw body exactly as received, never re-serialized JSON.
//
//   import { constructWebhookEvent } from '@tenantry/client/webhooks';
//   const event = constructWebhookEvent(rawBody, req.headers['x-webhook-signature'], process.env.TENANTRY_WEBHOOK_SECRET);
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from './schema.js';

/** The body of a delivery: `{type, timestamp, data}` (docs/api.md#event-payloads). */
export type WebhookEvent = components['schemas']['WebhookEvent'];

export const SIGNATURE_HEADER = 'x-webhook-signature';
/** Signatures older (or further in the future) than this are refused, against replays. */
export const DEFAULT_TOLERANCE_S = 300;

export interface VerifyOptions {
  /** Seconds either side of now a signature's `t` may be; 300 by default. */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (tests); the clock otherwise. */
  now?: number;
}

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

function parseHeader(header: string): { t: number; signatures: string[] } | null {
  let t: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') t = /^\d{1,12}$/.test(value) ? Number(value) : null;
    else if (key === 'v1' && HEX_SHA256.test(value)) signatures.push(value);
  }
  return t === null || signatures.length === 0 ? null : { t, signatures };
}

/** Why the delivery does not verify, or null when it does. */
function check(
  payload: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string,
  options: VerifyOptions,
): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return 'No X-Webhook-Signature header';
  if (!secret) return 'No webhook secret given';
  const parsed = parseHeader(value);
  if (!parsed) return 'The X-Webhook-Signature header is malformed';
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - parsed.t) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_S))
    return 'The signature timestamp is outside the tolerance window';
  const expected = createHmac('sha256', secret).update(`${parsed.t}.`).update(payload).digest();
  // Constant time: every candidate is compared in full, whatever the bytes.
  let match = false;
  for (const signature of parsed.signatures) {
    if (timingSafeEqual(Buffer.from(signature, 'hex'), expected)) match = true;
  }
  return match ? null : 'No signature matches the payload and secret';
}

/** Whether `payload` (the raw body) was signed with `secret` within the tolerance window. */
export function verifyWebhookSignature(
  payload: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string,
  options: VerifyOptions = {},
): boolean {
  return check(payload, header, secret, options) === null;
}

/** The verified event of a delivery; throws WebhookSignatureError when it does not verify. */
export function constructWebhookEvent(
  payload: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string,
  options: VerifyOptions = {},
): WebhookEvent {
  const problem = check(payload, header, secret, options);
  if (problem) throw new WebhookSignatureError(problem);
  const text = typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8');
  return JSON.parse(text) as WebhookEvent;
}
