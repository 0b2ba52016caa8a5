/**
 * The deploy rehearsal: the operator's steps as documented, then the scenarios a deployed bridge
 * must survive, run against the synthesized stack (rehearsed-stack.ts), then the checks no unit
 * test can make: every AWS call the functions made allowed by their roles, every alarm's metric
 * emitted by some scenario, every failure metric alarmed (or its reason documented), no secret
 * value in any log line.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { HTTP_PATHS } from '../../shared/contracts';
import { signPayload } from '../../shared/signature';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { createSecretsManagerClient } from '../secrets-manager-server';
import { createSqsClient } from '../sqs-server';
import {
  alarmCoverage,
  alarmMetrics,
  emfMetrics,
  metricFilters,
  metricFromLogLine,
  unalarmedReasonsFrom,
  type MetricId,
} from './alarm-coverage';
import { checkCalls, describeDenial, rolePolicies } from './iam-check';
import { egressFetch, REHEARSAL_ACCOUNT_ID, type RehearsedStack } from './rehearsed-stack';
import { chartScenario, quietScenario, weeklyScenario } from './report-scenarios';
import { slackEventsScenario } from './slack-events';
import { runbookSteps } from './runbook';
import { channelSubscribed, recordedResponseUrl, slashCommandForm } from './slack-requests';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface RehearsalReport {
  stackName: string;
  checks: Check[];
  ok: boolean;
  durationMs: number;
}

/** In order: the button mutes the default channel, so it comes after every scenario that needs a post there. */
export const SCENARIOS = [
  'outputs',
  'runbook',
  'digest',
  'weekly',
  'chart',
  'quiet',
  'slash-command',
  'forged',
  'foreign',
  'replay',
  'slack-events',
  'faults',
  'slack-outage',
  'rotation',
  'slack-flood',
  'flood',
  'button',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** What one `npx bridge …` run is handed: the operator's environment, the rehearsal's network, piped stdin. */
export interface CliRunInput {
  env: Readonly<Record<string, string | undefined>>;
  fetch: typeof fetch;
  stdin?: string;
  pollIntervalMs: number;
}

export interface CliRunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the operator CLI. Handed in by the caller (cli/rehearse.ts runs it in-process): cli/ depends
 * on local/, so local/ never imports cli/.
 */
export type CliRunner = (args: readonly string[], input: CliRunInput) => Promise<CliRunResult>;

export interface RehearsalOptions {
  projectRoot: string;
  runCli: CliRunner;
  /** Which scenarios to run (default all, in order). */
  scenarios?: readonly ScenarioName[];
  /** Check alarms against the metrics this stack emitted (default: when every scenario runs). */
  checkMetrics?: boolean;
  log?: (line: string) => void;
}

/**
 * Every scenario, on two stacks from the same assembly at once (each with its own peers): the
 * groups share no Slack channel state, and the Slack outage's five receives (each waiting out the
 * template's batching window) run beside the faults instead of after them. The alarms are checked
 * against what both emitted.
 */
export const PARALLEL_GROUPS: readonly (readonly ScenarioName[])[] = [
  ['outputs', 'runbook', 'digest', 'weekly', 'slash-command', 'forged', 'foreign', 'replay', 'slack-events', 'faults', 'button'],
  ['outputs', 'chart', 'quiet', 'slack-outage', 'rotation', 'slack-flood', 'flood'],
];

export async function rehearseInParallel(
  start: (group: number) => Promise<RehearsedStack>,
  options: Omit<RehearsalOptions, 'scenarios' | 'checkMetrics'>,
): Promise<RehearsalReport> {
  const started = Date.now();
  const stacks: RehearsedStack[] = [];
  try {
    for (let group = 0; group < PARALLEL_GROUPS.length; group++) stacks.push(await start(group));
    const reports = await Promise.all(
      stacks.map((stack, group) => rehearse(stack, { ...options, scenarios: PARALLEL_GROUPS[group]!, checkMetrics: false })),
    );
    const checks = reports.flatMap((report) => report.checks);
    const log = options.log ?? (() => undefined);
    for (const check of metricChecks(stacks, options.projectRoot)) {
      checks.push(check);
      log(`${check.ok ? '✓' : '✗'} ${check.name}${check.detail ? ` — ${check.detail}` : ''}`);
    }
    return { stackName: stacks[0]!.stackName, checks, ok: checks.every((check) => check.ok), durationMs: Date.now() - started };
  } finally {
    await Promise.all(stacks.map((stack) => stack.close()));
  }
}

/** The values the operator puts: what the service, Slack and the rehearsal's own key would hand out. */
interface OperatorValues {
  webhookSecret: string;
  readApiKey: string;
  slackToken: string;
  slackSigningSecret: string;
}

export async function rehearse(stack: RehearsedStack, options: RehearsalOptions): Promise<RehearsalReport> {
  const started = Date.now();
  const checks: Check[] = [];
  const log = options.log ?? (() => undefined);
  const record = (name: string, ok: boolean, detail: string): void => {
    checks.push({ name, ok, detail });
    log(`${ok ? '✓' : '✗'} ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s ${name}${detail ? ` — ${detail}` : ''}`);
  };
  const values: OperatorValues = {
    webhookSecret: `whsec_${randomBytes(16).toString('hex')}`,
    readApiKey: stack.peers.simulator.apiKey,
    slackToken: `xoxb-rehearsal-${randomBytes(6).toString('hex')}`,
    slackSigningSecret: randomBytes(16).toString('hex'),
  };
  const wanted = new Set(options.scenarios ?? SCENARIOS);
  const context = new ScenarioContext(stack, values, options.projectRoot, options.runCli, record, log);
  for (const name of SCENARIOS) {
    if (!wanted.has(name)) continue;
    try {
      await SCENARIO_RUNNERS[name](context);
    } catch (error) {
      record(`${name}: ran to the end`, false, error instanceof Error ? error.message : String(error));
    }
  }
  await stack.settle(15_000);
  for (const check of await checkIamCalls(stack)) record(check.name, check.ok, check.detail);
  if (options.checkMetrics ?? wanted.size === SCENARIOS.length) {
    for (const check of metricChecks([stack], options.projectRoot)) record(check.name, check.ok, check.detail);
  }
  checkNoSecretsLogged(stack, values, record);
  return { stackName: stack.stackName, checks, ok: checks.every((check) => check.ok), durationMs: Date.now() - started };
}

// -------------------------------------------------------------------------------------------------
// Scenarios
// -------------------------------------------------------------------------------------------------

class ScenarioContext {
  digestTs: string | undefined;
  private readonly fetch: typeof fetch;

  constructor(
    readonly stack: RehearsedStack,
    readonly values: OperatorValues,
    readonly projectRoot: string,
    private readonly runCli: CliRunner,
    readonly record: (name: string, ok: boolean, detail: string) => void,
    readonly log: (line: string) => void,
  ) {
    this.fetch = egressFetch(stack.egress);
  }

  get outputs(): Record<string, string> {
    return this.stack.outputs;
  }

  get defaultChannel(): string {
    return this.outputs['SlackDefaultChannel'] ?? '';
  }

  project(): string {
    const id = this.stack.peers.simulator.projectIds()[0];
    if (!id) throw new Error('the simulator has no project');
    return id;
  }

  /**
   * `npx bridge …` as the operator runs it, through the injected runner: the local peers as AWS, the
   * rehearsal's network, and no running local stack to fall back on.
   */
  async bridge(args: readonly string[], stdin?: string): Promise<CliRunResult> {
    const { NODE_OPTIONS: _preload, REHEARSAL_EGRESS: _egress, ...env } = this.stack.operatorEnvironment();
    return this.runCli(args, {
      env: { ...env, NO_COLOR: '1', SLACK_API_URL: this.stack.peers.slack.apiUrl },
      fetch: this.fetch,
      ...(stdin !== undefined ? { stdin } : {}),
      pollIntervalMs: 200,
    });
  }

  /** POSTs a delivery to the stack's WebhookUrl, as the service does. */
  async deliver(
    body: string,
    options: { secret?: string | undefined; signature?: string } = {},
  ): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Service-Webhooks/1' };
    const signature = options.signature ?? signPayload(options.secret ?? this.values.webhookSecret, Math.floor(Date.now() / 1000), body);
    headers['x-service-signature'] = signature;
    const id = (JSON.parse(body) as { id?: unknown }).id;
    if (typeof id === 'string') headers['x-service-delivery'] = id;
    const response = await this.fetch(this.outputs['WebhookUrl']!, { method: 'POST', headers, body });
    return { status: response.status, text: await response.text() };
  }

  runCompletedBody(overrides: Record<string, unknown> = {}, projectId = this.project()): string {
    return JSON.stringify({
      id: `evt_rehearsal_${randomBytes(6).toString('hex')}`,
      type: 'run.completed',
      created_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      data: { project_id: projectId, run_id: `run_${randomBytes(4).toString('hex')}`, status: 'completed', answers: 120 },
      ...overrides,
    });
  }

  /** A signed request to one of the Slack app's URLs, as Slack sends it (at `timestamp`: the same one twice is a replay). */
  async slackRequest(
    url: string,
    form: string,
    secret = this.values.slackSigningSecret,
    timestamp = Math.floor(Date.now() / 1000),
  ): Promise<{ status: number; text: string }> {
    const headers = {
      ...signSlackRequest(secret, timestamp, form),
      'content-type': 'application/x-www-form-urlencoded',
    };
    const response = await this.fetch(url, { method: 'POST', headers, body: form });
    return { status: response.status, text: await response.text() };
  }

  async waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > until) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  postsIn(channel: string): { ts: string; text: string | undefined; blocks: unknown[] | undefined; thread_ts: string | undefined }[] {
    return this.stack.peers.slack.messages(channel).filter((message) => message.thread_ts === undefined);
  }

  async putSecret(outputKey: string, value: string): Promise<void> {
    const arn = this.outputs[outputKey];
    if (!arn) throw new Error(`the stack has no output ${outputKey}`);
    const client = createSecretsManagerClient(this.stack.peers.secrets.url, this.stack.region);
    try {
      await client.send(new PutSecretValueCommand({ SecretId: arn, SecretString: value }));
    } finally {
      client.destroy();
    }
  }
}

type ScenarioRunner = (context: ScenarioContext) => Promise<void>;

const SCENARIO_RUNNERS: Record<ScenarioName, ScenarioRunner> = {
  outputs: operatorOutputs,
  runbook,
  digest: digestScenario,
  weekly: weeklyScenario,
  chart: chartScenario,
  quiet: quietScenario,
  'slash-command': slashCommandScenario,
  button: buttonScenario,
  forged: forgedScenario,
  foreign: foreignScenario,
  replay: replayScenario,
  'slack-events': slackEventsScenario,
  faults: faultScenarios,
  'slack-outage': slackOutageScenario,
  rotation: rotationScenario,
  'slack-flood': slackFloodScenario,
  flood: floodScenario,
};

/**
 * The stack outputs' put-secret-value commands (parsed, run against the local Secrets Manager with
 * what the service and Slack would hand out), after registering the WebhookUrl with the service.
 */
async function operatorOutputs(context: ScenarioContext): Promise<void> {
  const { stack, values, record } = context;
  const registered = stack.peers.simulator.webhooks.addWebhookWithSecret({ url: context.outputs['WebhookUrl']! });
  values.webhookSecret = registered.secret;
  const valueOf: Record<string, string> = {
    PutSigningSecretsCommand: values.webhookSecret,
    PutReadApiKeyCommand: values.readApiKey,
    PutSlackTokenCommand: values.slackToken,
    PutSlackSigningSecretCommand: values.slackSigningSecret,
  };
  for (const [key, command] of Object.entries(context.outputs).filter(([key]) => /^Put.*Command$/.test(key))) {
    const value = valueOf[key];
    if (value === undefined) {
      record(`operator: output ${key}`, false, 'an output put-secret-value command the rehearsal has no value for');
      continue;
    }
    const parsed = parsePutSecretCommand(command, value);
    if ('problem' in parsed) {
      record(`operator: output ${key}`, false, parsed.problem);
      continue;
    }
    await context.putSecret(outputKeyOfSecret(context, parsed.secretId), parsed.secretString);
    record(`operator: output ${key} run as shown`, true, `put ${describeSecretValue(parsed.secretString)}`);
  }
}

/** Runs the `npx bridge` commands of docs/DEPLOY.md's runbook steps, in order. */
async function runbook(context: ScenarioContext): Promise<void> {
  const markdown = readFileSync(join(context.projectRoot, 'docs/DEPLOY.md'), 'utf8');
  const stage = context.stack.stackName.replace(/^VisibilitySlackBridge-/, '');
  const ran = new Set<string>();
  for (const step of runbookSteps(markdown)) {
    for (const raw of step.commands) {
      const command = fillPlaceholders(raw, {
        ...context.outputs,
        stage,
        project: context.project(),
        region: context.stack.region,
        account: REHEARSAL_ACCOUNT_ID,
      }).replaceAll('VisibilitySlackBridge-<stage>', context.stack.stackName);
      // A command a later step repeats (smoke after an upgrade) proves nothing new here.
      if (!command.startsWith('npx bridge ') || ran.has(command)) continue;
      ran.add(command);
      const args = splitArgs(command.slice('npx bridge '.length));
      const stdin = stdinFor(args, context.values);
      const result = await context.bridge(args, stdin);
      const ok = result.code === 0;
      context.record(
        `runbook step ${step.step} (${step.title}): ${command}`,
        ok,
        ok ? lastLine(result.stdout) : `exit ${result.code}: ${lastLine(result.stderr || result.stdout)}`,
      );
    }
  }
}

/** `<stage>`, `<project>`, `<DlqUrl>` (a stack output) … as the operator fills them in; an unknown one is left for the CLI to refuse. */
function fillPlaceholders(command: string, values: Record<string, string>): string {
  return command.replace(/<([A-Za-z]+)>/g, (match, name: string) =>
    name === 'stage' && command.includes(`VisibilitySlackBridge-${match}`) ? match : (values[name] ?? match),
  );
}

/** What the operator pastes when a documented command reads a secret from standard input. */
function stdinFor(args: readonly string[], values: OperatorValues): string | undefined {
  const line = args.join(' ');
  if (/secrets set slack-signing-secret/.test(line)) return `${values.slackSigningSecret}\n`;
  if (/secrets set slack-token/.test(line)) return `${values.slackToken}\n`;
  if (/secrets set read-api-key/.test(line)) return `${values.readApiKey}\n`;
  if (/secrets signing add/.test(line)) return `${values.webhookSecret}\n`;
  return undefined;
}

async function digestScenario(context: ScenarioContext): Promise<void> {
  const channel = context.defaultChannel;
  const before = context.postsIn(channel).length;
  const sent = context.stack.peers.simulator.triggerRun(context.project());
  const report = await sent.delivered;
  const accepted =
    report.results.length > 0 && report.results.every((result) => result.outcome === 'delivered' && result.lastStatus === 200);
  context.record(
    'digest: the service’s signed run.completed is accepted (200)',
    accepted,
    accepted ? '' : JSON.stringify(report).slice(0, 300),
  );
  const post = await context.waitFor(`a digest in ${channel}`, () => context.postsIn(channel)[before]);
  context.digestTs = post.ts;
  context.record(`digest: posted in the configured channel ${channel}`, true, (post.text ?? '').slice(0, 80));
}

/** A signed command from another workspace, and one for another app: 403, and nothing done. */
async function foreignScenario(context: ScenarioContext): Promise<void> {
  const url = context.outputs['SlackCommandsUrl']!;
  const channel = 'C0FOREIGN';
  const line = `subscribe ${context.project()}`;
  for (const [who, origin] of [
    ['another workspace', { teamId: 'T0OTHERTEAM', channel }],
    ['another app', { appId: 'A0OTHERAPP', channel }],
  ] as const) {
    const responses = recordedResponseUrl('foreign');
    const answer = await context.slackRequest(url, slashCommandForm(context, line, responses.url, origin));
    await context.stack.settle(10_000);
    const subscribed = await channelSubscribed(context, channel);
    context.record(
      `foreign: a signed /visibility ${line.split(' ')[0]} from ${who} is refused (403)`,
      answer.status === 403,
      `HTTP ${answer.status} ${answer.text.slice(0, 120)}`,
    );
    context.record(
      `foreign: nothing was done for ${who} (no answer, no subscription of ${channel})`,
      responses.answers(context) === 0 && !subscribed,
      `answers: ${responses.answers(context)}, subscribed: ${subscribed}`,
    );
  }
}

/** The same signed command twice (a replay inside the 5-minute tolerance): both answered, acted on once. */
async function replayScenario(context: ScenarioContext): Promise<void> {
  const url = context.outputs['SlackCommandsUrl']!;
  const channel = 'C0REPLAY';
  const responses = recordedResponseUrl('replay');
  const form = slashCommandForm(context, `subscribe ${context.project()}`, responses.url, { channel });
  const timestamp = Math.floor(Date.now() / 1000);
  const first = await context.slackRequest(url, form, undefined, timestamp);
  await context.waitFor('the deferred answer to the first request', () => (responses.answers(context) > 0 ? true : undefined));
  await context.stack.settle(10_000);
  const answered = responses.answers(context);
  const subscribed = await channelSubscribed(context, channel);
  const replayed = await context.slackRequest(url, form, undefined, timestamp);
  await context.stack.settle(10_000);
  context.record(
    'replay: the first signed subscribe is acted on (subscribed, answered)',
    first.status === 200 && subscribed,
    `HTTP ${first.status}, subscribed: ${subscribed}`,
  );
  context.record(
    'replay: the same request again is answered (200) but not acted on again',
    replayed.status === 200 && responses.answers(context) === answered,
    `HTTP ${replayed.status} ${replayed.text.slice(0, 80)}; answers ${answered} → ${responses.answers(context)}`,
  );
}

async function slashCommandScenario(context: ScenarioContext): Promise<void> {
  const answer = await context.slackRequest(context.outputs['SlackCommandsUrl']!, slashCommandForm(context, 'help'));
  context.record(
    'slash command: signed /visibility help is answered',
    answer.status === 200,
    `HTTP ${answer.status} ${answer.text.slice(0, 120)}`,
  );
  // A deferred answer the bridge can never deliver (a response_url it refuses to call) is retried from
  // the commands' own queue, then rests in their DLQ: its event source, redrive and alarm metric.
  const dlqUrl = context.outputs['CommandsDlqUrl']!;
  const form = slashCommandForm(context, 'projects', 'https://answers.invalid/never');
  const deferred = await context.slackRequest(context.outputs['SlackCommandsUrl']!, form);
  await context.waitFor('the undeliverable command in the commands DLQ', async () =>
    (await context.stack.queueCounts(dlqUrl)).visible > 0 ? true : undefined,
  );
  context.record(
    'slash command: an answer that cannot be delivered rests in the commands DLQ',
    deferred.status === 200,
    `HTTP ${deferred.status}`,
  );
}

async function buttonScenario(context: ScenarioContext): Promise<void> {
  const ts = context.digestTs;
  if (ts === undefined) throw new Error('no digest to click on (the digest scenario did not post)');
  const slack = context.stack.peers.slack;
  slack.connectApp({
    commandsUrl: context.outputs['SlackCommandsUrl']!,
    interactionsUrl: context.outputs['SlackInteractionsUrl']!,
    signingSecret: context.values.slackSigningSecret,
  });
  const message = slack.messages(context.defaultChannel).find((m) => m.ts === ts);
  const actionId = findButton(message?.blocks ?? [], /mute/i);
  if (actionId === undefined) throw new Error('the digest has no Mute button');
  const answer = await withFetch(context, () => slack.clickButton({ channel: context.defaultChannel, ts, actionId }));
  context.record('button: Mute 7 days on the digest is answered', answer.status === 200, `HTTP ${answer.status}`);
}

async function forgedScenario(context: ScenarioContext): Promise<void> {
  const body = context.runCompletedBody();
  const forged = await context.deliver(body, { secret: 'whsec_not_the_real_one' });
  context.record('forged delivery: refused 401', forged.status === 401, `HTTP ${forged.status} ${forged.text}`);
  const unsigned = await context.slackRequest(context.outputs['SlackCommandsUrl']!, 'command=%2Fvisibility&text=list', 'wrong-secret');
  context.record('forged Slack request: refused 401', unsigned.status === 401, `HTTP ${unsigned.status}`);
}

/** Faults the alarms exist for, each made to happen once. */
async function faultScenarios(context: ScenarioContext): Promise<void> {
  const { stack } = context;
  const quarantined = await context.deliver(context.runCompletedBody({ data: { project_id: context.project() } }));
  context.record('fault: a signed delivery without run_id is quarantined (202)', quarantined.status === 202, `HTTP ${quarantined.status}`);
  const oversized = await context.deliver(context.runCompletedBody({ padding: 'x'.repeat(70_000) }));
  context.record('fault: an oversized delivery is refused (413)', oversized.status === 413, `HTTP ${oversized.status}`);

  // At once: an unusable record put straight on the digest queue, a run and an older run of the
  // same project (superseded), while Slack answers the first post with 429 (waited out).
  const queue = stack.queues().find((q) => q.url === context.outputs['QueueUrl']);
  if (!queue) throw new Error('the stack output QueueUrl names no queue of the template');
  const postsBefore = context.postsIn(context.defaultChannel).length;
  stack.peers.slack.injectFault({ method: 'chat.postMessage', kind: 'ratelimited', times: 1, retryAfterSeconds: 1 });
  const sqs = createSqsClient(stack.peers.sqs.url);
  await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{"not":"an event"}' }));
  sqs.destroy();
  const older = context.runCompletedBody({ created_at: new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z') });
  const newer = await context.deliver(context.runCompletedBody());
  const superseded = await context.deliver(older);
  await stack.settle(30_000);
  stack.peers.slack.clearFaults();
  context.record('fault: an unusable queued record is quarantined, not retried', (await stack.queuedMessages(false)) === 0, '');
  context.record(
    'fault: an older run after a newer one is accepted and superseded',
    newer.status === 200 && superseded.status === 200,
    `HTTP ${newer.status}, ${superseded.status}`,
  );
  const limited = stack.peers.slack.calls('chat.postMessage').some((call) => call.status === 429);
  const postedAfter = context.postsIn(context.defaultChannel).length > postsBefore;
  context.record(
    'fault: a Slack 429 is waited out and the digest posted',
    limited && postedAfter,
    `429 seen: ${limited}, posted: ${postedAfter}`,
  );

  // A response_url that no longer answers: the click's note can't be delivered.
  await slackAnswerUndelivered(context);

  // Environments that die mid-invocation (out of memory, a killed sandbox): Lambda's Errors metric.
  for (const fn of stack.functions.values()) await crashDuringInvocation(context, fn.spec.logicalId);

  // Bad values put in the signing secrets: the functions keep or refuse, and say so.
  await badSecretValues(context);
}

async function slackAnswerUndelivered(context: ScenarioContext): Promise<void> {
  const ts = context.digestTs;
  if (ts === undefined) return;
  const slack = context.stack.peers.slack;
  const message = slack.messages(context.defaultChannel).find((m) => m.ts === ts);
  const actionId = findButton(message?.blocks ?? [], /only|changes|mode/i) ?? findButton(message?.blocks ?? [], /mute/i);
  if (actionId === undefined) return;
  const form = new URLSearchParams({
    payload: JSON.stringify({
      type: 'block_actions',
      team: { id: slack.teamId },
      user: { id: 'U0REHEARSE', name: 'operator', team_id: slack.teamId },
      api_app_id: slack.appId,
      channel: { id: context.defaultChannel },
      container: { type: 'message', message_ts: ts, channel_id: context.defaultChannel },
      message: { ts, text: message?.text ?? '', blocks: message?.blocks ?? [] },
      response_url: 'https://hooks.slack.com/actions/T0/expired',
      actions: [{ ...(findButtonBlock(message?.blocks ?? [], actionId) ?? {}), action_id: actionId, action_ts: String(Date.now() / 1000) }],
    }),
  }).toString();
  const answer = await context.slackRequest(context.outputs['SlackInteractionsUrl']!, form);
  context.record('fault: a click whose response_url has expired is still answered', answer.status === 200, `HTTP ${answer.status}`);
}

async function crashDuringInvocation(context: ScenarioContext, logicalId: string): Promise<void> {
  const { stack } = context;
  const fn = stack.fn(logicalId);
  const errorsBefore = fn.errors;
  fn.recycle();
  // A cold start is long enough to be caught in flight.
  const running = fn.invoke({}).catch(() => undefined);
  await context.waitFor(`${logicalId} in flight`, () => (fn.crashOne() ? true : undefined), 5_000);
  await running;
  context.record(`fault: ${logicalId} environment killed mid-invocation is a function error`, fn.errors > errorsBefore, '');
}

async function badSecretValues(context: ScenarioContext): Promise<void> {
  const { stack, values } = context;
  const ingest = stack.functionOfType('WebhookIngest');
  const slackFn = stack.functionOfType('SlackApp');
  await context.putSecret('SigningSecretsSecretArn', 'whsec_not_a_json_array');
  ingest.recycle();
  const refused = await context.deliver(context.runCompletedBody());
  context.record(
    'fault: an invalid webhook signing secrets value is refused at a cold start (503), not accepted',
    refused.status === 503,
    `HTTP ${refused.status} ${refused.text}`,
  );
  await context.putSecret('SigningSecretsSecretArn', 'PLACEHOLDER');
  ingest.recycle();
  const unset = await context.deliver(context.runCompletedBody());
  context.record(
    'fault: webhook signing secrets still unset answer 503 (the sender retries)',
    unset.status === 503,
    `HTTP ${unset.status}`,
  );
  await context.putSecret('SigningSecretsSecretArn', JSON.stringify([values.webhookSecret]));
  ingest.recycle();
  await context.putSecret('SlackSigningSecretSecretArn', 'PLACEHOLDER');
  slackFn.recycle();
  const unusable = await context.slackRequest(context.outputs['SlackCommandsUrl']!, slashCommandForm(context, 'help'));
  context.record('fault: a Slack signing secret still unset answers 503', unusable.status === 503, `HTTP ${unusable.status}`);
  await context.putSecret('SlackSigningSecretSecretArn', values.slackSigningSecret);
  slackFn.recycle();
  const back = await context.slackRequest(context.outputs['SlackCommandsUrl']!, slashCommandForm(context, 'help'));
  context.record('fault: once put again, the Slack signing secret verifies requests', back.status === 200, `HTTP ${back.status}`);
}

/** More requests at once than the stage's burst: API Gateway answers 429 (and the access log counts them). */
async function floodScenario(context: ScenarioContext): Promise<void> {
  // Not a route: throttling comes before routing, and no function runs for it.
  const url = new URL(`${context.stack.gateway.url}/flood`);
  const wave = 3_000;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  // On a loaded machine one wave can take long enough for the bucket to refill; the next wave comes on top.
  let sent = 0;
  let throttled = 0;
  for (let round = 0; round < 4 && throttled === 0; round++) {
    const statuses = await Promise.all(Array.from({ length: wave }, () => getStatus(url, agent)));
    sent += wave;
    throttled += statuses.filter((status) => status === 429).length;
  }
  agent.destroy();
  context.record(
    `flood: requests at once past the stage's burst are throttled (429)`,
    throttled > 0,
    `${throttled} of ${sent} answered 429`,
  );
}

function getStatus(url: URL, agent: Agent): Promise<number> {
  return new Promise<number>((resolve) => {
    const request = httpRequest(url, { method: 'GET', agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
    request.end();
  });
}

/**
 * A flood of unsigned requests on POST /slack/commands, past that route's own burst: 429 there, while
 * the service's signed deliveries, sent in the middle of it, are still accepted (the webhook's share of
 * the stage throttle is untouched).
 */
async function slackFloodScenario(context: ScenarioContext): Promise<void> {
  const url = new URL(`${context.stack.gateway.url}${HTTP_PATHS.slackCommands}`);
  const count = 600;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  let firstThrottled: () => void = () => undefined;
  const throttledOnce = new Promise<void>((resolve) => (firstThrottled = resolve));
  const flood = Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<number>((resolve) => {
          const headers = { 'content-type': 'application/x-www-form-urlencoded' };
          const request = httpRequest(url, { method: 'POST', agent, headers }, (response) => {
            if (response.statusCode === 429) firstThrottled();
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          });
          request.on('error', () => resolve(0));
          request.end('command=%2Fvisibility&text=help');
        }),
    ),
  );
  await Promise.race([throttledOnce, flood]);
  const deliveries = await Promise.all(Array.from({ length: 3 }, () => context.deliver(context.runCompletedBody())));
  const statuses = await flood;
  agent.destroy();
  await context.stack.settle(30_000);
  const throttled = statuses.filter((status) => status === 429).length;
  context.record(
    `slack flood: ${count} unsigned requests at once on POST ${HTTP_PATHS.slackCommands} past its own burst are throttled (429)`,
    throttled > 0,
    `${throttled} answered 429`,
  );
  context.record(
    'slack flood: the service’s signed deliveries sent during it are accepted (the webhook keeps its throttle)',
    deliveries.every((delivery) => delivery.status >= 200 && delivery.status < 300),
    deliveries.map((delivery) => `HTTP ${delivery.status}`).join(', '),
  );
}

/** Slack down: the digest's record goes to the DLQ after maxReceiveCount; `bridge dlq replay --stack` posts it once. */
async function slackOutageScenario(context: ScenarioContext): Promise<void> {
  const { stack } = context;
  const dlq = stack.queues().find((q) => q.url === context.outputs['DlqUrl']);
  if (!dlq) throw new Error('the stack output DlqUrl names no queue of the template');
  const channel = context.defaultChannel;
  const parkedBefore = (await stack.queueCounts(dlq.url)).visible;
  stack.peers.slack.injectFault({ method: 'chat.postMessage', kind: 'server_error' });
  const body = context.runCompletedBody();
  const eventId = (JSON.parse(body) as { id: string }).id;
  const accepted = await context.deliver(body);
  context.record('slack outage: the delivery is accepted', accepted.status === 200, `HTTP ${accepted.status}`);
  await context.waitFor(
    'the record in the DLQ',
    async () => ((await stack.queueCounts(dlq.url)).visible > parkedBefore ? true : undefined),
    60_000,
  );
  context.record('slack outage: after maxReceiveCount receives the record rests in the DLQ', true, '');
  stack.peers.slack.clearFaults();
  const before = context.postsIn(channel).length;
  const replay = await context.bridge(['dlq', 'replay', '--stack', stack.stackName, '--event-id', eventId]);
  context.record(
    `slack outage: npx bridge dlq replay --stack ${stack.stackName}`,
    replay.code === 0,
    `exit ${replay.code}: ${replay.stdout} ${replay.stderr}`.slice(0, 600),
  );
  await context.waitFor('the replayed digest', () => (context.postsIn(channel).length > before ? true : undefined), 30_000);
  await stack.settle(10_000);
  const posted = context.postsIn(channel).length - before;
  context.record('slack outage: the replayed digest is posted exactly once', posted === 1, `${posted} digests`);
}

/** A new webhook secret added with `bridge secrets signing add`: deliveries signed with either verify. */
async function rotationScenario(context: ScenarioContext): Promise<void> {
  const { stack, values } = context;
  const next = `whsec_${randomBytes(16).toString('hex')}`;
  const added = await context.bridge(['secrets', 'signing', 'add', '--stack', stack.stackName], `${next}\n`);
  context.record(
    `rotation: npx bridge secrets signing add --stack ${stack.stackName}`,
    added.code === 0,
    lastLine(added.stderr || added.stdout),
  );
  // A new environment reads the secret at once; a warm one within SECRETS_CACHE_SECONDS.
  stack.functionOfType('WebhookIngest').recycle();
  const withNew = await context.deliver(context.runCompletedBody(), { secret: next });
  const withOld = await context.deliver(context.runCompletedBody(), { secret: values.webhookSecret });
  context.record(
    'rotation: a delivery signed with the new secret is accepted',
    withNew.status === 200,
    `HTTP ${withNew.status} ${withNew.text}`,
  );
  context.record('rotation: the old secret still verifies until removed', withOld.status === 200, `HTTP ${withOld.status}`);
}

// -------------------------------------------------------------------------------------------------
// Checks
// -------------------------------------------------------------------------------------------------

/** Every AWS call each function made, evaluated against that function's role policies from the template. */
export async function checkIamCalls(stack: RehearsedStack): Promise<Check[]> {
  const checks: Check[] = [];
  const calls = stack.peers.recorder.calls();
  for (const logicalId of stack.functions.keys()) {
    const roleArn = stack.resolve(stack.stack.template.Resources[logicalId]!.Properties?.['Role']) as string;
    const roleLogicalId = Object.keys(stack.stack.template.Resources).find(
      (id) => stack.context.resources[id]?.attributes['Arn'] === roleArn,
    );
    if (!roleLogicalId) {
      checks.push({ name: `IAM: ${logicalId}'s role`, ok: false, detail: `role ${roleArn} is not in the template` });
      continue;
    }
    const policies = rolePolicies(stack.stack.template, roleLogicalId, stack.context);
    const own = calls.filter((call) => call.principal === logicalId);
    const verdicts = await checkCalls(policies, own);
    const denied = verdicts.filter((verdict) => !verdict.allowed);
    const distinct = new Set(own.map((call) => `${call.action} ${call.resources.join(',')}`));
    checks.push({
      name: `IAM: every AWS call of ${logicalId} is allowed by its role (${own.length} calls, ${distinct.size} distinct)`,
      ok: denied.length === 0,
      detail: denied
        .slice(0, 5)
        .map((verdict) => describeDenial(verdict, policies))
        .join('\n'),
    });
  }
  return checks;
}

/** What a stack's functions, the platform and its access-log metric filters emitted during the rehearsal. */
function metricsEmitted(stack: RehearsedStack): MetricId[] {
  const emitted: MetricId[] = [...emfMetrics(stack.lines.map((line) => jsonPart(line.line))), ...stack.platformMetrics];
  for (const filter of metricFilters(stack.stack.template, (value) => stack.resolve(value))) {
    for (const entry of stack.accessLog) {
      const metric = metricFromLogLine(filter, entry.line);
      if (metric) emitted.push(metric);
    }
  }
  return emitted;
}

/** Alarms (resolved against the first stack) against what all the stacks emitted. */
function metricChecks(stacks: readonly RehearsedStack[], projectRoot: string): Check[] {
  const [first] = stacks;
  if (!first) return [];
  const emitted = stacks.flatMap(metricsEmitted);
  const alarms = alarmMetrics(first.stack.template, (value) => first.resolve(value));
  const reasons = unalarmedReasonsFrom(readFileSync(join(projectRoot, 'docs/DEPLOY.md'), 'utf8'));
  const coverage = alarmCoverage({ alarms, emitted, unalarmedReasons: reasons });
  return [
    {
      name: `metrics: every alarm's metric was emitted in a scenario (${new Set(alarms.map((a) => a.alarm)).size} alarms)`,
      ok: coverage.silentAlarms.length === 0,
      detail: JSON.stringify(coverage.silentAlarms),
    },
    {
      name: 'metrics: every failure metric the code emits has an alarm or a reason in docs/DEPLOY.md',
      ok: coverage.unwatchedFailures.length === 0,
      detail: JSON.stringify(coverage.unwatchedFailures),
    },
  ];
}

function checkNoSecretsLogged(
  stack: RehearsedStack,
  values: OperatorValues,
  record: (name: string, ok: boolean, detail: string) => void,
): void {
  const secrets = [
    values.webhookSecret,
    values.readApiKey,
    values.slackToken,
    values.slackSigningSecret,
    // The action-signing key the stack generated (GenerateSecretString), unseen by any operator.
    ...Object.values(stack.resources.generatedSecrets),
  ].filter((value) => value.length >= 8);
  const leaked = stack.lines.filter((line) => secrets.some((secret) => line.line.includes(secret)));
  record(
    `logs: no secret value in any of the ${stack.lines.length} lines the functions printed`,
    leaked.length === 0,
    leaked
      .slice(0, 2)
      .map((line) => `${line.functionLogicalId}: ${line.line.slice(0, 120)}`)
      .join('\n'),
  );
}

// -------------------------------------------------------------------------------------------------
// Helpers
// -------------------------------------------------------------------------------------------------

/** `aws secretsmanager put-secret-value --region R --secret-id ARN --secret-string '<…>'` with the real value in place of `<…>`. */
export function parsePutSecretCommand(command: string, value: string): { secretId: string; secretString: string } | { problem: string } {
  const args = splitArgs(command);
  if (args[0] !== 'aws' || args[1] !== 'secretsmanager' || args[2] !== 'put-secret-value') {
    return { problem: `not an aws secretsmanager put-secret-value command: ${command}` };
  }
  const option = (name: string): string | undefined => {
    const index = args.indexOf(name);
    return index >= 0 ? args[index + 1] : undefined;
  };
  const secretId = option('--secret-id');
  const template = option('--secret-string');
  if (!secretId || template === undefined) return { problem: `--secret-id or --secret-string missing: ${command}` };
  if (!/<[^>]+>/.test(template)) return { problem: `--secret-string has no <placeholder> for the value: ${command}` };
  return { secretId, secretString: template.replace(/<[^>]+>/, value) };
}

function outputKeyOfSecret(context: ScenarioContext, secretId: string): string {
  const key = Object.entries(context.outputs).find(([name, value]) => name.endsWith('SecretArn') && value === secretId)?.[0];
  if (!key) throw new Error(`the put command names ${secretId}, which no *SecretArn output has`);
  return key;
}

/** Shell-like split: spaces, single and double quotes (what the documented commands use). */
export function splitArgs(line: string): string[] {
  const args: string[] = [];
  const pattern = /'([^']*)'|"((?:\\.|[^"\\])*)"|(\S+)/g;
  for (const match of line.matchAll(pattern)) args.push(match[1] ?? match[2]?.replace(/\\(.)/g, '$1') ?? match[3]!);
  return args;
}

function describeSecretValue(value: string): string {
  return value.trim().startsWith('[') ? 'a JSON array' : 'a plain string';
}

function lastLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .at(-1) ?? ''
  ).slice(0, 200);
}

function jsonPart(line: string): string {
  const start = line.indexOf('{');
  return start >= 0 ? line.slice(start) : line;
}

function findButton(blocks: unknown[], pattern: RegExp): string | undefined {
  return findButtonBlock(blocks, undefined, pattern)?.['action_id'] as string | undefined;
}

function findButtonBlock(blocks: unknown[], actionId?: string, pattern?: RegExp): Record<string, unknown> | undefined {
  for (const block of blocks as { elements?: Record<string, unknown>[] }[]) {
    for (const element of block.elements ?? []) {
      if (element['type'] !== 'button') continue;
      const id = typeof element['action_id'] === 'string' ? element['action_id'] : '';
      if (actionId !== undefined ? id === actionId : pattern?.test(id)) return element;
    }
  }
  return undefined;
}

/** Runs `work` with this process's fetch on the rehearsal's network (the local Slack server delivers clicks with it). */
async function withFetch<T>(context: ScenarioContext, work: () => Promise<T>): Promise<T> {
  const original = globalThis.fetch;
  globalThis.fetch = egressFetch(context.stack.egress);
  try {
    return await work();
  } finally {
    globalThis.fetch = original;
  }
}
