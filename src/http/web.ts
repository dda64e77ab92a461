// The web app (docs/web.md): every path outside the API's own (/api/v1, /docs, /health,
// /ready, /metrics) belongs to it. Its build, web/dist/, is served from here: a file that exists is
// sent as is; any other GET for a page (an Accept naming text/html, not a file name) gets index.html, so the
// app's own router resolves /sign-in, /magic-link?token=… and the other pages mailed links point at. Files under /assets/ are
// content-hashed by the build and cached for a year; everything else is revalidated (no-cache).
// Without a build, those pages answer 503 with a page that says how to build it.
//
// This is the root not-found handler: Fastify reaches it only when no route matched, and an unknown
// /api/v1 path never does (that prefix has its own handler, the JSON 404 of the API).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../lib/errors.js';

/** Where the web app's build lands (web/ at the repository root, built with Vite's defaults). */
export const WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const API_PATHS = /^\/(?:api\/v1|docs|health|ready|metrics)(?:[/?#]|$)/;
const ASSETS = /^\/assets\//;

/** Whether a request path (query included or not) belongs to the web app rather than to the API. */
export const isWebPath = (url: string) => !API_PATHS.test(url);

/**
 * The Content-Security-Policy of the web app's HTML: its scripts, styles, images and API calls come
 * from this origin only (no inline script or style), data: images, and no framing.
 */
export const CSP_APP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

const HASHED_CACHE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};

// No style and no script: the page lives under the web app's policy (CSP_APP).
const NOT_BUILT = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Tenantry: the web app is not built</title></head>
<body>
<h1>The web app is not built</h1>
<p>This service serves its web app from <code>web/dist/</code>, which has no <code>index.html</code> yet. Build it from the repository's root:</p>
<pre>npm install
npm run web:build</pre>
<p>then reload this page; no restart is needed. The API answers under <code>/api/v1</code>, its documentation is at <a href="/docs">/docs</a>.</p>
</body>
</html>
`;

interface Found {
  file: string;
  stat: { size: number; mtime: Date; mtimeMs: number };
}

/** The regular file of the build at a URL path; null for anything else (a directory, a dotfile, `..`). */
async function findFile(root: string, urlPath: string): Promise<Found | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  const segments = decoded.split('/').filter((s) => s !== '');
  if (decoded.includes('\0') || segments.some((s) => s.startsWith('.'))) return null;
  const file = path.join(root, ...segments);
  if (!file.startsWith(root + path.sep)) return null;
  try {
    const stat = await fs.stat(file);
    return stat.isFile() ? { file, stat } : null;
  } catch {
    return null;
  }
}

async function sendFile(request: FastifyRequest, reply: FastifyReply, found: Found, cacheControl: string) {
  const etag = `W/"${found.stat.size.toString(16)}-${Math.floor(found.stat.mtimeMs).toString(16)}"`;
  // The type goes on a 304 too: a browser merges a 304's headers into the cached response, and the
  // security headers pick the Content-Security-Policy by type (an HTML page's must stay CSP_APP, or
  // a reload would block the app's own scripts).
  reply
    .header('cache-control', cacheControl)
    .header('etag', etag)
    .header('last-modified', found.stat.mtime.toUTCString())
    .type(TYPES[path.extname(found.file).toLowerCase()] ?? 'application/octet-stream');
  const match = request.headers['if-none-match'];
  if (typeof match === 'string' && match.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*'))
    return reply.code(304).send();
  const body = await fs.readFile(found.file);
  return reply.code(200).send(body);
}

/**
 * Whether an Accept header names text/html (with a weight above 0): a browser's navigation does;
 * curl's `*\/*`, `text/*`, a JSON client or no header at all do not.
 */
function namesHtml(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    if (type !== 'text/html') return false;
    const q = params.find((p) => /^q\s*=/.test(p));
    return q === undefined || Number(q.slice(q.indexOf('=') + 1)) > 0;
  });
}

/**
 * Whether a GET is for a page: its Accept names text/html (a browser's navigation) and its last
 * segment is not a file name (`favicon.ico`, a missing script). Anything else (an API client that
 * lost its /api/v1 prefix, curl, a request with no Accept) gets the JSON 404, so a wrong URL never
 * looks like a route that answered 200. The build's existing files are not pages: they go to any
 * Accept, as browsers fetch scripts, styles and images with `*\/*` or `image/*`.
 */
function wantsPage(request: FastifyRequest, urlPath: string): boolean {
  const last = urlPath.slice(urlPath.lastIndexOf('/') + 1);
  return namesHtml(request.headers.accept) && !/\.[A-Za-z0-9]+$/.test(last);
}

/**
 * What the pages need to know of this service's configuration, served at /app-config.json: the
 * sign-in methods it offers, so that no button leads to a route that answers 404, and the product's
 * branding (APP_NAME, APP_LOGO_URL, APP_PRIMARY_COLOR, APP_SUPPORT_EMAIL).
 */
export interface WebAppConfig {
  signIn: { password: boolean; magicLink: boolean; google: boolean; github: boolean };
  brand: { name: string; logoUrl: string | null; primaryColor: string; supportEmail: string | null };
}

export const APP_CONFIG_PATH = '/app-config.json';

export function registerWebApp(app: FastifyInstance, options: { dist: string; config: WebAppConfig }) {
  const root = path.resolve(options.dist);
  const appConfig = JSON.stringify(options.config);
  app.setNotFoundHandler(async (request, reply) => {
    const urlPath = request.url.split('?')[0]!;
    if ((request.method === 'GET' || request.method === 'HEAD') && urlPath === APP_CONFIG_PATH) {
      return reply.code(200).header('cache-control', REVALIDATE).type(TYPES['.json']!).send(appConfig);
    }
    if ((request.method === 'GET' || request.method === 'HEAD') && isWebPath(urlPath)) {
      const asset = await findFile(root, urlPath);
      if (asset) return sendFile(request, reply, asset, ASSETS.test(urlPath) ? HASHED_CACHE : REVALIDATE);
      if (wantsPage(request, urlPath) && !ASSETS.test(urlPath)) {
        const index = await findFile(root, '/index.html');
        if (index) return sendFile(request, reply, index, REVALIDATE);
        return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT);
      }
    }
    throw notFound('Route not found', `${request.method} ${urlPath} does not exist`);
  });
}
