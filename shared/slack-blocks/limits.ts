/**
 * Slack's limits for the two native data blocks, in one leaf module (no imports): the digest's
 * builders cut to them, the local Slack server refuses blocks past them with `invalid_blocks`.
 *
 * Checked against docs.slack.dev's block reference (2026-11):
 * - reference/block-kit/blocks/data-visualization-block: title ≤ 50; line, bar and area take 1–6
 *   series (the issue reported 12; the reference says 6, so 6 it is); pie 1–6 segments, each value > 0;
 *   a data series' `name` ≤ 20 and its `data` 1–20 points, one per `axis_config.categories` entry;
 *   a point's or segment's `label` ≤ 20; `x_label` and `y_label` ≤ 50; at most two such blocks per
 *   message (the SDKs' docs say so; the reference does not contradict it).
 * - reference/block-kit/blocks/data-table-block: `caption` required; 2–101 rows (the header and
 *   1–100 body rows), 1–20 columns, every row the same length; header cells not `rich_text`;
 *   `raw_text` text at least 1 character; `page_size` 1–100 (default 5); the cells' characters at
 *   most 10,000 per table and 10,000 per message.
 */

export const CHART_BLOCK_LIMITS = {
  /** `title`, and each of `x_label` / `y_label`. */
  titleChars: 50,
  axisLabelChars: 50,
  /** Series of a line, bar or area chart. */
  series: 6,
  /** Segments of a pie chart. */
  segments: 6,
  /** `axis_config.categories`, and so a series' points. */
  categories: 20,
  /** A series' `name`, a category, a point's or a segment's `label`. */
  labelChars: 20,
  /** Data visualization blocks in one message. */
  perMessage: 2,
} as const;

export const TABLE_BLOCK_LIMITS = {
  /** Body rows, the header row not counted. */
  bodyRows: 100,
  columns: 20,
  /** Characters of all cells of one table, and of all tables of one message. */
  cellChars: 10_000,
  pageSize: 100,
  /** The caption has no documented bound; this one keeps it a caption. */
  captionChars: 200,
} as const;

/** The block types Slack may refuse during a phased rollout (`invalid_blocks`), each with a fallback. */
export const NATIVE_BLOCK_TYPES = ['data_visualization', 'data_table'] as const;
