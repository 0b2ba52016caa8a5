/**
 * `bridge smoke`: the end-to-end check after a deploy. Sends one signed `run.completed` to the stack's
 * webhook (signed with the stack's own signing secret) and follows it through the stack's own records:
 *   accepted  the webhook's HTTP answer (200 accepted)
 *   queued    the ingest dedup record `delivery#<id>` completed (the message is on the digest queue)
 *   digested  the digest claim `digest#<id>` exists: the digest function took the event up and read its figures
 *   posted    the claim is `posted`, with each channel's message ts (`post#<channel>#<id>`)
 * polling until all pass or `--timeout` (60 s). Exit 0 when every hop passes; 1 naming the hop that
 * failed and its fix (a message found in the DLQ ends the wait at once).
 */
import { randomUUID } from 'node:crypto';
import { AWS_OPTIONS, buildContext, formatAge, str, type CommandContext, type Parsed } from '../args';
import { parseDuration } from '../../shared/duration';
import { dynamoClient, endpointFor, sqsClient, STACK_OUTPUTS } from '../aws';
import { UsageError } from '../errors';
import type { LeafDef } from '../command-spec';
import type { CliIo } from '../io';
import { needLocal } from '../ready-file';
import type { CommandResult } from '../result';
import { defaultProjectId, stackSigningSecret } from '../webhook-target';
import { buildDelivery, deliveryHeaders, liveLocalSecret, postDelivery } from './send';
import { pickUpTime } from './secrets';
import type { DlqMessage } from './dlq/queue';
import {
  findInDlq,
  readChannelPosts,
  readDelivery,
  readDigestClaim,
  type ClaimView,
  type DeliveryView,
  type StackRecords,
} from './smoke-records';
import type { FallbackRouting } from '../../shared/routing';

export const SMOKE: LeafDef = {
  summary: 'one signed delivery, followed hop by hop to Slack',
  synopsis: '--stack NAME [--project ID] [--timeout DURATION] [--json] [options]',
  description: `The check after a deploy: sends one signed run.completed to the stack's webhook (output WebhookUrl,
signed with the stack's own signing secret from Secrets Manager) and follows it through the stack's
own records, hop by hop:
  accepted   the webhook answered 200 "accepted"
  queued     ingest's dedup record delivery#<id> is completed (the message is on the digest queue)
  digested   the digest claim digest#<id> exists: the digest function took the event up
  posted     the claim is posted, with each channel's message ts (post#<channel>#<id>)
It waits up to --timeout for the last hop; a message found in the DLQ ends the wait. Exit 0 when
every hop passes, 1 naming the hop that failed and its fix. This posts a real digest of the project
to its channels (the run id starts with smoke-).
Without --stack it checks the running \`npm start\` (\`npx bridge smoke\`).`,
  options: {
    project: {
      value: 'ID',
      help: "the project of the test run (default: the first project in the stack's SlackProjectChannels, else the first the read API lists with the stack's key)",
    },
    timeout: { value: 'DURATION', help: 'how long to wait for the records (default 60s; 90, 90s, 2m)' },
    ...AWS_OPTIONS,
  },
  run: smokeCommand,
};

export const DEFAULT_SMOKE_TIMEOUT_MS = 60_000;
const MAX_TIMEOUT_MS = 15 * 60_000;
/** How often the DLQ is looked at while waiting (a peek hides its messages for a moment). */
const DLQ_CHECK_INTERVAL_MS = 5_000;

export type HopName = 'accepted' | 'queued' | 'digested' | 'posted';
export interface Hop {
  hop: HopName;
  status: 'ok' | 'fail' | 'skip';
  detail: string;
  fix?: string;
}

/** Everything smoke needs of the stack it checks. */
interface SmokeTarget {
  label: string;
  webhookUrl: string;
  secret: string;
  projectId: string;
  tableName: string;
  dlqUrl: string | undefined;
  fallback: FallbackRouting;
}

/** What the records showed by the end of the wait. */
interface Observed {
  delivery: DeliveryView | undefined;
  claim: ClaimView | undefined;
  posts: { channel: string; claim: ClaimView | undefined }[];
  dlq: DlqMessage | undefined;
  waitedMs: number;
}

/** `--timeout 90`, `90s`, `2m`. */
function timeoutOf(parsed: Parsed): number {
  const raw = str(parsed, 'timeout');
  if (raw === undefined) return DEFAULT_SMOKE_TIMEOUT_MS;
  const ms = /^\d+$/.test(raw) ? Number(raw) * 1000 : parseDuration(raw)?.ms;
  if (ms === undefined || ms < 1000 || ms > MAX_TIMEOUT_MS)
    throw new UsageError(`--timeout must be a duration from 1s to 15m, like 60, 90s or 2m, got "${raw}"`, 'smoke');
  return ms;
}

function channelMap(text: string | undefined): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(text ?? '{}');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  } catch {
    return {};
  }
}

async function projectOf(parsed: Parsed, ctx: CommandContext): Promise<string> {
  const projectId = str(parsed, 'project') ?? (await defaultProjectId(ctx));
  if (projectId === undefined)
    throw new UsageError(
      'name the project with --project ID: the stack routes no project to a channel (SlackProjectChannels) and the read API listed none',
      'smoke',
    );
  return projectId;
}

async function targetOf(parsed: Parsed, ctx: CommandContext): Promise<SmokeTarget> {
  const local = ctx.local;
  if (local !== undefined) {
    return {
      label: `the local stack (${local.path})`,
      webhookUrl: needLocal(local, local.webhookUrl, 'webhookUrl'),
      secret: await liveLocalSecret(ctx, local),
      projectId: await projectOf(parsed, ctx),
      tableName: needLocal(local, local.tableName, 'tableName'),
      dlqUrl: local.dlqUrl,
      fallback: { defaultChannel: local.slackDefaultChannel ?? '', projectChannels: local.slackProjectChannels },
    };
  }
  const webhookUrl = await ctx.stack.require(STACK_OUTPUTS.webhookUrl);
  const tableName = await ctx.stack.require(STACK_OUTPUTS.tableName);
  return {
    label: `stack ${ctx.stack.stackName}`,
    webhookUrl,
    secret: await stackSigningSecret(ctx, '--stack'),
    projectId: await projectOf(parsed, ctx),
    tableName,
    dlqUrl: await ctx.stack.optional(STACK_OUTPUTS.dlqUrl),
    fallback: {
      defaultChannel: (await ctx.stack.optional(STACK_OUTPUTS.slackDefaultChannel)) ?? '',
      projectChannels: channelMap(await ctx.stack.optional(STACK_OUTPUTS.slackProjectChannels)),
    },
  };
}

// --- hop 1: the webhook's answer ---------------------------------------------------------------

function acceptedHop(status: number | null, body: string | null, error: string | null, latencyMs: number, ctx: CommandContext): Hop {
  const answer = status === null ? (error ?? 'no answer') : `HTTP ${status} ${(body ?? '').replace(/\s+/g, ' ').trim()}`.trim();
  const detail = `${answer} (${latencyMs} ms)`;
  let result: unknown;
  try {
    result = (JSON.parse(body ?? '') as { result?: unknown }).result;
  } catch {
    result = undefined;
  }
  if (status !== null && status >= 200 && status < 300 && result === 'accepted') return { hop: 'accepted', status: 'ok', detail };
  return { hop: 'accepted', status: 'fail', detail, fix: acceptedFix(status, body, result, ctx) };
}

function acceptedFix(status: number | null, body: string | null, result: unknown, ctx: CommandContext): string {
  if (result === 'quarantined') return `the stack kept the delivery in the DLQ with its reason: \`${ctx.hint('dlq peek')}\``;
  if (status === null) return 'check the WebhookUrl output, and that this machine can reach it';
  if (status === 401)
    return `the webhook refused the stack's own signature: the ingest function may still use an older signing secret (it re-reads ${pickUpTime(ctx)}) — wait and run smoke again; \`${ctx.hint('secrets signing list')}\` shows what is set`;
  if (status === 503 && (body ?? '').includes('secrets'))
    return `the ingest function cannot use its signing secrets: \`${ctx.hint('doctor')}\``;
  return `see the ingest function's log: \`${ctx.hint('tail')}\``;
}

// --- hops 2–4: the stack's records -------------------------------------------------------------

const POSTING_FAILURE = /^(Slack|ChannelPaceDeferred|ClaimBusyError)/;

/** Whether the claim's failure happened while posting (Slack, pacing) rather than while reading the figures. */
function failedWhilePosting(seen: Observed): boolean {
  if (seen.posts.some((p) => p.claim?.lastFailure !== undefined || p.claim?.mainTs !== undefined)) return true;
  const failure = seen.claim?.lastFailure;
  return seen.claim?.mainTs !== undefined || (failure !== undefined && POSTING_FAILURE.test(failure));
}

function lastFailure(seen: Observed): string | undefined {
  return seen.posts.find((p) => p.claim?.lastFailure !== undefined)?.claim?.lastFailure ?? seen.claim?.lastFailure ?? seen.dlq?.reason;
}

/** The fix for a failed record hop: the DLQ when the message is there, else what the failure points at. */
function recordFix(seen: Observed, eventId: string, ctx: CommandContext, otherwise: string): string {
  if (seen.dlq !== undefined)
    return `\`${ctx.hint('dlq peek')}\` shows why; once the cause is fixed, \`${ctx.hint(`dlq replay --event-id ${eventId}`)}\``;
  return otherwise;
}

function queuedHop(seen: Observed, eventId: string, ctx: CommandContext): Hop {
  const key = `delivery#${eventId}`;
  if (seen.delivery?.state === 'completed')
    return {
      hop: 'queued',
      status: 'ok',
      detail: `${key} completed${seen.delivery.acceptedAt !== undefined ? ` at ${seen.delivery.acceptedAt}` : ''}`,
    };
  const detail =
    seen.delivery === undefined
      ? `no ${key} record after ${formatAge(seen.waitedMs)}`
      : `${key} is still ${seen.delivery.state ?? 'without a state'}`;
  return {
    hop: 'queued',
    status: 'fail',
    detail,
    fix: `the webhook answered but ingest recorded nothing in this table: check the stack's TableName output and the ingest log (\`${ctx.hint('tail')}\`)`,
  };
}

function digestedHop(seen: Observed, eventId: string, ctx: CommandContext): Hop {
  const key = `digest#${eventId}`;
  const claim = seen.claim;
  if (claim === undefined) {
    const detail =
      seen.dlq !== undefined
        ? `not taken up: the message is in the DLQ${seen.dlq.reason !== undefined ? ` with reason ${seen.dlq.reason}` : ''}`
        : `no ${key} claim after ${formatAge(seen.waitedMs)}`;
    return {
      hop: 'digested',
      status: 'fail',
      detail,
      fix: recordFix(
        seen,
        eventId,
        ctx,
        `the digest function did not take the message up: check that its SQS trigger is enabled and its log (\`${ctx.hint('tail')}\`); \`${ctx.hint('dlq stats')}\` shows the queue`,
      ),
    };
  }
  const attempt = `attempt ${claim.attempts}`;
  if (claim.lastFailure !== undefined && claim.state === 'in_progress' && !failedWhilePosting(seen)) {
    return {
      hop: 'digested',
      status: 'fail',
      detail: `${key} failed (${attempt}): ${claim.lastFailure}${seen.dlq !== undefined ? '; the message is in the DLQ' : ''}`,
      fix: recordFix(
        seen,
        eventId,
        ctx,
        `the digest function retries it; check the read-API key and ReadApiBaseUrl with \`${ctx.hint('doctor')}\`, and follow it with \`${ctx.hint('tail')}\``,
      ),
    };
  }
  return { hop: 'digested', status: 'ok', detail: `${key} claimed (${attempt})` };
}

function postedHop(seen: Observed, eventId: string, projectId: string, ctx: CommandContext): Hop {
  const claim = seen.claim;
  const postedTo = seen.posts.filter((p) => p.claim?.mainTs !== undefined).map((p) => `${p.channel} ts ${p.claim?.mainTs ?? ''}`);
  if (claim?.state === 'posted') {
    const where =
      postedTo.length > 0 ? postedTo.join(', ') : claim.channel !== undefined ? `${claim.channel} ts ${claim.mainTs ?? '?'}` : 'posted';
    return { hop: 'posted', status: 'ok', detail: where };
  }
  if (claim?.state === 'skipped')
    return {
      hop: 'posted',
      status: 'fail',
      detail: 'the digest was skipped: every channel of the project muted it, or a newer run of the project was digested first',
      fix: `see the project's channels with \`${ctx.hint(`subscriptions list --project ${projectId}`)}\``,
    };
  const failure = lastFailure(seen);
  const so = postedTo.length > 0 ? ` (posted so far: ${postedTo.join(', ')})` : '';
  if (failure === undefined)
    return {
      hop: 'posted',
      status: 'fail',
      detail: `not posted after ${formatAge(seen.waitedMs)}, no failure recorded yet${so}`,
      fix: `the digest may still be on its way: follow it with \`${ctx.hint('tail')}\`, or run smoke again with --timeout 2m`,
    };
  return {
    hop: 'posted',
    status: 'fail',
    detail: `not posted (attempt ${claim?.attempts ?? '?'}): ${failure}${seen.dlq !== undefined ? '; the message is in the DLQ' : ''}${so}`,
    fix: recordFix(
      seen,
      eventId,
      ctx,
      `check the Slack token and that the bot is in each channel (\`${ctx.hint('doctor')}\`); the digest function retries it, then the DLQ keeps it (\`${ctx.hint('dlq peek')}\`)`,
    ),
  };
}

function recordHops(seen: Observed, eventId: string, projectId: string, ctx: CommandContext): Hop[] {
  const hops: Hop[] = [queuedHop(seen, eventId, ctx)];
  const next = [() => digestedHop(seen, eventId, ctx), () => postedHop(seen, eventId, projectId, ctx)];
  for (const hop of next) hops.push(hops.some((h) => h.status !== 'ok') ? skipped(hop().hop) : hop());
  return hops;
}

function skipped(hop: HopName): Hop {
  return { hop, status: 'skip', detail: 'not reached' };
}

// --- waiting -----------------------------------------------------------------------------------

/** Done: the claim finished (posted or skipped), or the message sits in the DLQ. */
function settled(seen: Observed): boolean {
  return seen.claim?.state === 'posted' || seen.claim?.state === 'skipped' || seen.dlq !== undefined;
}

function waitingFor(seen: Observed): HopName {
  if (seen.delivery?.state !== 'completed') return 'queued';
  return seen.claim === undefined ? 'digested' : 'posted';
}

async function watch(
  records: StackRecords,
  target: SmokeTarget,
  eventId: string,
  timeoutMs: number,
  ctx: CommandContext,
): Promise<Observed> {
  const started = ctx.now();
  const seen: Observed = { delivery: undefined, claim: undefined, posts: [], dlq: undefined, waitedMs: 0 };
  const progress = ctx.out.progress();
  const interval = ctx.io.pollIntervalMs ?? 1000;
  let nextDlqCheck = started + DLQ_CHECK_INTERVAL_MS;
  try {
    for (;;) {
      if (seen.delivery?.state !== 'completed') seen.delivery = await readDelivery(records, eventId);
      if (seen.delivery?.state === 'completed') seen.claim = await readDigestClaim(records, eventId);
      const now = ctx.now();
      seen.waitedMs = now - started;
      const timedOut = seen.waitedMs >= timeoutMs;
      if (!settled(seen) && (now >= nextDlqCheck || timedOut)) {
        seen.dlq = await findInDlq(records, eventId, ctx.now);
        nextDlqCheck = now + DLQ_CHECK_INTERVAL_MS;
      }
      if (settled(seen) || timedOut) break;
      progress.update(`waiting for ${waitingFor(seen)}… ${formatAge(seen.waitedMs)}`);
      await ctx.sleep(interval);
    }
  } finally {
    progress.done();
  }
  if (seen.claim !== undefined)
    seen.posts = await readChannelPosts(records, eventId, target.projectId, target.fallback, ctx.now(), seen.claim.channel);
  return seen;
}

// --- command -----------------------------------------------------------------------------------

const MARK: Record<Hop['status'], string> = { ok: '✓', fail: '✗', skip: '-' };

function printHops(ctx: CommandContext, hops: readonly Hop[]): void {
  for (const hop of hops) {
    ctx.out.say(`${MARK[hop.status]} ${hop.hop.padEnd(9)} ${hop.detail}`);
    if (hop.fix !== undefined) ctx.out.say(`    fix: ${hop.fix}`);
  }
}

async function followRecords(target: SmokeTarget, eventId: string, timeoutMs: number, ctx: CommandContext): Promise<Hop[]> {
  const dynamo = dynamoClient(ctx.settings);
  const sqs = sqsClient(ctx.settings);
  const records: StackRecords = {
    dynamo,
    sqs,
    tableName: target.tableName,
    dlq: target.dlqUrl !== undefined ? { url: target.dlqUrl, endpoint: endpointFor(ctx.settings, 'sqs') } : undefined,
    dynamoEndpoint: endpointFor(ctx.settings, 'dynamodb'),
  };
  try {
    return recordHops(await watch(records, target, eventId, timeoutMs, ctx), eventId, target.projectId, ctx);
  } finally {
    dynamo.destroy();
    sqs.destroy();
  }
}

async function smokeCommand(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const timeoutMs = timeoutOf(parsed);
  const ctx = await buildContext(parsed, io);
  const target = await targetOf(parsed, ctx);
  const started = ctx.now();

  const delivery = buildDelivery({ type: 'run.completed', projectId: target.projectId, runId: `smoke-${randomUUID()}`, answers: 0 });
  const eventId = delivery.event.id;
  ctx.out.say(`smoke test of ${target.label}: run.completed for project ${target.projectId}, delivery ${eventId}`);
  const headers = deliveryHeaders(delivery.event, delivery.body, target.secret, Math.floor(ctx.now() / 1000));
  const answer = await postDelivery(ctx.fetch, target.webhookUrl, delivery.body, headers, ctx.now);
  const accepted = acceptedHop(answer.status, answer.body, answer.error, answer.latencyMs, ctx);
  const hops =
    accepted.status === 'ok'
      ? [accepted, ...(await followRecords(target, eventId, timeoutMs, ctx))]
      : [accepted, skipped('queued'), skipped('digested'), skipped('posted')];
  printHops(ctx, hops);

  const failed = hops.find((h) => h.status === 'fail');
  const elapsedMs = ctx.now() - started;
  ctx.out.say(failed === undefined ? `all 4 hops passed in ${formatAge(elapsedMs)}` : `smoke failed at ${failed.hop}`);
  return {
    exitCode: failed === undefined ? 0 : 1,
    json: {
      ok: failed === undefined,
      target: target.label,
      webhookUrl: target.webhookUrl,
      eventId,
      projectId: target.projectId,
      failedHop: failed?.hop ?? null,
      hops,
      elapsedMs,
    },
  };
}
