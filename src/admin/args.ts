// The admin commands' command line: `<command> [--flag value | --flag=value | --switch]…`. A wrong
// line is a UsageError (exit code 2, one line of usage).

export const COMMANDS = [
  'create-user',
  'verify-user',
  'disable-user',
  'enable-user',
  'rotate-encryption-key',
  'rotate-signing-key',
  'seed-demo',
] as const;
export type Command = (typeof COMMANDS)[number];

export const USAGE = `Usage: npm run admin -- <${COMMANDS.join('|')}> [options] (--help for details)`;

export const HELP = `${USAGE}

  create-user --email E [--password P] [--name N] [--verified]
      A new account; without --password the password is asked for (or read from standard input).
  verify-user --email E [--keep-credentials]
      mark the address verified. On an account never verified this is the first proof of the
      address: its password, two-factor, passkeys, social links and sessions are dropped (someone may
      have registered it ahead of its owner), and the owner signs in by a sign-in link or a reset;
      --keep-credentials keeps them (an account you made yourself with create-user)
  disable-user --email E           deactivate the account: every session revoked, sign-in refused
  enable-user --email E            let a deactivated account sign in again
  rotate-encryption-key            re-encrypt every stored secret with the first key of ENCRYPTION_KEY
  rotate-signing-key [--delay-s N]
      a new access-token signing key (asymmetric JWT_ALGORITHM): published now, signing N seconds
      later (default 600); the current key verifies until its last token has expired
  seed-demo [--email E] [--webhook-url U]
      a demo user, organization, project, API key and webhook endpoint (refused in production)

Exit codes: 0 done, 1 failed, 2 wrong command line.`;

export class UsageError extends Error {}

/** The flags each command takes: true for a switch, false for one that takes a value. */
const FLAGS: Record<Command, Record<string, boolean>> = {
  'create-user': { email: false, password: false, name: false, verified: true },
  'verify-user': { email: false, 'keep-credentials': true },
  'disable-user': { email: false },
  'enable-user': { email: false },
  'rotate-encryption-key': {},
  'rotate-signing-key': { 'delay-s': false },
  'seed-demo': { email: false, 'webhook-url': false },
};
const REQUIRED: Partial<Record<Command, string[]>> = {
  'create-user': ['email'],
  'verify-user': ['email'],
  'disable-user': ['email'],
  'enable-user': ['email'],
};

export type Parsed = { command: 'help' } | { command: Command; flags: Record<string, string | true> };

export function parseArgs(argv: readonly string[]): Parsed {
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError('no command given');
  if (command === '--help' || command === '-h' || command === 'help') return { command: 'help' };
  if (!(COMMANDS as readonly string[]).includes(command)) throw new UsageError(`unknown command "${command}"`);
  const known = FLAGS[command as Command];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--help' || arg === '-h') return { command: 'help' };
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!m || !(m[1]! in known)) throw new UsageError(`${command} does not take "${arg}"`);
    const name = m[1]!;
    if (known[name]) {
      if (m[2] !== undefined) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = m[2] ?? rest[++i];
    if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
    flags[name] = value;
  }
  for (const name of REQUIRED[command as Command] ?? []) {
    if (flags[name] === undefined) throw new UsageError(`${command} needs --${name}`);
  }
  return { command: command as Command, flags };
}
