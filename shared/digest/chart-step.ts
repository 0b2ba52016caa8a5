/**
 * The digest's trend chart: rendered once per run (not per channel), uploaded into each channel's
 * digest thread after its replies (./fan-out calls `postInThread` once the main message's ts is
 * known). The chart is an extra: nothing here throws, blocks or repeats the digest. A chart that
 * can't be drawn or uploaded leaves one short line in the thread saying why and counts `ChartFailed`
 * with its reason; too little history (a first digest) posts nothing. The renderer is reached only
 * through `ChartDeps.renderer` (`loadChartRenderer`, a dynamic import), so with charts off the digest
 * never loads vega or the wasm.
 *
 * Exactly once: the caller records the chart as done in the channel's posting progress before the
 * upload, so a retry never uploads it twice (a chart lost to a crash mid-upload is not worth a duplicate).
 */
import type { ChartRenderer, SlackFileUploader, TrendChartInput, TrendChartOutcome } from '../charts/types';
import { DIGEST_METRICS } from '../contracts';
import { NeedsOperatorFix, Unavailable } from '../errors';
import { describeError } from '../observability';
import type { PacedChannel } from '../pacing';
import type { Log, Metrics, SlackPoster } from '../ports';
import { serviceText } from '../slack-text';
import { context } from './render/blocks';

/** What the digest needs to post charts; none = charts off. */
export interface ChartDeps {
  /** The renderer, imported on first use (`loadChartRenderer`). */
  renderer: () => Promise<ChartRenderer>;
  uploader: SlackFileUploader;
}

/** Why a chart is missing: the `reason` dimension of `ChartFailed`. */
export type ChartFailureReason = 'render_failed' | 'upload_refused' | 'upload_failed' | 'upload_unconfirmed';

/** Where one channel's chart goes. */
export interface ChartTarget {
  /** The channel ID the main message was posted in (files.completeUploadExternal takes IDs only). */
  channel: string;
  threadTs: string;
  /** The channel's pace: the upload takes its slot like a reply. */
  paced: PacedChannel;
  slack: SlackPoster;
  eventId: string;
}

export interface ThreadChart {
  /** Uploads the run's chart into the thread, or posts why not. Never throws. */
  postInThread(target: ChartTarget): Promise<void>;
}

/** The PNG's name in Slack, and its title above the image. */
export const CHART_FILE = { name: 'visibility-trend.png', title: 'Visibility by engine, last 8 weeks' } as const;
/** Characters of the failure's detail in the thread line. */
const DETAIL_CHARS = 120;

type Rendered = { kind: 'chart'; outcome: TrendChartOutcome } | { kind: 'failed'; error: unknown };

/** The run's chart, rendered on first use and shared by every channel. */
export function threadChart(input: TrendChartInput, charts: ChartDeps, observe: { log: Log; metrics: Metrics }): ThreadChart {
  let rendered: Promise<Rendered> | undefined;
  const render = (): Promise<Rendered> =>
    (rendered ??= charts
      .renderer()
      .then((renderer) => renderer.renderTrendChart(input))
      .then((outcome): Rendered => ({ kind: 'chart', outcome }))
      .catch((error: unknown): Rendered => ({ kind: 'failed', error })));
  return {
    async postInThread(target) {
      try {
        const result = await render();
        if (result.kind === 'failed') return await failed(target, 'render_failed', result.error, observe);
        if (result.outcome.kind === 'skipped') {
          observe.log.info('no trend chart: too little history', { eventId: target.eventId, reason: result.outcome.reason });
          return;
        }
        const { chart } = result.outcome;
        try {
          await target.paced.post(() =>
            charts.uploader.upload({
              channel: target.channel,
              threadTs: target.threadTs,
              filename: CHART_FILE.name,
              title: CHART_FILE.title,
              bytes: chart.png,
              altText: chart.altText,
            }),
          );
        } catch (error) {
          return await failed(target, uploadFailure(error), error, observe);
        }
        observe.metrics.count(DIGEST_METRICS.chartPosted);
      } catch (error) {
        // The line saying why could not be posted either (or the pace gave up): the digest goes on.
        observe.log.warn('trend chart not posted, nor why', { eventId: target.eventId, channel: target.channel, ...describeError(error) });
      }
    },
  };
}

export function uploadFailure(error: unknown): ChartFailureReason {
  if (error instanceof Unavailable && error.outcomeUnknown) return 'upload_unconfirmed';
  if (error instanceof NeedsOperatorFix) return 'upload_refused';
  return 'upload_failed';
}

/** What the thread says about a missing chart (Slack-safe). */
export function chartUnavailableText(reason: ChartFailureReason, error: unknown): string {
  const why: Record<Exclude<ChartFailureReason, 'upload_unconfirmed'>, string> = {
    render_failed: 'it could not be drawn',
    upload_refused: 'Slack refused the upload',
    upload_failed: 'Slack did not take the upload',
  };
  const text = reason === 'upload_unconfirmed' ? '' : why[reason];
  // A code matched [a-z0-9_] (errorCode): shown as code, so its underscores stay underscores.
  const code = errorCode(error);
  return `Trend chart unavailable: ${serviceText(text, DETAIL_CHARS)}${code === undefined || reason === 'render_failed' ? '' : ` (\`${code}\`)`}.`;
}

async function failed(target: ChartTarget, reason: ChartFailureReason, error: unknown, observe: { log: Log; metrics: Metrics }) {
  observe.metrics.count(DIGEST_METRICS.chartFailed, 1, { reason });
  const fields = { eventId: target.eventId, channel: target.channel, reason, ...describeError(error) };
  if (reason === 'upload_unconfirmed') {
    // Slack may have shared the file: a line saying it is unavailable could be wrong, and a second upload a duplicate.
    observe.log.warn('trend chart upload unconfirmed; not repeated', fields);
    return;
  }
  observe.log.warn('trend chart unavailable; the thread says why', fields);
  const text = chartUnavailableText(reason, error);
  const metadata = { event_type: 'visibility_digest_reply', event_payload: { event_id: target.eventId, reply: 'chart' } };
  await target.paced.post((retryRateLimited) =>
    target.slack.post(target.channel, { text, blocks: [context(text)] }, { threadTs: target.threadTs, metadata, retryRateLimited }),
  );
}

/** A Slack error code carried by the error (`missing_scope`, `http_500`…), when it is a plain code. */
function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[a-z0-9_]{1,60}$/.test(code) ? code : undefined;
}
