/**
 * Slack's limits of the chart (`data_visualization`) and `data_table` blocks, each at its edge and one past
 * it: the checker the local Slack server answers `invalid_blocks` with, and the digest is held to.
 */
import { describe, expect, it } from 'vitest';
import { nativeBlockProblems } from '../../shared/slack-blocks/check';
import { CHART_BLOCK_LIMITS as CHART, TABLE_BLOCK_LIMITS as TABLE } from '../../shared/slack-blocks/limits';

const chars = (count: number, ch = 'x'): string => ch.repeat(count);
const categoriesOf = (count: number): string[] => Array.from({ length: count }, (_, i) => `c${i}`);

function series(name: string, categories: string[], value: unknown = 1): Record<string, unknown> {
  return { name, data: categories.map((label) => ({ label, value })) };
}

interface ChartShape {
  title?: string;
  type?: string;
  seriesCount?: number;
  categories?: string[];
  names?: string[];
  axis?: Record<string, unknown>;
  value?: unknown;
}

function chart({
  title = 'Visibility',
  type = 'line',
  seriesCount = 1,
  categories = categoriesOf(3),
  names,
  axis = {},
  value,
}: ChartShape = {}) {
  const seriesNames = names ?? Array.from({ length: seriesCount }, (_, i) => `s${i}`);
  return {
    type: 'data_visualization',
    title,
    chart: { type, series: seriesNames.map((n) => series(n, categories, value)), axis_config: { categories, ...axis } },
  };
}

function pie(segments: { label: string; value: unknown }[]) {
  return { type: 'data_visualization', title: 'Share', chart: { type: 'pie', segments } };
}

const segmentsOf = (count: number) => Array.from({ length: count }, (_, i) => ({ label: `p${i}`, value: i + 1 }));

const raw = (text: string) => ({ type: 'raw_text', text });
const rich = (text: string) => ({ type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }] });

interface TableShape {
  bodyRows?: number;
  columns?: number;
  cell?: (row: number, column: number) => unknown;
  extra?: Record<string, unknown>;
}

function table({ bodyRows = 1, columns = 2, cell = (r, c) => (r === 0 ? raw(`h${c}`) : rich(`r${r}c${c}`)), extra = {} }: TableShape = {}) {
  const rows = Array.from({ length: bodyRows + 1 }, (_, r) => Array.from({ length: columns }, (_, c) => cell(r, c)));
  return { type: 'data_table', caption: 'AI engines', rows, ...extra };
}

/** A one-column table of 50 rows whose cells hold `total` (≥ 5,000) characters in all: the header 1, the last row the rest. */
function tableOfChars(total: number) {
  const body = 50;
  return table({ bodyRows: body, columns: 1, cell: (r) => raw(r === 0 ? 'h' : chars(r < body ? 100 : total - 1 - 100 * (body - 1))) });
}

describe('the chart block (data_visualization)', () => {
  it.each([
    ['a title of 50 characters', chart({ title: chars(CHART.titleChars) })],
    [`${CHART.series} series`, chart({ seriesCount: CHART.series })],
    [`${CHART.categories} categories`, chart({ categories: categoriesOf(CHART.categories) })],
    ['a category of 20 characters', chart({ categories: [chars(CHART.labelChars)] })],
    ['a series name of 20 characters', chart({ names: [chars(CHART.labelChars)] })],
    ['axis labels of 50 characters', chart({ axis: { x_label: chars(CHART.axisLabelChars), y_label: chars(CHART.axisLabelChars) } })],
    ['negative and fractional values', chart({ value: -1.25 })],
    ['a bar chart', chart({ type: 'bar' })],
    ['an area chart', chart({ type: 'area' })],
    [`a pie of ${CHART.segments} segments`, pie(segmentsOf(CHART.segments))],
    ['a pie segment label of 20 characters', pie([{ label: chars(CHART.labelChars), value: 1 }])],
  ])('takes %s', (_, block) => {
    expect(nativeBlockProblems([block])).toEqual([]);
  });

  it.each([
    ['a title of 51 characters', chart({ title: chars(CHART.titleChars + 1) }), /title is longer than 50/],
    ['an empty title', chart({ title: '' }), /title is empty/],
    [`${CHART.series + 1} series`, chart({ seriesCount: CHART.series + 1 }), /has 7 series \(1–6\)/],
    ['no series', chart({ seriesCount: 0 }), /has 0 series/],
    [`${CHART.categories + 1} categories`, chart({ categories: categoriesOf(CHART.categories + 1) }), /has 21 categories \(1–20\)/],
    ['no categories', chart({ categories: [] }), /has 0 categories/],
    ['a category of 21 characters', chart({ categories: [chars(CHART.labelChars + 1)] }), /categories\[0\] is longer than 20/],
    ['a series name of 21 characters', chart({ names: [chars(CHART.labelChars + 1)] }), /series\[0\]\.name is longer than 20/],
    ['two series of one name', chart({ names: ['Claude', 'Claude'] }), /series\[1\]\.name repeats/],
    ['an x label of 51 characters', chart({ axis: { x_label: chars(CHART.axisLabelChars + 1) } }), /x_label is longer than 50/],
    ['a y label of 51 characters', chart({ axis: { y_label: chars(CHART.axisLabelChars + 1) } }), /y_label is longer than 50/],
    ['a value that is not a number (NaN in JSON)', chart({ value: null }), /value is not a finite number/],
    ['an infinite value', chart({ value: Number.POSITIVE_INFINITY }), /value is not a finite number/],
    ['a chart type Slack does not draw', chart({ type: 'scatter' }), /type is not line, bar, area or pie/],
    [`a pie of ${CHART.segments + 1} segments`, pie(segmentsOf(CHART.segments + 1)), /has 7 segments \(1–6\)/],
    ['a pie segment label of 21 characters', pie([{ label: chars(CHART.labelChars + 1), value: 1 }]), /label is longer than 20/],
    ['a pie segment of 0', pie([{ label: 'a', value: 0 }]), /value is not above 0/],
  ])('refuses %s', (_, block, problem) => {
    expect(nativeBlockProblems([block]).join('\n')).toMatch(problem);
  });

  it('refuses a series with a point missing, or out of category order', () => {
    const categories = categoriesOf(3);
    const short = {
      ...chart({ categories }),
      chart: { type: 'line', series: [series('a', categories.slice(0, 2))], axis_config: { categories } },
    };
    expect(nativeBlockProblems([short]).join('\n')).toMatch(/has 2 points for 3 categories/);
    const swapped = { ...short, chart: { ...short.chart, series: [series('a', [...categories].reverse())] } };
    expect(nativeBlockProblems([swapped]).join('\n')).toMatch(/data\[0\]\.label is not category 0/);
  });

  it(`takes ${CHART.perMessage} charts in a message and refuses a third`, () => {
    expect(nativeBlockProblems([chart(), chart()])).toEqual([]);
    expect(nativeBlockProblems([chart(), chart(), chart()]).join('\n')).toMatch(/3 data_visualization blocks \(at most 2 per message\)/);
  });
});

describe('the data_table block', () => {
  it.each([
    ['a header and one row', table()],
    [`a header and ${TABLE.bodyRows} rows`, table({ bodyRows: TABLE.bodyRows })],
    [`${TABLE.columns} columns`, table({ columns: TABLE.columns })],
    ['numbers in the header and the body', table({ cell: (_, c) => ({ type: 'raw_number', value: c, text: String(c) }) })],
    ['page_size 1', table({ extra: { page_size: 1 } })],
    ['page_size 100', table({ extra: { page_size: TABLE.pageSize } })],
    ['the last column as the row header', table({ columns: 3, extra: { row_header_column_index: 2 } })],
    [`a caption of ${TABLE.captionChars} characters`, table({ extra: { caption: chars(TABLE.captionChars) } })],
    [`${TABLE.cellChars} characters in its cells`, tableOfChars(TABLE.cellChars)],
  ])('takes %s', (_, block) => {
    expect(nativeBlockProblems([block])).toEqual([]);
  });

  it.each([
    ['a header without rows', table({ bodyRows: 0 }), /has 1 rows \(2–101/],
    [`${TABLE.bodyRows + 1} rows under the header`, table({ bodyRows: TABLE.bodyRows + 1 }), /has 102 rows \(2–101/],
    [`${TABLE.columns + 1} columns`, table({ columns: TABLE.columns + 1 }), /has 21 columns \(1–20\)/],
    ['no columns', table({ columns: 0 }), /has 0 columns/],
    ['rich text in the header', table({ cell: (r, c) => rich(`${r}${c}`) }), /rows\[0\]\[0\] is rich_text in the header row/],
    ['an empty raw_text cell', table({ cell: (r, c) => raw(r === 1 && c === 1 ? '' : 'x') }), /rows\[1\]\[1\]\.text is empty/],
    [
      'a cell of another type',
      table({ cell: (r) => (r === 1 ? { type: 'mrkdwn', text: 'x' } : raw('h')) }),
      /not raw_text, raw_number or rich_text/,
    ],
    ['page_size 0', table({ extra: { page_size: 0 } }), /page_size is not 1–100/],
    ['page_size 101', table({ extra: { page_size: TABLE.pageSize + 1 } }), /page_size is not 1–100/],
    ['a fractional page_size', table({ extra: { page_size: 2.5 } }), /page_size is not 1–100/],
    [
      'a row header past the last column',
      table({ columns: 2, extra: { row_header_column_index: 2 } }),
      /row_header_column_index is not a column/,
    ],
    ['no caption', table({ extra: { caption: undefined } }), /caption is not a string/],
    [
      `a caption of ${TABLE.captionChars + 1} characters`,
      table({ extra: { caption: chars(TABLE.captionChars + 1) } }),
      /caption is longer than 200/,
    ],
    [
      `${TABLE.cellChars + 1} characters in its cells`,
      tableOfChars(TABLE.cellChars + 1),
      /10001 characters in its cells \(at most 10000\)/,
    ],
  ])('refuses %s', (_, block, problem) => {
    expect(nativeBlockProblems([block]).join('\n')).toMatch(problem);
  });

  it('refuses a row shorter than the header', () => {
    const block = table({ columns: 3 });
    block.rows[1] = block.rows[1]!.slice(0, 2);
    expect(nativeBlockProblems([block]).join('\n')).toMatch(/rows\[1\] has 2 cells, the header 3/);
  });

  it(`holds a message's tables to ${TABLE.cellChars} characters together`, () => {
    const half = TABLE.cellChars / 2;
    expect(nativeBlockProblems([tableOfChars(half), tableOfChars(half)])).toEqual([]);
    expect(nativeBlockProblems([tableOfChars(half), tableOfChars(half + 1)]).join('\n')).toMatch(
      /10001 characters in the message's table cells/,
    );
  });

  it('does not look at other blocks', () => {
    expect(nativeBlockProblems([{ type: 'section', text: { type: 'mrkdwn', text: chars(5000) } }, { type: 'divider' }])).toEqual([]);
  });
});
