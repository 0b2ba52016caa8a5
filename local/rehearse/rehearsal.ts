/**
 * The deploy rehearsal's runner: the operator's steps as documented, then the scenarios a deployed
 * bridge must survive, run against the synthesized stack (rehearsed-stack.ts), then the checks no unit
 * test can make (checks.ts). The scenarios live by area (operator-, report-, slack-, fault-scenarios.ts)
 * and are listed once, in SCENARIO_TABLE.
 */
import { randomBytes } from 'node:crypto';
import { checkIamCalls, checkNoSecretsLogged, metricChecks, type Check } from './checks';
import { faultScenarios, floodScenario, rotationScenario, slackOutageScenario } from './fault-scenarios';
import { operatorOutputs, runbook } from './operator-scenarios';
import type { RehearsedStack } from './rehearsed-stack';
import { chartScenario, digestScenario, quietScenario, weeklyScenario } from './report-scenarios';
import { ScenarioContext, type CliRunner, type OperatorValues, type RehearsalLog, type Scenario } from './scenario-context';
import {
  buttonScenario,
  forgedScenario,
  foreignScenario,
  replayScenario,
  slackFloodScenario,
  slashCommandScenario,
} from './slack-scenarios';
import { slackEventsScenario } from './slack-events';
import { tenantsScenario } from './tenant-scenarios';

export interface RehearsalReport {
  stackName: string;
  checks: Check[];
  ok: boolean;
  durationMs: number;
}

/** Which of rehearseInParallel's two stacks runs a scenario (both: each needs what it sets up). */
type StackGroup = 0 | 1 | 'both';

interface ScenarioEntry {
  run: Scenario;
  group: StackGroup;
  /** Runs only once the stage names its Slack workspace and app (runbook step 9); skipped with the reason before. */
  needsWorkspace?: true;
  /** Runs only on a stage with "Add to Slack" (`slackClientId`); skipped with the reason on others. */
  needsInstall?: true;
}

/**
 * Every scenario, in the order one stack runs them: the button mutes the default channel, so it comes
 * after every scenario that needs a post there. On two stacks at once, the groups share no Slack
 * channel state; each group takes about half the time (group 1: chart, quiet, tenants and both floods;
 * group 0 the rest, the Slack outage's five receives included).
 */
const SCENARIO_TABLE = {
  outputs: { run: operatorOutputs, group: 'both' },
  runbook: { run: runbook, group: 0 },
  digest: { run: digestScenario, group: 0 },
  weekly: { run: weeklyScenario, group: 0 },
  chart: { run: chartScenario, group: 1 },
  quiet: { run: quietScenario, group: 1, needsWorkspace: true },
  'slash-command': { run: slashCommandScenario, group: 0, needsWorkspace: true },
  forged: { run: forgedScenario, group: 0 },
  foreign: { run: foreignScenario, group: 0, needsWorkspace: true },
  replay: { run: replayScenario, group: 0, needsWorkspace: true },
  'slack-events': { run: slackEventsScenario, group: 0, needsWorkspace: true },
  tenants: { run: tenantsScenario, group: 1, needsWorkspace: true, needsInstall: true },
  faults: { run: faultScenarios, group: 0 },
  'slack-outage': { run: slackOutageScenario, group: 0 },
  rotation: { run: rotationScenario, group: 1 },
  'slack-flood': { run: slackFloodScenario, group: 1 },
  flood: { run: floodScenario, group: 1 },
  button: { run: buttonScenario, group: 0, needsWorkspace: true },
} as const satisfies Record<string, ScenarioEntry>;

export type ScenarioName = keyof typeof SCENARIO_TABLE;
export const SCENARIOS = Object.keys(SCENARIO_TABLE) as ScenarioName[];

function scenariosOfGroup(group: 0 | 1): ScenarioName[] {
  return SCENARIOS.filter((name) => [group, 'both'].includes(SCENARIO_TABLE[name].group));
}

export interface RehearsalOptions {
  projectRoot: string;
  runCli: CliRunner;
  /** Which scenarios to run (default all, in order). */
  scenarios?: readonly ScenarioName[];
  /** Check alarms against the metrics this stack emitted (default: when every scenario runs). */
  checkMetrics?: boolean;
  /** Each check as it is made, and progress lines while scenarios run. */
  log?: (line: string) => void;
}

/** Every scenario, on two stacks from the same assembly at once (each with its own peers); the alarms are checked against what both emitted. */
export async function rehearseInParallel(
  start: (group: number) => Promise<RehearsedStack>,
  options: Omit<RehearsalOptions, 'scenarios' | 'checkMetrics'>,
): Promise<RehearsalReport> {
  const started = Date.now();
  const stacks: RehearsedStack[] = [];
  const log = options.log ?? (() => undefined);
  try {
    for (const group of [0, 1] as const) stacks.push(await start(group));
    const reports = await Promise.all(
      stacks.map((stack, group) =>
        rehearse(stack, {
          ...options,
          scenarios: scenariosOfGroup(group as 0 | 1),
          checkMetrics: false,
          log: (line) => log(`[${group + 1}] ${line}`),
        }),
      ),
    );
    const checks = reports.flatMap((report) => report.checks);
    for (const check of metricChecks(stacks, options.projectRoot, skipReasonOf(checks))) {
      checks.push(check);
      log(checkLine(check, Date.now() - started));
    }
    return { stackName: stacks[0]!.stackName, checks, ok: checks.every((check) => check.ok), durationMs: Date.now() - started };
  } finally {
    await Promise.all(stacks.map((stack) => stack.close()));
  }
}

export async function rehearse(stack: RehearsedStack, options: RehearsalOptions): Promise<RehearsalReport> {
  const started = Date.now();
  const checks: Check[] = [];
  const print = options.log ?? (() => undefined);
  const add = (check: Check): void => {
    checks.push(check);
    print(checkLine(check, Date.now() - started));
  };
  const log: RehearsalLog = {
    record: (name, ok, detail) => add({ name, ok, detail }),
    skip: (name, reason) => add({ name, ok: true, detail: '', skipped: reason }),
    progress: (line) => print(`  ${elapsed(Date.now() - started)} ${line}`),
  };
  const values: OperatorValues = {
    webhookSecret: `whsec_${randomBytes(16).toString('hex')}`,
    readApiKey: stack.peers.simulator.apiKey,
    slackToken: `xoxb-rehearsal-${randomBytes(6).toString('hex')}`,
    slackSigningSecret: randomBytes(16).toString('hex'),
    slackClientSecret: stack.peers.slack.oauth.clientSecret,
  };
  const wanted = new Set(options.scenarios ?? SCENARIOS);
  const context = new ScenarioContext(stack, values, options.projectRoot, options.runCli, log);
  for (const name of SCENARIOS) {
    if (!wanted.has(name)) continue;
    const entry: ScenarioEntry = SCENARIO_TABLE[name];
    const unconfigured =
      (entry.needsWorkspace ? context.unconfiguredWorkspace() : undefined) ?? (entry.needsInstall ? context.undistributed() : undefined);
    if (unconfigured !== undefined) {
      log.skip(`${name}: every check`, unconfigured);
      continue;
    }
    log.progress(`▸ ${name}`);
    try {
      await entry.run(context);
    } catch (error) {
      log.record(`${name}: ran to the end`, false, error instanceof Error ? error.message : String(error));
    }
  }
  log.progress('▸ settling, then the IAM, metric and log checks');
  await stack.settle(15_000);
  for (const check of await checkIamCalls(stack)) add(check);
  if (options.checkMetrics ?? wanted.size === SCENARIOS.length) {
    for (const check of metricChecks([stack], options.projectRoot, skipReasonOf(checks))) add(check);
  }
  checkNoSecretsLogged(stack, values, log.record);
  return { stackName: stack.stackName, checks, ok: checks.every((check) => check.ok), durationMs: Date.now() - started };
}

/** Why checks were skipped (the first reason: they share one, the runbook step not yet taken). */
function skipReasonOf(checks: readonly Check[]): string | undefined {
  const skipped = checks.filter((check) => check.skipped !== undefined);
  return skipped.length === 0 ? undefined : `${skipped.length} checks skipped (${skipped[0]!.skipped})`;
}

/** One check as printed while the rehearsal runs: ✓ passed, ✗ failed, – skipped (with why). */
function checkLine(check: Check, elapsedMs: number): string {
  const mark = check.skipped !== undefined ? '–' : check.ok ? '✓' : '✗';
  const detail = check.skipped !== undefined ? `skipped: ${check.skipped}` : check.detail;
  return `${mark} ${elapsed(elapsedMs)} ${check.name}${detail ? ` — ${detail}` : ''}`;
}

function elapsed(ms: number): string {
  return `${(ms / 1000).toFixed(1).padStart(5)}s`;
}
