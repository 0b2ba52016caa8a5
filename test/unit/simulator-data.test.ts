import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SimulatorData } from '../../local/simulator/data';
import { FixtureError, fixtureIssues, loadFixtureFile, validateFixture, type SimulatorFixture } from '../../local/simulator/fixture';
import { ENGINES } from '../../local/simulator/generated';
import { deterministicUuid, mulberry32 } from '../../local/simulator/random';

const anyString: unknown = expect.any(String);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function metricValue(data: SimulatorData, projectId: string, label: string): unknown {
  const overview = data.visibility(projectId)!;
  const metrics = overview['metrics'] as { label: string; value: unknown }[];
  return metrics.find((m) => m.label === label)?.value;
}

function gapIds(data: SimulatorData, projectId: string): string[] {
  return data.gaps(projectId)!.gaps.map((g) => g.prompt_id);
}

function smallFixture(): SimulatorFixture {
  return {
    projects: [
      {
        id: 'p-1',
        name: 'Acme',
        industry: 'Retail',
        visibility: {
          metrics: [
            { label: 'Visibility score', value: 40.5, caption: 'share' },
            { label: 'Open gaps', value: 2 },
            { label: 'Leader', value: 'Rival' },
          ],
          engines: [{ engine: 'ChatGPT', visibility: 40.1, mentions: 12 }],
          alerts: [{ severity: 'info', message: 'hello' }],
        },
        gaps: [
          {
            prompt_id: 'q1',
            prompt_ref: 1,
            prompt_text: 'Best shop?',
            platforms_losing: ['Gemini'],
            top_competitor: 'Rival',
            trend: 'worse',
          },
          { prompt_id: 'q2', prompt_ref: 'Q-2', prompt_text: 'Cheapest shop?', platforms_losing: [], top_competitor: 'Other' },
          {
            prompt_id: 'q3',
            prompt_ref: 3,
            prompt_text: 'Nearest shop?',
            platforms_losing: ['Claude', 'Copilot'],
            top_competitor: 'Rival',
          },
        ],
        probes: [
          { id: 'r1', prompt_id: 'q1', reasoning_card_id: 'c1' },
          { id: 'r2', prompt_id: 'q1', reasoning_card_id: null },
        ],
        reasoning: { c1: { reasons: [{ impact: 'high', category: 'content', detail: 'No page' }] } },
      },
    ],
  };
}

describe('deterministic helpers', () => {
  it('mulberry32 repeats for a seed and stays in [0, 1)', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const xs = Array.from({ length: 50 }, () => a());
    expect(Array.from({ length: 50 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(mulberry32(43)()).not.toBe(xs[0]);
  });

  it('derives UUID-format ids from their key', () => {
    expect(deterministicUuid(1, 'x')).toMatch(UUID);
    expect(deterministicUuid(1, 'x')).toBe(deterministicUuid(1, 'x'));
    expect(deterministicUuid(1, 'x')).not.toBe(deterministicUuid(2, 'x'));
  });
});

describe('generated data', () => {
  it('is identical for the same seed and differs for another seed', () => {
    expect(SimulatorData.generate(7).toFixture()).toEqual(SimulatorData.generate(7).toFixture());
    expect(SimulatorData.generate(7).projectIds()).not.toEqual(SimulatorData.generate(8).projectIds());
  });

  it('has the documented shape', () => {
    const data = SimulatorData.generate(7);
    const projects = data.projects();
    expect(projects.length).toBeGreaterThanOrEqual(3);
    for (const project of projects) {
      expect(project.id).toMatch(UUID);
      expect(project.name).not.toBe('');
      expect(project.industry).not.toBe('');

      const overview = data.visibility(project.id)!;
      const metrics = overview['metrics'] as { label: string; value: unknown; caption?: string }[];
      expect(metrics.some((m) => typeof m.value === 'number')).toBe(true);
      expect(metrics.some((m) => typeof m.value === 'string')).toBe(true);
      const engines = overview['engines'] as Record<string, unknown>[];
      expect(engines.map((e) => e['engine'])).toEqual([...ENGINES]);
      expect(Object.keys(engines[0]!)).toEqual(expect.arrayContaining(['engine', 'visibility', 'mentions', 'avg_position']));
      const alerts = overview['alerts'] as Record<string, unknown>[];
      expect(alerts.length).toBeGreaterThan(0);
      expect(alerts[0]).toEqual({ severity: anyString, message: anyString });

      const { gaps, total } = data.gaps(project.id)!;
      expect(total).toBeGreaterThanOrEqual(20);
      for (const gap of gaps) {
        expect(gap.prompt_id).toMatch(UUID);
        expect(gap.prompt_text).not.toBe('');
        expect(gap.platforms_losing.length).toBeGreaterThan(0);
        expect(typeof gap['trend']).toBe('string');
      }
      // Worst first: never fewer engines losing than the next gap.
      for (let i = 1; i < gaps.length; i += 1) {
        expect(gaps[i - 1]!.platforms_losing.length).toBeGreaterThanOrEqual(gaps[i]!.platforms_losing.length);
      }

      // Some gap questions have reasoning cards, some have none at all.
      const withCard = gaps.filter((g) => data.results(project.id, g.prompt_id)!.some((p) => p.reasoning_card_id !== null));
      expect(withCard.length).toBeGreaterThan(0);
      expect(withCard.length).toBeLessThan(gaps.length);
      const probe = data.results(project.id, withCard[0]!.prompt_id)!.find((p) => p.reasoning_card_id !== null)!;
      const card = data.reasoning(project.id, probe.id);
      expect(card.ok).toBe(true);
      if (card.ok) expect(card.card.reasons.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('pages gaps and reports unknown projects', () => {
    const data = SimulatorData.generate(7);
    const id = data.projectIds()[0]!;
    expect(data.gaps(id, 5)!.gaps).toHaveLength(5);
    expect(data.gaps('nope')).toBeUndefined();
    expect(data.visibility('nope')).toBeUndefined();
    expect(data.reasoning(id, 'nope')).toEqual({ ok: false, reason: 'no_result' });
    expect(() => data.advanceRun('nope')).toThrow(/Unknown project/);
  });
});

describe('runs', () => {
  it('move metrics and gaps, deterministically', () => {
    const a = SimulatorData.generate(11);
    const b = SimulatorData.generate(11);
    const id = a.projectIds()[1]!;
    const before = gapIds(a, id);
    const scoreBefore = metricValue(a, id, 'Visibility score');
    const probesBefore = a.results(id)!.map((p) => p.id);

    const run = a.advanceRun(id);
    expect(b.advanceRun(id)).toEqual(run);
    expect(a.toFixture()).toEqual(b.toFixture());

    expect(run.run).toBe(1);
    expect(a.runNumber(id)).toBe(1);
    expect(run.runId).toMatch(UUID);
    expect(run.answers).toBeGreaterThan(0);
    expect(run.resolvedGaps.length).toBeGreaterThanOrEqual(2);
    expect(run.newGaps.length).toBeGreaterThanOrEqual(2);

    const after = gapIds(a, id);
    for (const resolved of run.resolvedGaps) {
      expect(before).toContain(resolved);
      expect(after).not.toContain(resolved);
    }
    for (const added of run.newGaps) {
      expect(before).not.toContain(added);
      expect(after).toContain(added);
    }
    expect(metricValue(a, id, 'Visibility score')).not.toBe(scoreBefore);
    expect(metricValue(a, id, 'Open gaps')).toBe(after.length);
    expect(a.results(id)!.map((p) => p.id)).not.toEqual(probesBefore);

    // Other projects did not move.
    const other = a.projectIds()[0]!;
    expect(a.runNumber(other)).toBe(0);
  });

  it('keep moving over many runs without running dry', () => {
    const data = SimulatorData.generate(3);
    const id = data.projectIds()[0]!;
    const runIds = new Set<string>();
    for (let i = 0; i < 30; i += 1) runIds.add(data.advanceRun(id).runId);
    expect(runIds.size).toBe(30);
    expect(data.gaps(id)!.total).toBeGreaterThan(5);
    const overview = data.visibility(id)!;
    for (const metric of overview['metrics'] as { label: string; value: unknown }[]) {
      if (typeof metric.value === 'number' && /visib|share/i.test(metric.label)) {
        expect(metric.value).toBeGreaterThanOrEqual(0);
        expect(metric.value).toBeLessThanOrEqual(100);
      }
    }
  });
});

describe('fixtures', () => {
  it('round-trips generated data', () => {
    const data = SimulatorData.generate(5);
    const fixture = data.toFixture();
    expect(fixtureIssues(fixture)).toEqual([]);
    const loaded = SimulatorData.fromFixture(JSON.parse(JSON.stringify(fixture)));
    const id = data.projectIds()[2]!;
    expect(loaded.projectIds()).toEqual(data.projectIds());
    expect(loaded.visibility(id)).toEqual(data.visibility(id));
    expect(loaded.gaps(id)).toEqual(data.gaps(id));
    expect(loaded.results(id)).toEqual(data.results(id));
  });

  it('serves a hand-written fixture and moves it on runs', () => {
    const data = SimulatorData.fromFixture(smallFixture(), 9);
    expect(data.projects()).toEqual([{ id: 'p-1', name: 'Acme', industry: 'Retail' }]);
    expect(data.gaps('p-1')!.gaps.map((g) => g.prompt_ref)).toEqual([1, 'Q-2', 3]);
    expect(data.results('p-1', 'q1')!.map((p) => p.id)).toEqual(['r1', 'r2']);
    expect(data.reasoning('p-1', 'r2')).toEqual({ ok: false, reason: 'no_card' });
    const card = data.reasoning('p-1', 'r1');
    expect(card.ok && card.card.reasons[0]!.detail).toBe('No page');

    const run = data.advanceRun('p-1');
    expect(run.newGaps.length).toBeGreaterThan(0);
    expect(metricValue(data, 'p-1', 'Visibility score')).not.toBe(40.5);
    expect(metricValue(data, 'p-1', 'Leader')).toBe('Rival');
    expect(metricValue(data, 'p-1', 'Open gaps')).toBe(data.gaps('p-1')!.total);
    // Same fixture, same seed, same moves.
    const again = SimulatorData.fromFixture(smallFixture(), 9);
    expect(again.advanceRun('p-1')).toEqual(run);
  });

  it('names every bad field', () => {
    const bad = smallFixture() as unknown as { projects: Record<string, unknown>[] };
    const project = bad.projects[0]!;
    (project['gaps'] as Record<string, unknown>[])[1]!['prompt_text'] = '';
    (project['gaps'] as Record<string, unknown>[])[2]!['platforms_losing'] = 'Gemini';
    ((project['visibility'] as Record<string, unknown>)['metrics'] as Record<string, unknown>[])[0]!['value'] = { x: 1 };
    (project['probes'] as Record<string, unknown>[])[1]!['reasoning_card_id'] = 'missing-card';
    bad.projects.push({ ...project, name: 7 });

    const issues = fixtureIssues(bad);
    expect(issues).toEqual(
      expect.arrayContaining([
        'projects[0].gaps[1].prompt_text: must be a non-empty string',
        'projects[0].gaps[2].platforms_losing: must be an array of strings',
        'projects[0].visibility.metrics[0].value: must be a string, number, boolean or null',
        'projects[0].probes[1].reasoning_card_id: names the card "missing-card" that is not in projects[0].reasoning',
        'projects[1].id: duplicates the id "p-1" of an earlier project',
        'projects[1].name: must be a non-empty string',
      ]),
    );
    expect(() => validateFixture(bad)).toThrow(FixtureError);
    expect(() => SimulatorData.fromFixture(bad)).toThrow(/projects\[0\]\.gaps\[1\]\.prompt_text/);
  });

  it('rejects the wrong top level', () => {
    expect(fixtureIssues([])).toEqual(['(root): must be a JSON object with a "projects" array']);
    expect(fixtureIssues({ projects: [] })).toEqual(['projects: must be a non-empty array']);
    expect(fixtureIssues({ seed: 'x', projects: [1] })).toEqual([
      'seed: must be an integer when present',
      'projects[0]: must be an object',
    ]);
  });

  it('loads files and names the file in errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-fixture-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(smallFixture()));
    expect(loadFixtureFile(good).projects[0]!.id).toBe('p-1');

    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"projects": [');
    expect(() => loadFixtureFile(broken)).toThrow(/broken\.json[\s\S]*not valid JSON/);

    const invalid = join(dir, 'invalid.json');
    writeFileSync(invalid, JSON.stringify({ projects: [{ id: 'x' }] }));
    expect(() => loadFixtureFile(invalid)).toThrow(/invalid\.json[\s\S]*projects\[0\]\.name/);
    expect(() => loadFixtureFile(join(dir, 'absent.json'))).toThrow(/absent\.json[\s\S]*cannot be read/);
  });
});
