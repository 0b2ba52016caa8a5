/**
 * `bridge` — the operator CLI of the bridge: replay the DLQ, send signed test deliveries, check
 * the setup, manage secrets. `run(argv, io)` is the whole CLI in-process (tests call it);
 * `cli/bridge.mjs` (the package's bin) and `npm run bridge` call `main()`.
 *
 * Exit codes: 0 ok, 1 a check or operation failed, 2 usage error. Errors print a message and a fix,
 * never a stack trace; with --json the one document on stdout is `{ ok: false, error }`.
 */
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { dlqCommand } from './commands/dlq';
import { doctorCommand } from './commands/doctor';
import { secretsCommand } from './commands/secrets';
import { sendCommand } from './commands/send';
import { smokeCommand } from './commands/smoke';
import { tailCommand } from './commands/tail';
import { triggerCommand } from './commands/trigger';
import { suggest } from './args';
import { colours } from './colour';
import { completionScript } from './completion';
import { slackCommand } from './commands/slack';
import { subscriptionsCommand } from './commands/subscriptions';
import { CliError, explainError, UsageError } from './errors';
import { helpFor } from './help';
import { processIo, type CliIo } from './io';
import type { CommandResult } from './result';

export type { CliIo } from './io';

/** The package version, for `bridge --version`. */
const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
export { bufferIo } from './io';

const COMMANDS: Record<string, (argv: readonly string[], io: CliIo) => Promise<CommandResult>> = {
  dlq: dlqCommand,
  send: sendCommand,
  smoke: smokeCommand,
  doctor: doctorCommand,
  secrets: secretsCommand,
  trigger: triggerCommand,
  tail: tailCommand,
  slack: slackCommand,
  subscriptions: subscriptionsCommand,
};

/** The leading words of a command line (before the first option), e.g. ['dlq', 'replay']. */
function commandWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-') || words.length >= 3) break;
    words.push(arg);
  }
  return words;
}

export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const options = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length);
  const json = options.includes('--json');
  const words = commandWords(argv);

  if (argv.length === 0) {
    io.stderr.write(`${helpFor([])}\n`);
    return 2;
  }
  if (words[0] === 'help') {
    io.stdout.write(`${helpFor(words.slice(1).concat(argv.slice(words.length)))}\n`);
    return 0;
  }
  if (words.length === 0 && (options.includes('--version') || options.includes('-V'))) {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (words[0] === 'completion') {
    try {
      io.stdout.write(completionScript(words[1]));
      return 0;
    } catch (err) {
      return usageFailure(err as UsageError, io, json);
    }
  }
  if (options.includes('--help') || options.includes('-h')) {
    io.stdout.write(`${helpFor(words)}\n`);
    return 0;
  }

  try {
    const name = argv[0] ?? '';
    const command = COMMANDS[name];
    if (command === undefined)
      throw new UsageError(`unknown command "${name}"${suggest(name, [...Object.keys(COMMANDS), 'help', 'completion'])}`);
    const result = await command(argv.slice(1), io);
    if (json && result.json !== undefined) io.stdout.write(`${JSON.stringify(result.json, null, 2)}\n`);
    return result.exitCode;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(err, io, json);
    const cli = err instanceof CliError ? err : explainError(err);
    const paint = colours(io);
    io.stderr.write(`${paint.red('error:')} ${cli.message}\n`);
    if (cli.fix !== undefined) io.stderr.write(`  ${paint.yellow('fix:')} ${cli.fix}\n`);
    if (json) {
      io.stdout.write(
        `${JSON.stringify({ ok: false, error: { code: cli.code, message: cli.message, ...(cli.fix !== undefined ? { fix: cli.fix } : {}) } }, null, 2)}\n`,
      );
    }
    return 1;
  }
}

function usageFailure(err: UsageError, io: CliIo, json: boolean): number {
  const paint = colours(io);
  io.stderr.write(`${paint.red('error:')} ${err.message}\n`);
  // `npx bridge`: on Linux a bare `bridge` is iproute2's tool.
  io.stderr.write(`run \`npx bridge ${err.command ?? ''}${err.command !== undefined ? ' ' : ''}--help\` for usage\n`);
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'usage', message: err.message } }, null, 2)}\n`);
  return 2;
}

/** Runs the CLI on the process's arguments and sets the exit code. */
export async function main(): Promise<void> {
  // The project runs on Node 20 (package.json engines); the SDK's notice about future versions
  // would otherwise end up in every command's output.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  process.exitCode = await run(process.argv.slice(2));
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

// `npm run bridge` (tsx cli/main.ts) runs this file directly; the bin shim calls main() itself.
if (isEntryPoint()) await main();
