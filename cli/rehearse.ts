/**
 * `npm run rehearse` (local/rehearse/main.ts): the deploy rehearsal, with `npx bridge …` run
 * in-process by the CLI's own entry (`run`). The runner is handed in from here because cli/ depends
 * on local/ and never the other way round.
 */
import { main, type CliRunner } from '../local/rehearse/main';
import { bufferIo } from './io';
import { isEntryPoint, run } from './main';

export const runCliInProcess: CliRunner = async (args, input) => {
  const io = bufferIo({
    env: input.env,
    fetch: input.fetch,
    ...(input.stdin !== undefined ? { stdinText: input.stdin } : {}),
    pollIntervalMs: input.pollIntervalMs,
  });
  const code = await run(args, io);
  return { code, stdout: io.stdout.text(), stderr: io.stderr.text() };
};

if (isEntryPoint(import.meta.url)) {
  main(process.argv.slice(2), runCliInProcess).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`rehearse: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
