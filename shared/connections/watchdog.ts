/**
 * The connections' silence watchdog. The service has no polling feed and switches a webhook off after
 * 15 failed deliveries in a row (spec §6), so a connection whose runs stop arriving may simply have
 * lost its webhook. Each connection's usual interval is learned from its own recent runs; once it has
 * been silent for `SILENCE_FACTOR` times that, one notice goes to its channel and to the stack's own
 * channel (ops) — once per silence: the next run ends it, and only a new silence is told again.
 */
import { DIGEST_METRICS } from '../contracts';
import { describeError } from '../observability';
import type { Clock, Log, Metrics, SlackMessage, SlackPoster } from '../ports';
import { serviceText } from '../slack-text';
import type { Connection } from './model';
import type { ConnectionCadence, ConnectionStore } from './ports';

/** Silent for this many usual intervals: past the service's retries (about 15 min) and a run's ordinary lateness. */
export const SILENCE_FACTOR = 3;
/** Runs needed before an interval is trusted (two gaps). */
export const MIN_RUNS_TO_LEARN = 3;

/** The median gap between the runs, or undefined while too few are known. */
export function usualIntervalMs(runTimesMs: readonly number[]): number | undefined {
  if (runTimesMs.length < MIN_RUNS_TO_LEARN) return undefined;
  const sorted = [...runTimesMs].sort((a, b) => a - b);
  const gaps = sorted
    .slice(1)
    .map((time, i) => time - (sorted[i] ?? time))
    .filter((gap) => gap > 0)
    .sort((a, b) => a - b);
  if (gaps.length === 0) return undefined;
  const middle = Math.floor(gaps.length / 2);
  return gaps.length % 2 === 1 ? gaps[middle] : ((gaps[middle - 1] ?? 0) + (gaps[middle] ?? 0)) / 2;
}

export interface Silence {
  lastRunMs: number;
  usualMs: number;
}

/** The connection's silence not yet told, or undefined (not silent, cadence not learned, or told already). */
export function untoldSilence(cadence: ConnectionCadence, nowMs: number): Silence | undefined {
  const usualMs = usualIntervalMs(cadence.runTimesMs);
  if (usualMs === undefined) return undefined;
  const lastRunMs = Math.max(...cadence.runTimesMs);
  if (nowMs - lastRunMs < SILENCE_FACTOR * usualMs) return undefined;
  if (cadence.silenceToldAfterMs !== undefined && cadence.silenceToldAfterMs >= lastRunMs) return undefined;
  return { lastRunMs, usualMs };
}

/** "3 h", "2 d": the interval as people say it. */
function roughly(ms: number): string {
  const hours = ms / 3_600_000;
  if (hours < 1) return `${Math.max(1, Math.round(ms / 60_000))} min`;
  if (hours < 48) return `${Math.round(hours)} h`;
  return `${Math.round(hours / 24)} d`;
}

export function silenceNotice(connection: Connection, silence: Silence): SlackMessage {
  const id = serviceText(connection.id, 60);
  const text =
    `:warning: No run has arrived for connection \`${id}\` since ${new Date(silence.lastRunMs).toISOString().slice(0, 16).replace('T', ' ')} UTC ` +
    `(its runs usually come every ${roughly(silence.usualMs)}). The webhook may have been switched off after 15 failed deliveries ` +
    "(spec §6): check it in the service's settings (Webhooks: is it active, what was its last status?).";
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text, verbatim: true } }] };
}

export interface WatchdogDeps {
  store: ConnectionStore;
  /** The stack's bot: the ops channel's notice, and a connection's own when it is not linked to an installation. */
  slack: SlackPoster;
  /**
   * The poster of a connection's own channel (its linked installation's bot), or undefined when that
   * installation is gone; none = the stack's `slack` for every connection.
   */
  posterOf?: ((connection: Connection) => Promise<SlackPoster | undefined>) | undefined;
  /** The stack's own channel, where the operators read what concerns every connection. */
  opsChannel: string;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}

/**
 * Tells each untold silence once: the silence is claimed in the table first (one sweep wins), then
 * posted. A post that fails is logged with the connection, not repeated by the next sweep.
 */
export async function watchConnections(deps: WatchdogDeps): Promise<void> {
  const nowMs = deps.clock.now();
  for (const { connection, cadence } of await deps.store.list()) {
    if (connection.status !== 'active') continue;
    const silence = untoldSilence(cadence, nowMs);
    if (silence === undefined) continue;
    if (!(await deps.store.markSilenceTold(connection.id, silence.lastRunMs))) continue;
    deps.metrics.count(DIGEST_METRICS.connectionSilent);
    deps.log.warn('connection silent: its webhook may have been switched off', {
      connectionId: connection.id,
      lastRunAt: new Date(silence.lastRunMs).toISOString(),
      usualIntervalMs: silence.usualMs,
    });
    const notice = silenceNotice(connection, silence);
    for (const [channel, slack] of await noticePosts(connection, deps)) {
      try {
        await slack.post(channel, notice);
      } catch (error) {
        deps.log.error('silence notice not posted', { connectionId: connection.id, channel, ...describeError(error) });
      }
    }
  }
}

/** Where a connection's notice goes, with which bot: its own channel (unless its installation is gone), and ops once. */
async function noticePosts(connection: Connection, deps: WatchdogDeps): Promise<[string, SlackPoster][]> {
  const channel = connection.routes.defaultChannel;
  let own: SlackPoster | undefined = deps.slack;
  try {
    if (deps.posterOf !== undefined) own = await deps.posterOf(connection);
    if (own === undefined) {
      deps.metrics.count(DIGEST_METRICS.connectionNotInstalled);
      deps.log.warn("silence notice not posted in the connection's channel: its Slack installation is gone", {
        connectionId: connection.id,
        channel,
      });
    }
  } catch (error) {
    own = undefined;
    deps.log.error("silence notice not posted in the connection's channel: its bot token could not be had", {
      connectionId: connection.id,
      channel,
      ...describeError(error),
    });
  }
  const posts: [string, SlackPoster][] = own === undefined ? [] : [[channel, own]];
  if (own !== deps.slack || channel !== deps.opsChannel) posts.push([deps.opsChannel, deps.slack]);
  return posts;
}
