// Builds web/dist once for the run (the API under test serves it), with the same function
// `npm start` uses, so a build that is already fresh is kept.
import { ensureWebBuild } from '../../src/web-build.js';

export default async function setup() {
  await ensureWebBuild({
    info: (msg) => process.stdout.write(`${msg}\n`),
    warn: (msg) => process.stderr.write(`${msg}\n`),
  });
}
