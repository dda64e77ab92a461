// @tenantry/client/webhooks against the server's own signer (the delivery worker's signatureHeader):
// a delivery it signs verifies; a tampered body, another secret, an old or future timestamp and a
// malformed header are refused.
import { describe, expect, it } from 'vitest';
import { constructWebhookEvent, verifyWebhookSignature, WebhookSignatureError } from '../client/src/webhooks.js';
import { signatureHeader } from '../src/modules/webhooks/worker/attempt.js';
import { randomHex } from '../src/lib/secrets.js';

// A secret as the service makes them (webhooks/service.ts): whsec_ and 64 hex characters.
const newWebhookSecret = () => `whsec_${randomHex(32)}`;
const secret = newWebhookSecret();
const now = 1_772_366_400; // 2026-03-01T12:00:00Z
const body = JSON.stringify({
  type: 'project.created',
  timestamp: '2026-03-01T12:00:00.000Z',
  data: { projectId: 'prj_1', organizationId: 'org_1', name: 'Café ☕' },
});
const header = signatureHeader(secret, now, body);

describe('verifyWebhookSignature', () => {
  it('accepts a delivery signed by the server, as text or as bytes', () => {
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(body, header, secret, { now })).toBe(true);
    expect(verifyWebhookSignature(Buffer.from(body, 'utf8'), header, secret, { now })).toBe(true);
    expect(verifyWebhookSignature(body, [header], secret, { now: now + 299 })).toBe(true);
  });

  it('refuses a tampered body', () => {
    expect(verifyWebhookSignature(body.replace('prj_1', 'prj_2'), header, secret, { now })).toBe(false);
    expect(verifyWebhookSignature(`${body} `, header, secret, { now })).toBe(false);
  });

  it('refuses another secret', () => {
    expect(verifyWebhookSignature(body, header, newWebhookSecret(), { now })).toBe(false);
    expect(verifyWebhookSignature(body, header, '', { now })).toBe(false);
  });

  it('refuses a timestamp outside the tolerance window (300 s by default), old or future', () => {
    expect(verifyWebhookSignature(body, header, secret, { now: now + 301 })).toBe(false);
    expect(verifyWebhookSignature(body, header, secret, { now: now - 301 })).toBe(false);
    expect(verifyWebhookSignature(body, header, secret, { now: now + 301, toleranceSeconds: 600 })).toBe(true);
    // The timestamp is signed: moving it to now breaks the signature.
    const moved = header.replace(/^t=\d+/, `t=${now + 3600}`);
    expect(verifyWebhookSignature(body, moved, secret, { now: now + 3600 })).toBe(false);
    // Against the real clock, a signature made now verifies and one an hour old does not.
    const fresh = Math.floor(Date.now() / 1000);
    expect(verifyWebhookSignature(body, signatureHeader(secret, fresh, body), secret)).toBe(true);
    expect(verifyWebhookSignature(body, signatureHeader(secret, fresh - 3600, body), secret)).toBe(false);
  });

  it('refuses a missing or malformed header, and accepts any matching v1 among several', () => {
    for (const bad of [
      undefined,
      null,
      '',
      'v1=abc',
      `t=${now}`,
      `t=soon,${header.split(',')[1]}`,
      header.replace(/v1=[0-9a-f]+/, 'v1=zz'),
    ]) {
      expect(verifyWebhookSignature(body, bad, secret, { now })).toBe(false);
    }
    const other = signatureHeader(newWebhookSecret(), now, body).split(',')[1];
    expect(verifyWebhookSignature(body, `${header},${other}`, secret, { now })).toBe(true);
    expect(verifyWebhookSignature(body, `t=${now},${other}`, secret, { now })).toBe(false);
  });

  it("accepts a rotation's header (one v1 per secret, the new one first) with either secret, and no other", () => {
    const previous = newWebhookSecret();
    const both = signatureHeader([secret, previous], now, body);
    expect(both).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(both.startsWith(header)).toBe(true);
    expect(verifyWebhookSignature(body, both, secret, { now })).toBe(true);
    expect(verifyWebhookSignature(body, both, previous, { now })).toBe(true);
    expect(verifyWebhookSignature(body, both, newWebhookSecret(), { now })).toBe(false);
  });
});

describe('constructWebhookEvent', () => {
  it('answers the verified event, typed', () => {
    const event = constructWebhookEvent(body, header, secret, { now });
    expect(event.type).toBe('project.created');
    expect(event.data).toEqual({ projectId: 'prj_1', organizationId: 'org_1', name: 'Café ☕' });
  });

  it('throws WebhookSignatureError, saying why, when the delivery does not verify', () => {
    expect(() => constructWebhookEvent(body, header, secret, { now: now + 1000 })).toThrow(WebhookSignatureError);
    expect(() => constructWebhookEvent(body, header, secret, { now: now + 1000 })).toThrow(/tolerance/);
    expect(() => constructWebhookEvent(body, header, 'whsec_other', { now })).toThrow(/No signature matches/);
    expect(() => constructWebhookEvent(body, undefined, secret, { now })).toThrow(/No X-Webhook-Signature/);
  });
});
