// The web app (web/) is served by this process from web/dist. On a fresh clone, or after its sources
// changed, `npm start` builds it first with Vite, programmatically, logging one line; the build goes
// to a temporary directory that replaces web/dist when complete, so processes starting together
// never serve a half-written one. Without Vite installed (an install without dev packages) a
// missing build is reported and the API starts without the pages.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { build as viteBuild } from 'vite';

export const WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../web');
const CLIENT_SRC = path.resolve(WEB_ROOT, '../client/src');
const INPUTS = ['index.html', 'vite.config.ts', 'package.json', 'src', 'public'];

interface Log {
  info(msg: string): void;
  warn(msg: string): void;
}

function newest(file: string): number {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of fs.readdirSync(file)) latest = Math.max(latest, newest(path.join(file, entry)));
  return latest;
}

/** Why web/dist must be built, or null when it is up to date (or there is no web app here). */
export function webBuildReason(root = WEB_ROOT): string | null {
  if (!fs.existsSync(path.join(root, 'index.html'))) return null;
  const built = newest(path.join(root, 'dist', 'index.html'));
  if (built === 0) return 'no build yet';
  const sources = Math.max(...INPUTS.map((p) => newest(path.join(root, p))), newest(CLIENT_SRC));
  return sources > built ? 'its sources changed' : null;
}

/** Builds web/dist when it is missing or older than its sources. */
export async function ensureWebBuild(log: Log, root = WEB_ROOT): Promise<void> {
  const reason = webBuildReason(root);
  if (!reason) return;
  let build: typeof viteBuild;
  try {
    ({ build } = await import('vite'));
  } catch {
    log.warn(
      `web/dist needs a build (${reason}) but Vite is not installed: run \`npm run web:build\`; the API starts without the pages`,
    );
    return;
  }
  log.info(`building the web app into web/dist (${reason}): about half a minute`);
  const started = Date.now();
  const dist = path.join(root, 'dist');
  const temp = path.join(root, `.dist-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await build({ root, logLevel: 'error', build: { outDir: temp, emptyOutDir: true } });
    fs.rmSync(dist, { recursive: true, force: true });
    try {
      fs.renameSync(temp, dist);
    } catch {
      // Another process put its build there first: it is just as fresh.
    }
    log.info(`web app built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}
