// What every browser test file starts: the real API listening on a free port of 127.0.0.1, serving
// web/dist, with APP_ORIGIN and PUBLIC_API_URL set to its own origin (so mailed links and social
// sign-in come back to it); the local SMTP sink (mailed links), the local OAuth server (Google and
// GitHub), the inline webhook worker and a webhook receiver; and Chromium (Debian's) driven by
// playwright-core, one fresh context per person.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { FakeClock } from '../../src/lib/clock.js';
import { createDeliveryWorker } from '../../src/modules/webhooks/worker/index.js';
import { createTestApp, type TestApp } from '../../test/harness.js';
import { startOAuthServer, type Identity, type OAuthTestServer } from '../../test/oauth-server.js';

/** The wall clock, where the harness takes a FakeClock: a browser's cookies and pages live in real time. */
class WallClock extends FakeClock {
  override now(): Date {
    return new Date();
  }
}

/** Debian's Chromium: CHROMIUM_PATH, else `chromium` found on PATH (.ci/run installs it when missing). */
export const CHROMIUM =
  process.env.CHROMIUM_PATH ??
  (process.env.PATH ?? '')
    .split(path.delimiter)
    .map((dir) => path.join(dir, 'chromium'))
    .find((file) => fs.existsSync(file)) ??
  '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface WebTest {
  t: TestApp;
  origin: string;
  oauth: OAuthTestServer;
  browser: Browser;
  /** URL of the local webhook receiver (answers 200), and the bodies it received. */
  receiver: { url: string; received: string[] };
  /** A new person: a fresh browser context (its own cookies) and a page, at `width` px (desktop by default). */
  person(width?: number): Promise<{ context: BrowserContext; page: Page }>;
  /** The provider signs the browser in as `who` when it is next sent to the consent page. */
  signInAtProviderAs(who: Identity): void;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function startReceiver() {
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * Starts everything before the file's tests and stops it after; the returned object fills in then.
 * `env` is added to (or replaces) the service's environment.
 */
export function useWebApp(env: Record<string, string> = {}): WebTest {
  const w = {} as WebTest;
  const contexts: BrowserContext[] = [];
  let stop: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    const oauth = await startOAuthServer();
    const receiver = await startReceiver();
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const t = await createTestApp({
      clock: new WallClock(),
      env: {
        APP_ORIGIN: origin,
        PUBLIC_API_URL: origin,
        PORT: String(port),
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        ...oauth.googleEnv,
        ...oauth.githubEnv,
        ...env,
      },
    });
    await t.app.listen({ host: '127.0.0.1', port });
    const worker = createDeliveryWorker(t.deps);
    await worker.start();
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    stop = [() => browser.close(), () => worker.stop(), () => t.close(), () => oauth.close(), () => receiver.close()];
    Object.assign(w, {
      t,
      origin,
      oauth,
      browser,
      receiver: { url: receiver.url, received: receiver.received },
      async person(width = 1280) {
        const context = await browser.newContext({
          baseURL: origin,
          viewport: { width, height: width < 600 ? 812 : 900 },
          locale: 'en-GB',
          timezoneId: 'UTC',
        });
        contexts.push(context);
        return { context, page: await context.newPage() };
      },
      signInAtProviderAs(who: Identity) {
        // The local provider's consent page answers the browser's visit at once with the redirect
        // back; the identity it signs in is told to it beforehand.
        oauth.signInNextAs(who);
      },
    } satisfies Partial<WebTest>);
  });

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    for (const s of stop) await s().catch(() => {});
  });
  return w;
}
