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
import { colours } from './colour';
import { CliError, explainError, UsageError } from './errors';
import { processIo, type CliIo } from './io';
import { Program } from './program';
import { COMMANDS, FOOTER, TITLE } from './tree';

export type { CliIo } from './io';
export { bufferIo } from './io';

/** The package version, for `bridge --version`. */
const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** Built once; each run parses its own command line with it. */
const PROGRAM = new Program({ title: TITLE, footer: FOOTER, version: VERSION }, COMMANDS);

export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const options = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length);
  const json = options.includes('--json');
  try {
    const invocation = PROGRAM.parse(argv, io);
    if ('exitCode' in invocation) return invocation.exitCode;
    const result = await invocation.def.run(invocation.parsed, io);
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

/** Whether the module at `moduleUrl` is the script node was started with (through symlinks, e.g. the bin). */
export function isEntryPoint(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

// `npm run bridge` (tsx cli/main.ts) runs this file directly; the bin shim calls main() itself.
if (isEntryPoint(import.meta.url)) await main();
