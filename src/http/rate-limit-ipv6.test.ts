// The per-IP rate-limit buckets (docs/api.md#rate-limits) key an IPv6 client by its /64: one host is
// handed a whole /64, so keyed by the full address it would get 2^64 buckets. An IPv4-mapped address
// (::ffff:a.b.c.d, as a dual-stack socket reports IPv4 clients) stays its IPv4 address: all IPv4
// clients are in ::ffff:0:0/96, one /64, and must not share one bucket.
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { json } from '../../test/harness.js';
import { t, useApp } from '../../test/fixtures/app.js';

useApp({ env: { RATE_LIMIT_AUTH_PER_MIN: '3', RATE_LIMIT_ANON_PER_MIN: '3' } });

const auth = (ip: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/auth/resend-verification',
    payload: { email: 'nobody@example.com' },
    remoteAddress: ip,
  });
const anonymous = (ip: string) => t.request({ method: 'GET', url: '/api/v1/users/me', remoteAddress: ip });

function expectLimited(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(429);
  expect(json(res).error.code).toBe('RATE_LIMIT_EXCEEDED');
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
}

async function spend(request: (ip: string) => Promise<LightMyRequestResponse>, ips: string[], status: number) {
  for (const ip of ips) {
    const res = await request(ip);
    expect(res.statusCode, `${ip}: ${res.body}`).toBe(status);
  }
}

describe('IPv6 clients share the bucket of their /64', () => {
  it('/auth/*: three addresses of one /64 spend one bucket; the /64 next door has its own', async () => {
    await spend(auth, ['2001:db8:10:1::1', '2001:db8:10:1::2', '2001:db8:10:1:ffff:ffff:ffff:fffe'], 200);
    expectLimited(await auth('2001:db8:10:1:1234:5678:9abc:def0'));
    expect((await auth('2001:db8:10:2::1')).statusCode).toBe(200);
    expect((await auth('2001:db8:11:1::1')).statusCode).toBe(200);
  });

  it('anonymous requests: the same, whatever way the address is written', async () => {
    await spend(
      anonymous,
      ['2001:db8:20:1::1', '2001:0DB8:0020:0001:0000:0000:0000:0002', '2001:db8:20:1:0:0:0:3'],
      401,
    );
    expectLimited(await anonymous('2001:db8:20:1:8000::9'));
    expect((await anonymous('2001:db8:20:0::1')).statusCode).toBe(401);
  });
});

describe('IPv4-mapped addresses stay IPv4', () => {
  it('::ffff:a.b.c.d and a.b.c.d share one bucket', async () => {
    await spend(auth, ['::ffff:203.0.113.5', '203.0.113.5', '::FFFF:203.0.113.5'], 200);
    expectLimited(await auth('203.0.113.5'));
    expectLimited(await auth('::ffff:cb00:7105'));
  });

  it('two IPv4 clients seen as mapped addresses (one /64 between them) keep their own buckets', async () => {
    await spend(auth, ['::ffff:198.51.100.7', '::ffff:198.51.100.7', '::ffff:198.51.100.7'], 200);
    expectLimited(await auth('::ffff:198.51.100.7'));
    expect((await auth('::ffff:198.51.100.8')).statusCode).toBe(200);
    expect((await auth('198.51.100.9')).statusCode).toBe(200);
  });
});
