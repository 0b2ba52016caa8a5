/**
 * `bridge tail`: deliveries, digests and failures as they happen. Local stack: the NDJSON stream
 * `npm start` serves (eventsUrl in the ready file). Deployed stack: the two functions' CloudWatch
 * log groups, polled with FilterLogEvents. `--json` prints each raw event as one JSON line.
 * Runs until Ctrl-C (exit 0); when the local stack stops it says so and waits for `npm start` to come back.
 */
import { FilterLogEventsCommand, type CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { AWS_OPTIONS, bool, buildContext, duration, type CommandContext, type Parsed } from '../args';
import type { LeafDef } from '../command-spec';
import { logsClient, STACK_OUTPUTS } from '../aws';
import { colours } from '../colour';
import { aws, CliError } from '../errors';
import type { CliIo } from '../io';
import { findDefaultReadyFile, type LocalReady } from '../ready-file';
import type { CommandResult } from '../result';
import { storyKindOf, type StoryKind } from '../../local/local-observability';

export const TAIL: LeafDef = {
  summary: 'streams deliveries, digests, skips, DLQ arrivals and failures live',
  synopsis: '[--all] [--since DURATION] [--json] [options]',
  description: `Streams deliveries (accepted, rejected, duplicates), digests posted, runs skipped (muted,
superseded, already handled), messages reaching the DLQ and failures (warnings and errors) as they
happen, one line each, until Ctrl-C. Local stack: the event stream \`npm start\` serves (eventsUrl
in its ready file); when that stack stops, tail says so and resumes once \`npm start\` runs again. Deployed stack: the ingest and digest functions' CloudWatch log groups, polled
every 2 s (stack outputs IngestFunctionName / DigestFunctionName). With --json each raw event is
one JSON line (NDJSON).`,
  options: {
    all: { help: 'every log line, not only deliveries, digests and failures' },
    since: { value: 'DURATION', help: 'AWS: start this far back (default 1m)' },
    'endpoint-logs': { value: 'URL', help: 'CloudWatch Logs endpoint (also AWS_ENDPOINT_URL_CLOUDWATCH_LOGS)', listedOnce: true },
    ...AWS_OPTIONS,
  },
  run: tailCommand,
};

/** One log entry of either function, whatever its source. */
export interface TailEvent {
  at: number;
  service: string;
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

export type TailKind = StoryKind | 'failure' | 'other';

export function classify(event: TailEvent): TailKind {
  const kind = storyKindOf(event.message);
  if (kind !== undefined) return kind;
  if (/^(warn|warning|error|critical)$/i.test(event.level)) return 'failure';
  return 'other';
}

const SHOWN_FIELDS = [
  'deliveryId',
  'eventId',
  'type',
  'projectId',
  'channel',
  'channels',
  'mutedUntil',
  'queue',
  'receiveCount',
  'reason',
  'errorMessage',
  'fix',
  'replies',
  'next',
];

export function formatEvent(event: TailEvent, paint: ReturnType<typeof colours>): string {
  const kind = classify(event);
  const time = new Date(event.at).toISOString().slice(11, 19);
  const label =
    kind === 'digest'
      ? paint.green(kind.padEnd(8))
      : kind === 'failure' || kind === 'dlq'
        ? paint.red(kind.padEnd(8))
        : kind === 'skip'
          ? paint.yellow(kind.padEnd(8))
          : kind.padEnd(8);
  const fields = SHOWN_FIELDS.filter((key) => event.fields[key] !== undefined && event.fields[key] !== null)
    .map((key) => `${key}=${fieldText(event.fields[key])}`)
    .join(' ');
  return `${time} ${label} ${event.service.padEnd(6)} ${event.message}${fields === '' ? '' : `  ${fields}`}`;
}

/** One field as one short token: lists comma-separated, anything else as its text with spaces quoted. */
function fieldText(value: unknown): string {
  const text = Array.isArray(value)
    ? value.map((item) => fieldText(item)).join(',')
    : typeof value === 'string'
      ? value
      : (JSON.stringify(value) ?? typeof value);
  return /\s/.test(text) ? JSON.stringify(text) : text;
}

function toTailEvent(raw: unknown, fallbackService: string, fallbackAt: number): TailEvent | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const { at, timestamp, service, level, message, fields, ...rest } = raw as Record<string, unknown>;
  if (typeof message !== 'string') return undefined;
  const when =
    typeof at === 'string' || typeof at === 'number'
      ? Date.parse(String(at))
      : typeof timestamp === 'string'
        ? Date.parse(timestamp)
        : fallbackAt;
  return {
    at: Number.isNaN(when) ? fallbackAt : when,
    service: typeof service === 'string' ? service : fallbackService,
    level: typeof level === 'string' ? level.toLowerCase() : 'info',
    message,
    fields: typeof fields === 'object' && fields !== null ? (fields as Record<string, unknown>) : rest,
  };
}

interface Printer {
  print(event: TailEvent, raw: unknown): void;
}

function printer(ctx: CommandContext, all: boolean, json: boolean): Printer {
  const paint = colours(ctx.io);
  return {
    print(event, raw) {
      if (!all && classify(event) === 'other') return;
      ctx.io.stdout.write(`${json ? JSON.stringify(raw) : formatEvent(event, paint)}\n`);
    },
  };
}

/** The stream at `eventsUrl`, or undefined when nothing answers there (the local stack is not running). */
async function openStream(eventsUrl: string, signal: AbortSignal, ctx: CommandContext): Promise<Response | { error: string } | undefined> {
  try {
    const response = await ctx.fetch(eventsUrl, { signal });
    if (!response.ok || response.body === null) return { error: `the event stream ${eventsUrl} answered HTTP ${response.status}` };
    return response;
  } catch (err) {
    if (signal.aborted) return undefined;
    return { error: `cannot reach the local stack's event stream ${eventsUrl}: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Prints the stream's events until it ends: the local stack stopped, or Ctrl-C. */
async function follow(response: Response, out: Printer, signal: AbortSignal, ctx: CommandContext): Promise<void> {
  if (response.body === null) return;
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for await (const chunk of response.body) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.trim() !== '')) {
        const raw: unknown = JSON.parse(line);
        const event = toTailEvent(raw, 'stack', ctx.now());
        if (event !== undefined) out.print(event, raw);
      }
    }
  } catch {
    // The stack went away mid-stream (UND_ERR_SOCKET) or Ctrl-C: either way this stream is over.
  }
}

/**
 * Waits until `npm start` runs again (its ready file is back, names a live process and its stream
 * answers), then returns the open stream; undefined on Ctrl-C.
 */
async function awaitRestart(readyPath: string, signal: AbortSignal, ctx: CommandContext): Promise<Response | undefined> {
  while (!signal.aborted) {
    await ctx.sleep(ctx.io.pollIntervalMs ?? 1_000);
    if (signal.aborted) return undefined;
    const found = await findDefaultReadyFile(readyPath);
    const eventsUrl = found.ready?.eventsUrl;
    if (eventsUrl === undefined) continue;
    const stream = await openStream(eventsUrl, signal, ctx);
    if (stream instanceof Response) {
      ctx.io.stderr.write(`the local stack is back; tailing ${eventsUrl}\n`);
      return stream;
    }
  }
  return undefined;
}

/** Follows the local stack; when it stops, says so and waits for it to come back, until Ctrl-C. */
async function tailLocal(local: LocalReady, out: Printer, signal: AbortSignal, ctx: CommandContext): Promise<void> {
  const eventsUrl = local.eventsUrl;
  if (eventsUrl === undefined)
    throw new CliError(
      `the local stack of ${local.path} serves no event stream`,
      'restart it with the current `npm start`',
      'bad_ready_file',
    );
  const first = await openStream(eventsUrl, signal, ctx);
  if (first === undefined) return;
  if (!(first instanceof Response)) throw new CliError(first.error, 'is `npm start` still running? start it again', 'unreachable');
  ctx.io.stderr.write(`tailing the local stack (${eventsUrl}); Ctrl-C stops\n`);
  let stream: Response | undefined = first;
  while (stream !== undefined && !signal.aborted) {
    await follow(stream, out, signal, ctx);
    if (signal.aborted) return;
    ctx.io.stderr.write(
      `the local stack stopped (its event stream ${eventsUrl} closed); waiting for it to come back — start \`npm start\` again, or Ctrl-C\n`,
    );
    stream = await awaitRestart(local.path, signal, ctx);
  }
}

const POLL_MS = 2_000;

async function tailAws(ctx: CommandContext, out: Printer, signal: AbortSignal, sinceMs: number): Promise<void> {
  const outputs: [string, string][] = [
    ['ingest', STACK_OUTPUTS.ingestFunctionName],
    ['digest', STACK_OUTPUTS.digestFunctionName],
  ];
  const groups = await Promise.all(
    outputs.map(async ([service, key]) => ({ service, group: `/aws/lambda/${await ctx.stack.require(key)}` })),
  );
  const client = logsClient(ctx.settings);
  const seen = new Set<string>();
  const starts = new Map(groups.map(({ group }) => [group, ctx.now() - sinceMs]));
  ctx.io.stderr.write(`tailing ${groups.map((g) => g.group).join(' and ')} (polling every ${POLL_MS / 1000} s); Ctrl-C stops\n`);
  try {
    while (!signal.aborted) {
      for (const { group, service } of groups) {
        const start = starts.get(group) ?? ctx.now() - sinceMs;
        starts.set(group, Math.max(start, await pollGroup(client, { group, service }, start, seen, out, ctx, signal)));
      }
      await ctx.sleep(POLL_MS);
    }
  } finally {
    client.destroy();
  }
}

/** One FilterLogEvents sweep of a group from `start`; returns the newest timestamp seen minus a margin for late events. */
async function pollGroup(
  client: CloudWatchLogsClient,
  { group, service }: { group: string; service: string },
  start: number,
  seen: Set<string>,
  out: Printer,
  ctx: CommandContext,
  signal: AbortSignal,
): Promise<number> {
  let nextToken: string | undefined;
  let newest = start;
  do {
    const page = await aws({ service: 'CloudWatch Logs', resource: group }, () =>
      client.send(
        new FilterLogEventsCommand({ logGroupName: group, startTime: start, ...(nextToken !== undefined ? { nextToken } : {}) }),
        { abortSignal: signal },
      ),
    );
    for (const item of page.events ?? []) {
      if (item.eventId === undefined || seen.has(item.eventId)) continue;
      seen.add(item.eventId);
      newest = Math.max(newest, item.timestamp ?? newest);
      let raw: unknown;
      try {
        raw = JSON.parse(item.message ?? '');
      } catch {
        raw = { message: (item.message ?? '').trim(), level: 'info', service };
      }
      const event = toTailEvent(raw, service, item.timestamp ?? ctx.now());
      if (event !== undefined) out.print(event, raw);
    }
    nextToken = page.nextToken;
  } while (nextToken !== undefined && !signal.aborted);
  // Events can arrive a little out of order: look back a few seconds, the ids keep them unique.
  return newest - 5_000;
}

async function tailCommand(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const sinceMs = duration(parsed, 'since') ?? 60_000;
  const endpointLogs = parsed.values['endpoint-logs'];
  const ctx = await buildContext(parsed, io, typeof endpointLogs === 'string' ? { logs: endpointLogs } : {});
  const out = printer(ctx, bool(parsed, 'all'), bool(parsed, 'json'));
  const controller = new AbortController();
  const release = io.onInterrupt?.(() => controller.abort()) ?? (() => undefined);
  try {
    if (ctx.local !== undefined) {
      await tailLocal(ctx.local, out, controller.signal, ctx);
    } else {
      await tailAws(ctx, out, controller.signal, sinceMs);
    }
  } finally {
    release();
  }
  if (controller.signal.aborted) io.stderr.write('stopped\n');
  // Events went to stdout as they came; no closing document.
  return { exitCode: 0, json: undefined };
}
