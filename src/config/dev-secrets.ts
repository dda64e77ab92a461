// Development secrets: generated once and kept in DATA_DIR, so tokens survive a restart.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigError } from './types.js';

export interface DevSecrets {
  jwtSecret: string;
  jwtRefreshSecret: string;
  encryptionKey: string;
}
/** Development secrets are generated once and kept in DATA_DIR so tokens survive a restart. */
export function loadDevSecrets(dataDir: string): DevSecrets {
  const file = path.join(dataDir, 'secrets.json');
  const read = (): DevSecrets | null => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new ConfigError('DATA_DIR', `cannot read ${file}: ${(err as Error).message}`);
    }
    let parsed: Partial<DevSecrets> | null = null;
    try {
      parsed = JSON.parse(text) as Partial<DevSecrets>;
    } catch {
      // reported below
    }
    const ok =
      parsed &&
      (['jwtSecret', 'jwtRefreshSecret', 'encryptionKey'] as const).every((k) => typeof parsed[k] === 'string');
    if (!ok) {
      throw new ConfigError(
        'DATA_DIR',
        `has a damaged ${file}: delete it to generate new development secrets (signs everyone out)`,
      );
    }
    return parsed as DevSecrets;
  };
  const existing = read();
  if (existing) return existing;
  const secrets: DevSecrets = {
    jwtSecret: randomBytes(48).toString('base64url'),
    jwtRefreshSecret: randomBytes(48).toString('base64url'),
    encryptionKey: randomBytes(32).toString('hex'),
  };
  fs.mkdirSync(dataDir, { recursive: true });
  // Written whole to a temporary file, then linked into place: a process starting at the same
  // moment either wins the link or reads the winner's complete file.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return read()!;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return secrets;
}
