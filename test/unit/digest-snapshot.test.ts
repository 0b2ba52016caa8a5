import { describe, expect, it } from 'vitest';
import type { Gap, Metric, Scalar, VisibilityOverview } from '../../shared/read-api-types';
import {
  SNAPSHOT_MAX_GAPS,
  SNAPSHOT_MAX_TEXT,
  buildSnapshot,
  diffSnapshots,
  parseNumericValue,
  type ProjectSnapshot,
} from '../../shared/digest/snapshot';

const run = { projectId: 'proj-1', runId: 'run-2', createdAt: '2026-11-08T10:00:00Z' };

function gap(id: string, overrides: Partial<Gap> = {}): Gap {
  return {
    prompt_id: id,
    prompt_ref: id.toUpperCase(),
    prompt_text: `Question ${id}`,
    platforms_losing: ['ChatGPT'],
    top_competitor: 'Rival',
    extra: [],
    ...overrides,
  };
}

function overview(metrics: Metric[]): VisibilityOverview {
  return { metrics, engines: [], alerts: [] };
}

const metric = (label: string, value: Scalar): Metric => ({ label, value, caption: null });

describe('parseNumericValue', () => {
  it.each<[Scalar, number]>([
    [42, 42],
    [-3.5, -3.5],
    [0, 0],
    ['42', 42],
    [' 42 ', 42],
    ['-3.5', -3.5],
    ['+7', 7],
    ['\u22122', -2],
    ['.5', 0.5],
    ['42%', 42],
    ['42.5 %', 42.5],
    ['1,234', 1234],
    ['1,234,567.25', 1234567.25],
    ['-1,000%', -1000],
  ])('reads %j as %d', (value, expected) => {
    expect(parseNumericValue(value)).toBe(expected);
  });

  it.each<Scalar>([
    null,
    true,
    false,
    '',
    '  ',
    '%',
    '-',
    'n/a',
    'NaN',
    'Infinity',
    '42 ms',
    '$5',
    '5$',
    '1e3',
    '1.2k',
    '0x10',
    '1,23',
    '1234,567',
    '1.234,5',
    '42%%',
    '5.',
    '4 2',
    Number.NaN,
    Number.POSITIVE_INFINITY,
  ])('does not read %j as a number', (value) => {
    expect(parseNumericValue(value)).toBeNull();
  });
});

describe('buildSnapshot', () => {
  it('keeps numeric metric values only, first label wins', () => {
    const snapshot = buildSnapshot(
      run,
      overview([
        metric('Visibility', '42%'),
        metric('Mentions', 118),
        metric('Status', 'improving'),
        metric('Share', null),
        metric('Visibility', 1),
      ]),
      [],
    );
    expect(snapshot).toMatchObject({
      projectId: 'proj-1',
      lastCreatedAt: '2026-11-08T10:00:00Z',
      lastRunId: 'run-2',
      metrics: { Visibility: 42, Mentions: 118 },
      gaps: [],
    });
  });

  it('stores a label such as "__proto__" as data', () => {
    const snapshot = buildSnapshot(run, overview([metric('__proto__', 5)]), []);
    expect(Object.getPrototypeOf(snapshot.metrics)).toBe(Object.prototype);
    expect(Object.hasOwn(snapshot.metrics, '__proto__')).toBe(true);
    const stored = JSON.parse(JSON.stringify(snapshot)) as ProjectSnapshot;
    expect(stored.metrics).toEqual(JSON.parse('{"__proto__":5}'));
  });

  it('keeps gap id, ref and text in API order, de-duplicated', () => {
    const snapshot = buildSnapshot(run, overview([]), [gap('a'), gap('b', { prompt_ref: 7 }), gap('a', { prompt_text: 'dup' })]);
    expect(snapshot.gaps).toMatchObject([
      { prompt_id: 'a', prompt_ref: 'A', prompt_text: 'Question a' },
      { prompt_id: 'b', prompt_ref: 7, prompt_text: 'Question b' },
    ]);
  });

  it('caps the number of gaps and the length of stored texts', () => {
    const long = `${'x'.repeat(SNAPSHOT_MAX_TEXT - 1)}😀 and more`;
    const gaps = Array.from({ length: 2_000 }, (_, i) => gap(`g${i}`, { prompt_text: long, prompt_ref: long }));
    const snapshot = buildSnapshot(run, overview([]), gaps);
    expect(snapshot.gaps).toHaveLength(SNAPSHOT_MAX_GAPS);
    const first = snapshot.gaps[0]!;
    // The emoji straddles the limit: dropped whole, never half a surrogate pair.
    expect(first.prompt_text).toBe('x'.repeat(SNAPSHOT_MAX_TEXT - 1));
    expect(first.prompt_ref).toBe('x'.repeat(SNAPSHOT_MAX_TEXT - 1));
    expect(JSON.stringify(snapshot).length).toBeLessThan(400 * 1024);
  });
});

describe('diffSnapshots', () => {
  const previous: ProjectSnapshot = {
    projectId: 'proj-1',
    lastCreatedAt: '2026-11-01T10:00:00Z',
    lastRunId: 'run-1',
    metrics: { Visibility: 39.1, Mentions: 119, Position: 3.1, Share: 10 },
    gaps: [
      { prompt_id: 'a', prompt_ref: 1, prompt_text: 'A' },
      { prompt_id: 'b', prompt_ref: 2, prompt_text: 'B' },
      { prompt_id: 'gone', prompt_ref: 3, prompt_text: 'Gone' },
    ],
  };

  it('has no deltas and no lists on the first digest', () => {
    const diff = diffSnapshots(null, { overview: overview([metric('Visibility', 42)]), gaps: [gap('a')] });
    expect(diff.firstDigest).toBe(true);
    expect([...diff.metricDeltas]).toEqual([['Visibility', null]]);
    expect(diff.newGaps).toEqual([]);
    expect(diff.resolvedGaps).toEqual([]);
  });

  it('computes numeric deltas, without float noise, and null where not comparable', () => {
    const diff = diffSnapshots(previous, {
      overview: overview([
        metric('Visibility', '42.3%'),
        metric('Mentions', 118),
        metric('Position', '3.1'),
        metric('Share', 'n/a'),
        metric('Brand new', 5),
        metric('Visibility', 0),
      ]),
      gaps: [],
    });
    expect(diff.firstDigest).toBe(false);
    expect([...diff.metricDeltas]).toEqual([
      ['Visibility', 3.2],
      ['Mentions', -1],
      ['Position', 0],
      ['Share', null],
      ['Brand new', null],
    ]);
    for (const delta of diff.metricDeltas.values()) expect(Number.isNaN(delta)).toBe(false);
  });

  it('ignores a corrupted previous value instead of producing NaN', () => {
    const corrupted = { ...previous, metrics: { Visibility: Number.NaN } };
    const diff = diffSnapshots(corrupted, { overview: overview([metric('Visibility', 40)]), gaps: [] });
    expect(diff.metricDeltas.get('Visibility')).toBeNull();
  });

  it('does not read inherited properties as previous values', () => {
    const diff = diffSnapshots(previous, { overview: overview([metric('toString', 1), metric('constructor', 2)]), gaps: [] });
    expect([...diff.metricDeltas.values()]).toEqual([null, null]);
  });

  it('lists new gaps in API order and resolved gaps in previous order', () => {
    const current = [gap('c'), gap('a'), gap('d'), gap('c')];
    const diff = diffSnapshots(previous, { overview: overview([]), gaps: current });
    expect(diff.newGaps.map((g) => g.prompt_id)).toEqual(['c', 'd']);
    expect(diff.resolvedGaps.map((g) => g.prompt_id)).toEqual(['b', 'gone']);
  });

  it('reports nothing when the gaps are unchanged', () => {
    const diff = diffSnapshots(previous, { overview: overview([]), gaps: [gap('a'), gap('gone'), gap('b')] });
    expect(diff.newGaps).toEqual([]);
    expect(diff.resolvedGaps).toEqual([]);
  });

  it('matches a long label against its stored (cut) form', () => {
    const label = 'L'.repeat(SNAPSHOT_MAX_TEXT + 50);
    const stored = buildSnapshot(run, overview([metric(label, 10)]), []);
    const diff = diffSnapshots(stored, { overview: overview([metric(label, 12.5)]), gaps: [] });
    expect(diff.metricDeltas.get(label)).toBe(2.5);
  });

  it('round-trips through JSON (as stored)', () => {
    const stored = JSON.parse(JSON.stringify(buildSnapshot(run, overview([metric('Visibility', '40%')]), [gap('a')]))) as ProjectSnapshot;
    const diff = diffSnapshots(stored, { overview: overview([metric('Visibility', '41%')]), gaps: [gap('a'), gap('b')] });
    expect(diff.metricDeltas.get('Visibility')).toBe(1);
    expect(diff.newGaps.map((g) => g.prompt_id)).toEqual(['b']);
  });
});
