// `npm run admin -- <command>` (`node dist/admin.js <command>` from a build): operator commands on
// the configured database, beside running instances (docs/deploy.md#admin-commands). A wrong command
// line prints one line of usage and exits 2; a command that fails prints one line and exits 1.
import readline from 'node:readline';
import { HELP, parseArgs, USAGE, UsageError } from './admin/args.js';
import { runCommand } from './admin/run.js';
import { describeError, type Io } from './admin/users.js';
import { boot } from './boot.js';

function terminalIo(): Io {
  const interactive = Boolean(process.stdin.isTTY);
  let lines: AsyncIterableIterator<string> | null = null;
  return {
    interactive,
    out: (line) => process.stdout.write(`${line}\n`),
    async secret(question) {
      if (!interactive) {
        lines ??= readline.createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();
        const next = await lines.next();
        if (next.done) throw new UsageError('no password given: pass --password or write it to standard input');
        return next.value;
      }
      // Asked on the terminal, the typed characters not echoed.
      const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true });
      const muted = rl as unknown as { _writeToOutput(s: string): void };
      process.stdout.write(question);
      muted._writeToOutput = () => {};
      try {
        return await new Promise<string>((resolve) => rl.question('', resolve));
      } finally {
        rl.close();
        process.stdout.write('\n');
      }
    },
  };
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}. ${USAGE}`);
    return 2;
  }
  if (parsed.command === 'help') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const { deps } = await boot({ defaultLogLevel: 'warn' });
  try {
    return await runCommand(deps, parsed.command, parsed.flags, terminalIo());
  } catch (err) {
    console.error(`${parsed.command}: ${describeError(err)}`);
    return err instanceof UsageError ? 2 : 1;
  } finally {
    await deps.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
