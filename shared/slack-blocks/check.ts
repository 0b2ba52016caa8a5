/**
 * What is wrong with a message's native data blocks (charts, data tables) against Slack's limits
 * (./limits): one sentence per problem, none when they are fine. Pure and total over any JSON, so the
 * digest's tests and the local Slack server (which answers `invalid_blocks` with these) share it.
 */
import { CHART_BLOCK_LIMITS as CHART, TABLE_BLOCK_LIMITS as TABLE } from './limits';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown, max: number, what: string, min = 1): string[] {
  if (typeof value !== 'string') return [`${what} is not a string`];
  if (value.length < min) return [`${what} is empty`];
  return value.length > max ? [`${what} is longer than ${max} characters`] : [];
}

function finite(value: unknown, what: string): string[] {
  return typeof value === 'number' && Number.isFinite(value) ? [] : [`${what} is not a finite number`];
}

function pointProblems(point: unknown, what: string): string[] {
  if (!isObject(point)) return [`${what} is not an object`];
  return [...text(point.label, CHART.labelChars, `${what}.label`), ...finite(point.value, `${what}.value`)];
}

function seriesChartProblems(chart: Json, at: string): string[] {
  const axis = chart.axis_config;
  if (!isObject(axis) || !Array.isArray(axis.categories)) return [`${at}.axis_config.categories is missing`];
  const categories: unknown[] = axis.categories;
  const problems: string[] = [];
  if (categories.length < 1 || categories.length > CHART.categories)
    problems.push(`${at} has ${categories.length} categories (1–${CHART.categories})`);
  categories.forEach((c, i) => problems.push(...text(c, CHART.labelChars, `${at}.axis_config.categories[${i}]`)));
  for (const key of ['x_label', 'y_label'] as const)
    if (axis[key] !== undefined) problems.push(...text(axis[key], CHART.axisLabelChars, `${at}.axis_config.${key}`));
  if (!Array.isArray(chart.series)) return [...problems, `${at}.series is missing`];
  const series: unknown[] = chart.series;
  if (series.length < 1 || series.length > CHART.series) problems.push(`${at} has ${series.length} series (1–${CHART.series})`);
  const names = new Set<unknown>();
  series.forEach((s, i) => {
    const where = `${at}.series[${i}]`;
    if (!isObject(s) || !Array.isArray(s.data)) return problems.push(`${where} has no data`);
    problems.push(...text(s.name, CHART.labelChars, `${where}.name`));
    if (names.has(s.name)) problems.push(`${where}.name repeats another series' name`);
    names.add(s.name);
    const data: unknown[] = s.data;
    if (data.length !== categories.length) problems.push(`${where} has ${data.length} points for ${categories.length} categories`);
    data.forEach((p, j) => {
      problems.push(...pointProblems(p, `${where}.data[${j}]`));
      if (isObject(p) && p.label !== categories[j]) problems.push(`${where}.data[${j}].label is not category ${j}`);
    });
    return undefined;
  });
  return problems;
}

function chartProblems(block: Json, at: string): string[] {
  const problems = text(block.title, CHART.titleChars, `${at}.title`);
  const chart = block.chart;
  if (!isObject(chart)) return [...problems, `${at}.chart is missing`];
  if (chart.type === 'pie') {
    if (!Array.isArray(chart.segments)) return [...problems, `${at}.chart.segments is missing`];
    const segments: unknown[] = chart.segments;
    if (segments.length < 1 || segments.length > CHART.segments)
      problems.push(`${at} has ${segments.length} segments (1–${CHART.segments})`);
    segments.forEach((s, i) => {
      problems.push(...pointProblems(s, `${at}.chart.segments[${i}]`));
      if (isObject(s) && typeof s.value === 'number' && !(s.value > 0)) problems.push(`${at}.chart.segments[${i}].value is not above 0`);
    });
    return problems;
  }
  if (chart.type !== 'line' && chart.type !== 'bar' && chart.type !== 'area')
    return [...problems, `${at}.chart.type is not line, bar, area or pie`];
  return [...problems, ...seriesChartProblems(chart, `${at}.chart`)];
}

/** Characters of one cell, as Slack counts them for the 10,000 bound (the text a reader sees). */
function cellChars(cell: unknown): number {
  if (!isObject(cell)) return 0;
  if (typeof cell.text === 'string') return cell.text.length;
  if (typeof cell.value === 'number') return String(cell.value).length;
  let total = 0;
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (isObject(node)) {
      if (typeof node.text === 'string') total += node.text.length;
      walk(node.elements);
    }
  };
  walk(cell.elements);
  return total;
}

function cellProblems(cell: unknown, header: boolean, where: string): string[] {
  if (!isObject(cell)) return [`${where} is not an object`];
  if (cell.type === 'raw_text') return text(cell.text, Number.POSITIVE_INFINITY, `${where}.text`);
  if (cell.type === 'raw_number') return finite(cell.value, `${where}.value`);
  if (cell.type === 'rich_text') return header ? [`${where} is rich_text in the header row`] : [];
  return [`${where} is not raw_text, raw_number or rich_text`];
}

function tableProblems(block: Json, at: string): { problems: string[]; chars: number } {
  const problems = text(block.caption, TABLE.captionChars, `${at}.caption`);
  if (
    block.page_size !== undefined &&
    !(Number.isInteger(block.page_size) && (block.page_size as number) >= 1 && (block.page_size as number) <= TABLE.pageSize)
  )
    problems.push(`${at}.page_size is not 1–${TABLE.pageSize}`);
  if (!Array.isArray(block.rows)) return { problems: [...problems, `${at}.rows is missing`], chars: 0 };
  const rows: unknown[] = block.rows;
  if (rows.length < 2 || rows.length > TABLE.bodyRows + 1)
    problems.push(`${at} has ${rows.length} rows (2–${TABLE.bodyRows + 1}, the header included)`);
  const width = Array.isArray(rows[0]) ? (rows[0] as unknown[]).length : 0;
  if (width < 1 || width > TABLE.columns) problems.push(`${at} has ${width} columns (1–${TABLE.columns})`);
  const index = block.row_header_column_index;
  if (index !== undefined && !(Number.isInteger(index) && (index as number) >= 0 && (index as number) < width))
    problems.push(`${at}.row_header_column_index is not a column`);
  let chars = 0;
  rows.forEach((row, r) => {
    if (!Array.isArray(row)) return problems.push(`${at}.rows[${r}] is not an array`);
    if (row.length !== width) problems.push(`${at}.rows[${r}] has ${row.length} cells, the header ${width}`);
    row.forEach((cell, c) => {
      problems.push(...cellProblems(cell, r === 0, `${at}.rows[${r}][${c}]`));
      chars += cellChars(cell);
    });
    return undefined;
  });
  if (chars > TABLE.cellChars) problems.push(`${at} has ${chars} characters in its cells (at most ${TABLE.cellChars})`);
  return { problems, chars };
}

/** Problems of the native blocks among `blocks` (other block types are not looked at). */
export function nativeBlockProblems(blocks: readonly unknown[]): string[] {
  const problems: string[] = [];
  let charts = 0;
  let tableChars = 0;
  blocks.forEach((block, i) => {
    if (!isObject(block)) return;
    const at = `blocks[${i}]`;
    if (block.type === 'data_visualization') {
      charts += 1;
      problems.push(...chartProblems(block, at));
    } else if (block.type === 'data_table') {
      const table = tableProblems(block, at);
      tableChars += table.chars;
      problems.push(...table.problems);
    }
  });
  if (charts > CHART.perMessage) problems.push(`${charts} data_visualization blocks (at most ${CHART.perMessage} per message)`);
  if (tableChars > TABLE.cellChars) problems.push(`${tableChars} characters in the message's table cells (at most ${TABLE.cellChars})`);
  return problems;
}
