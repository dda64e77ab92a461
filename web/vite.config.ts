// The web app's build: React through @vitejs/plugin-react, @tenantry/client from its TypeScript
// source (the workspace package publishes dist/, which the repository does not build). `npm run
// web:dev` serves the pages with hot reload and proxies the API (and /app-config.json) to
// TENANTRY_API (the API's own origin, http://127.0.0.1:3000 by default), so the pages and the API
// share one origin as in production, where the API process serves web/dist itself.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const api = process.env.TENANTRY_API ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  resolve: {
    alias: { '@tenantry/client': fileURLToPath(new URL('../client/src/index.ts', import.meta.url)) },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline script or style may be emitted: the pages' CSP is script-src 'self'; style-src 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: {
    proxy: Object.fromEntries(
      ['/api', '/docs', '/health', '/ready', '/app-config.json'].map((p) => [p, { target: api, changeOrigin: false }]),
    ),
  },
});
