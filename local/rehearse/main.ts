/**
 * `npm run rehearse -- -c stage=<stage> [--app DIR] [--scenarios a,b] [--verbose] [--json]`
 * (entry: cli/rehearse.ts, which hands in the CLI runner).
 *
 * Synthesizes the stage (or takes an already synthesized cloud assembly with --app, as it is),
 * runs it as AWS would on this machine and prints one line per check. Exit 0 when every check
 * passed, 1 when one failed, 2 for a usage or synth problem.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { AssemblyError, bridgeStackOf, readAssembly, synthesize } from './assembly';
import { RehearsedStack } from './rehearsed-stack';
import { rehearse, rehearseInParallel, SCENARIOS, type RehearsalReport, type ScenarioName } from './rehearsal';
import type { CliRunner } from './scenario-context';

export type { CliRunner } from './scenario-context';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The command line, as commander reads it. */
interface RehearseCommand {
  context: string[];
  app?: string;
  scenarios?: ScenarioName[];
  verbose?: boolean;
  json?: boolean;
}

/** Synthesizes (unless `app` is given), rehearses and cleans up; the report says what passed. */
async function runRehearsal(command: RehearseCommand, runCli: CliRunner, write: (line: string) => void): Promise<RehearsalReport> {
  const workDir = mkdtempSync(join(tmpdir(), 'bridge-rehearsal-'));
  try {
    const assemblyDir = command.app ?? join(workDir, 'cdk.out');
    if (command.app === undefined) {
      write(`synthesizing ${command.context.map((entry) => `-c ${entry}`).join(' ')} …`);
      synthesize(PROJECT_ROOT, assemblyDir, command.context);
    }
    const artifact = bridgeStackOf(readAssembly(assemblyDir));
    write(`rehearsing ${artifact.stackName} from ${assemblyDir}`);
    const log = command.json ? () => undefined : write;
    const start = async (group: number): Promise<RehearsedStack> => {
      const stack = await RehearsedStack.start({
        stack: artifact,
        workDir: mkdtempSync(join(workDir, `stack-${group}-`)),
        ...(command.verbose ? { onLine: (line) => write(`  [${line.functionLogicalId}] ${line.line.slice(0, 400)}`) } : {}),
      });
      if (group === 0) for (const note of stack.resources.notEmulated) write(`note: not emulated: ${note}`);
      return stack;
    };
    // Every scenario: on two stacks at once (as docs/TESTING.md times it); a chosen few: on one, in order.
    const scenarios = command.scenarios ?? SCENARIOS;
    if (scenarios.length === SCENARIOS.length) return await rehearseInParallel(start, { projectRoot: PROJECT_ROOT, runCli, log });
    const stack = await start(0);
    try {
      return await rehearse(stack, { projectRoot: PROJECT_ROOT, runCli, scenarios, log });
    } finally {
      await stack.close();
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The closing lines: the counts, then each failure (its check, and what it said), then why checks were skipped. */
function summary(report: RehearsalReport): string[] {
  const failed = report.checks.filter((check) => !check.ok);
  const skipped = report.checks.filter((check) => check.skipped !== undefined);
  const passed = report.checks.length - failed.length - skipped.length;
  const lines = [
    '',
    `${passed} passed, ${failed.length} failed${skipped.length > 0 ? `, ${skipped.length} skipped` : ''} (${(report.durationMs / 1000).toFixed(1)} s)`,
  ];
  for (const check of failed) lines.push(`✗ ${check.name}`, `  ${check.detail.replace(/\n/g, '\n  ')}`);
  const reasons = new Map<string, string[]>();
  for (const check of skipped) reasons.set(check.skipped!, [...(reasons.get(check.skipped!) ?? []), check.name]);
  for (const [reason, names] of reasons) lines.push(`– skipped ${names.length}: ${reason}`, ...names.map((name) => `    ${name}`));
  return lines;
}

function parseScenarios(value: string): ScenarioName[] {
  const names = value.split(',').map((name) => name.trim());
  for (const name of names) {
    if (!(SCENARIOS as readonly string[]).includes(name))
      throw new InvalidArgumentError(`unknown scenario "${name}" (known: ${SCENARIOS.join(', ')})`);
  }
  return names as ScenarioName[];
}

/** The whole `npm run rehearse` on a command line; the exit code says how it went. */
export async function main(argv: string[], runCli: CliRunner): Promise<number> {
  const program = new Command('rehearse')
    .description('Rehearse the deploy: run the synthesized stack as AWS would, on this machine, and check it')
    .option(
      '-c, --context <key=value>',
      'CDK context, e.g. stage=dev (repeatable)',
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option('--app <dir>', 'rehearse this already synthesized cloud assembly as it is (no synth)')
    .option('--scenarios <list>', `comma-separated subset of: ${SCENARIOS.join(', ')}`, parseScenarios)
    .option('--verbose', 'print every line the functions print')
    .option('--json', 'print the report as JSON')
    .exitOverride();
  try {
    program.parse(argv, { from: 'user' });
  } catch (error) {
    return (error as { exitCode?: number }).exitCode === 0 ? 0 : 2;
  }
  const options = program.opts<RehearseCommand>();
  if (options.app === undefined && !options.context.some((entry) => entry.startsWith('stage='))) {
    process.stderr.write(
      'rehearse: name the stage, e.g. npm run rehearse -- -c stage=dev (or --app DIR for an assembly already synthesized)\n',
    );
    return 2;
  }
  const write = (line: string): void => void process.stdout.write(`${line}\n`);
  try {
    const report = await runRehearsal(options, runCli, options.json ? () => undefined : write);
    for (const line of options.json ? [JSON.stringify(report, null, 2)] : summary(report)) write(line);
    return report.ok ? 0 : 1;
  } catch (error) {
    if (error instanceof AssemblyError) {
      process.stderr.write(`rehearse: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
