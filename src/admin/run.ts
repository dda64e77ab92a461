// The admin commands behind `npm run admin -- <command>` (admin.ts): one command on an Infra, its
// exit code returned (0 done, 1 failed), its output through `io`. Tests call this with a test Infra.
import type { Infra } from '../infra.js';
import type { Command } from './args.js';
import { rotateEncryptionKey } from './rotate.js';
import { seedDemo } from './seed.js';
import { parseDelay, rotateKey } from './signing-key.js';
import { createUser, disableUser, enableUser, type Io, verifyUser } from './users.js';

export async function runCommand(
  deps: Pick<
    Infra,
    | 'config'
    | 'logger'
    | 'clock'
    | 'db'
    | 'shared'
    | 'sessions'
    | 'userCache'
    | 'passwords'
    | 'permissions'
    | 'authorizeOrg'
  >,
  command: Command,
  flags: Record<string, string | true>,
  io: Io,
): Promise<number> {
  const value = (name: string) => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
  const email = value('email') ?? '';
  switch (command) {
    case 'create-user':
      await createUser(
        deps,
        { email, password: value('password'), name: value('name'), verified: flags.verified === true },
        io,
      );
      return 0;
    case 'verify-user':
      await verifyUser(deps, email, io, { keepCredentials: flags['keep-credentials'] === true });
      return 0;
    case 'disable-user':
      await disableUser(deps, email, io);
      return 0;
    case 'enable-user':
      await enableUser(deps, email, io);
      return 0;
    case 'rotate-encryption-key':
      return rotateEncryptionKey(deps, io);
    case 'rotate-signing-key':
      return rotateKey(deps, parseDelay(value('delay-s')), io);
    case 'seed-demo':
      await seedDemo(deps, { email: value('email'), webhookUrl: value('webhook-url') }, io);
      return 0;
  }
}
