// Starting the service as an operator does (`node --import tsx src/main.ts` on a real port, the
// embedded database in a temporary DATA_DIR) for the process tests (process*.test.ts), and killing
// what is left of it after the file.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// A start is ~3 s on an idle machine (tsx, then PGlite's initdb) but a minute or more on a loaded one.
export const START_TIMEOUT_MS = 180_000;

export interface Proc {
  child: ChildProcess;
  port: number;
  base: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export const children: ChildProcess[] = [];
export const dirs: string[] = [];

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

export function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-proc-'));
  dirs.push(d);
  return d;
}

/** Starts the service; nothing of the test runner's environment leaks in but PATH and HOME. */
export async function start(env: Record<string, string>): Promise<Proc> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.tmpdir(),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, port, base: `http://127.0.0.1:${port}`, output: () => out, exited };
}

export async function waitHealthy(p: Proc): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exited = false;
  void p.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`the service exited during start:\n${p.output()}`);
    try {
      const res = await fetch(`${p.base}/health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`the service did not become healthy in ${START_TIMEOUT_MS} ms:\n${p.output()}`);
}

export async function waitFor(cond: () => boolean, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function post(p: Proc, url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${p.base}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export const withTimeout = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))]);

/** Kills the file's processes still running and removes its directories after it: call once at the top of each test file. */
export function useProcesses() {
  afterAll(async () => {
    for (const c of children) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await new Promise((r) => c.once('exit', r));
      }
    }
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
}
