/**
 * What the trend chart takes and gives back, and the renderer's interface. Types only: code that runs
 * with charts off may import this file (and `./load`) without loading vega or the wasm.
 */

/** One run's visibility on one engine. `value` is 0–100 or 0–1 (a fraction): the renderer normalises. */
export interface EnginePoint {
  engine: string;
  /** When the run completed (epoch ms). */
  atMs: number;
  value: number;
}

/** One run's figure for the brand or one rival (e.g. share of voice), 0–100 or 0–1. */
export interface RivalPoint {
  name: string;
  atMs: number;
  value: number;
}

export interface TrendChartInput {
  /** The project's display name (service text: cleaned by the renderer). */
  projectName: string;
  /** Visibility per engine per run; any order, any size (bounded by the renderer). */
  engines: readonly EnginePoint[];
  /** The brand against its top rivals, when the data allows: a second panel. */
  rivals?:
    | {
        /** The name among `points` that is the brand (drawn thicker, listed first). */
        brand: string;
        /** What the figure is, e.g. "Share of voice" (default "Share of voice"). */
        measure?: string | undefined;
        points: readonly RivalPoint[];
      }
    | undefined;
}

/** A rendered chart: a PNG and its text alternative. */
export interface RenderedChart {
  png: Uint8Array;
  /** Pixel size of the PNG. */
  width: number;
  height: number;
  /**
   * One paragraph describing the chart (each engine's first → last value), for `alt_txt` and the thread.
   * Service text in it went through the Slack sanitizer (`serviceText`): safe to post as is.
   */
  altText: string;
}

/** A chart, or why there is none (too little data): never an exception for bad input. */
export type TrendChartOutcome = { kind: 'rendered'; chart: RenderedChart } | { kind: 'skipped'; reason: string };

export interface ChartRenderer {
  renderTrendChart(input: TrendChartInput): Promise<TrendChartOutcome>;
}

/** A file for a Slack thread (the chart's PNG). */
export interface SlackFileUpload {
  /** Channel ID (C…): files.completeUploadExternal takes no names. */
  channel: string;
  /** The digest's thread; the channel itself when omitted. */
  threadTs?: string | undefined;
  filename: string;
  /** Shown above the image; the filename when omitted. */
  title?: string | undefined;
  bytes: Uint8Array;
  /** Screen-reader text (Slack's `alt_txt`, at most 1,000 characters). */
  altText?: string | undefined;
  /** A message posted with the file (mrkdwn, already Slack-safe). */
  initialComment?: string | undefined;
}

/**
 * Puts a file in a channel or thread (port; shared/adapters/slack-files.ts implements it with
 * files.getUploadURLExternal + files.completeUploadExternal). Fails with the domain's errors
 * (Unavailable with `outcomeUnknown` when the file may be in the thread anyway, NeedsOperatorFix).
 */
export interface SlackFileUploader {
  upload(file: SlackFileUpload): Promise<{ fileId: string }>;
}
