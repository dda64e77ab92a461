// `prepare` (npm runs it when the package is installed from a path or a git URL, when the repository's
// own `npm ci` links the workspace, and before `npm pack`/`npm publish`): compiles src/ into dist/,
// which `exports` points at. TypeScript comes from the repository's installed devDependencies (run
// `npm ci` in the repository first); without it an existing dist/ is kept (an install with
// `--omit=dev` after a full one), and a missing one stops the install with a message instead of
// leaving a package whose entry points do not exist.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
let tsc;
try {
  tsc = createRequire(path.join(here, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  if (fs.existsSync(path.join(here, 'dist', 'index.js'))) process.exit(0);
  console.error(
    '@tenantry/client: dist/ is not built and TypeScript is not installed: run `npm ci` in the Tenantry repository first, or install the packed tarball (`npm pack` in client/)',
  );
  process.exit(1);
}
fs.rmSync(path.join(here, 'dist'), { recursive: true, force: true });
const run = spawnSync(process.execPath, [tsc, '-p', path.join(here, 'tsconfig.build.json')], { stdio: 'inherit' });
process.exit(run.status ?? 1);
