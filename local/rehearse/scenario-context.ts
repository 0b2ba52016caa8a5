/**
 * What every rehearsal scenario is handed: the rehearsed stack, the values the operator puts, and the
 * ways a scenario talks to the stack as the service, Slack and the operator do (a signed delivery, a
 * signed Slack request, `npx bridge …`, a message on a queue).
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type Agent, type OutgoingHttpHeaders } from 'node:http';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { METRIC_DIMENSIONS } from '../../shared/contracts';
import { signPayload } from '../../shared/signature';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { createSecretsManagerClient } from '../secrets-manager-server';
import { emfMetrics } from './alarm-coverage';
import { egressFetch, type RehearsedStack } from './rehearsed-stack';

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

/** The values the operator puts: what the service, Slack and the rehearsal's own key would hand out. */
export interface OperatorValues {
  webhookSecret: string;
  readApiKey: string;
  slackToken: string;
  slackSigningSecret: string;
  /** The Slack app's client secret (App Credentials): the local Slack's, as Slack shows it. */
  slackClientSecret: string;
}

export type RecordCheck = (name: string, ok: boolean, detail: string) => void;

/** Where a scenario's results and progress go (the runner prints them as they come). */
export interface RehearsalLog {
  record: RecordCheck;
  /** A check that cannot run at this step of the runbook, and why. */
  skip(name: string, reason: string): void;
  /** A line that says what the rehearsal is doing or waiting for. */
  progress(line: string): void;
}

/** How often a wait says it is still waiting. */
const PROGRESS_EVERY_MS = 10_000;

export class ScenarioContext {
  digestTs: string | undefined;
  /** fetch on the rehearsal's network: public hosts (slack.com, the API's) reach their local peers, as a browser's would. */
  readonly fetch: typeof fetch;

  readonly record: RecordCheck;

  constructor(
    readonly stack: RehearsedStack,
    readonly values: OperatorValues,
    readonly projectRoot: string,
    private readonly runCli: CliRunner,
    readonly log: RehearsalLog,
  ) {
    this.fetch = egressFetch(stack.egress);
    this.record = log.record;
  }

  /**
   * Why the stage's Slack app serves nobody yet, or undefined once it names its workspace and app: at
   * runbook step 2 both are empty (the app does not exist), and step 9 fills them in.
   */
  unconfiguredWorkspace(): string | undefined {
    const { teamId, enterpriseId, appId } = this.stack.slackIdentity;
    if ((teamId !== undefined || enterpriseId !== undefined) && appId !== undefined) return undefined;
    const stage = this.stack.stackName.replace(/^VisibilitySlackBridge-/, '');
    return (
      `the Slack routes answer 403 workspace_not_configured until "slackTeamIds" and "slackAppId" are set in config/${stage}.json ` +
      '(docs/DEPLOY.md step 9, after the Slack app exists)'
    );
  }

  /** Why the stage has no "Add to Slack" (no SlackInstallUrl output), or undefined when it has. */
  undistributed(): string | undefined {
    if (this.outputs['SlackInstallUrl'] !== undefined) return undefined;
    const stage = this.stack.stackName.replace(/^VisibilitySlackBridge-/, '');
    return `the stage has no "Add to Slack" until "slackClientId" is set in config/${stage}.json (docs/AGENCIES-SLACK.md)`;
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

  /** POSTs a delivery to the stack's WebhookUrl (or a connection's `url`), as the service does. */
  async deliver(
    body: string,
    options: { secret?: string | undefined; signature?: string; url?: string } = {},
  ): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Service-Webhooks/1' };
    const signature = options.signature ?? signPayload(options.secret ?? this.values.webhookSecret, Math.floor(Date.now() / 1000), body);
    headers['x-service-signature'] = signature;
    const id = (JSON.parse(body) as { id?: unknown }).id;
    if (typeof id === 'string') headers['x-service-delivery'] = id;
    const response = await this.fetch(options.url ?? this.outputs['WebhookUrl']!, { method: 'POST', headers, body });
    return { status: response.status, text: await response.text() };
  }

  /** A delivery that must be accepted for the scenario to go on. */
  async deliverAccepted(what: string, body: string): Promise<void> {
    const answer = await this.deliver(body);
    if (answer.status !== 200) throw new Error(`${what} was not accepted: HTTP ${answer.status} ${answer.text.slice(0, 120)}`);
  }

  runCompletedBody(overrides: Record<string, unknown> = {}, projectId = this.project()): string {
    return JSON.stringify({
      id: `evt_rehearsal_${randomBytes(6).toString('hex')}`,
      type: 'run.completed',
      created_at: isoSeconds(Date.now()),
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

  /**
   * Polls `probe` until it yields a value. Says every 10 s what it is still waiting for; on time-out the
   * error names what never came and the last error a function logged meanwhile (the likely cause).
   */
  async waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    const started = Date.now();
    const firstLine = this.stack.lines.length;
    let nextProgress = started + PROGRESS_EVERY_MS;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      const now = Date.now();
      if (now - started > timeoutMs) {
        const cause = lastFunctionError(this.stack, firstLine);
        throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${cause ? `; last function error: ${cause}` : ''}`);
      }
      if (now >= nextProgress) {
        this.log.progress(`… still waiting for ${what} (${Math.round((now - started) / 1000)} s of ${timeoutMs / 1000} s)`);
        nextProgress += PROGRESS_EVERY_MS;
      }
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

  /** A message put straight on the queue a stack output (`QueueUrl`, …) names, as the schedule's target or a stray producer does. */
  async sendToQueue(outputKey: string, body: string): Promise<void> {
    const url = this.outputs[outputKey];
    if (!url) throw new Error(`the stack has no output ${outputKey}`);
    await this.stack.sqsClient.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
  }

  /**
   * How often the stack's functions emitted the metric so far (their EMF lines): its totals only, not the
   * per-tenant breakdown records emitted beside them.
   */
  metricCount(name: string): number {
    return emfMetrics(this.stack.lines.map((line) => line.line)).filter(
      (metric) => metric.name === name && metric.dimensions[METRIC_DIMENSIONS.tenant] === undefined,
    ).length;
  }

  /** Waits until the functions emitted the metric more than `before` times. */
  async waitForMetric(name: string, before: number, timeoutMs?: number): Promise<void> {
    await this.waitFor(`${name} emitted`, () => (this.metricCount(name) > before ? true : undefined), timeoutMs);
  }

  /** Runs `work` with this process's fetch on the rehearsal's network (the local Slack server delivers clicks with it). */
  async withEgressFetch<T>(work: () => Promise<T>): Promise<T> {
    const original = globalThis.fetch;
    globalThis.fetch = this.fetch;
    try {
      return await work();
    } finally {
      globalThis.fetch = original;
    }
  }
}

export type Scenario = (context: ScenarioContext) => Promise<void>;

/** The last line at ERROR level a function printed from line `from` on, shortened: `Function: message`. */
function lastFunctionError(stack: RehearsedStack, from: number): string | undefined {
  const line = stack.lines
    .slice(from)
    .reverse()
    .find((entry) => /"level":"ERROR"|\bERROR\b/.test(entry.line));
  if (line === undefined) return undefined;
  const message = /"message":"((?:\\.|[^"\\])*)"/.exec(line.line)?.[1] ?? line.line;
  return `${line.functionLogicalId}: ${message.slice(0, 200)}`;
}

/** `2026-01-01T00:00:00Z`: the service's timestamps, to the second. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The event id of a delivery body. */
export function idOf(body: string): string {
  return (JSON.parse(body) as { id: string }).id;
}

/** A command's output as a one-line detail: its last non-blank line (where the CLI says how it ended). */
export function lastLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .at(-1) ?? ''
  ).slice(0, 200);
}

/**
 * Why a command failed, as it said: its ✗ lines with their `fix:` lines (doctor, smoke), else its
 * last line; never the `using stack …` notice, which says nothing about the failure.
 */
export function whyFailed(result: CliRunResult): string {
  const lines = `${result.stdout}\n${result.stderr}`.split('\n').filter((line) => line.trim() !== '' && !/^using stack /.test(line));
  const marked = lines.flatMap((line, index) => {
    if (!line.startsWith('✗')) return [];
    const next = lines[index + 1]?.trim();
    return next?.startsWith('fix:') ? [line.trim(), next] : [line.trim()];
  });
  return marked.length > 0 ? marked.join('\n') : `exit ${result.code}: ${lastLine(lines.join('\n'))}`;
}

export function answerOf(answer: { status: number; text: string }): string {
  return `HTTP ${answer.status} ${answer.text.slice(0, 120)}`;
}

/**
 * One plain HTTP request's status (0 when the connection failed), on the caller's agent: a flood sends
 * thousands at once, more than fetch's pool would let through together.
 */
export function requestStatus(
  url: URL,
  agent: Agent,
  init: { method: string; headers?: OutgoingHttpHeaders; body?: string },
  onStatus: (status: number) => void = () => undefined,
): Promise<number> {
  return new Promise<number>((resolve) => {
    const request = httpRequest(url, { method: init.method, agent, headers: init.headers ?? {} }, (response) => {
      onStatus(response.statusCode ?? 0);
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
    request.end(init.body);
  });
}
