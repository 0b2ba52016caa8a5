/**
 * Block Kit bounds hold for any input: long and odd-unicode names, hundreds of gaps, many metrics,
 * engines and alerts, any previous snapshot. Every message the renderer makes (main, thread, draft notice)
 * is checked against Slack's limits directly and with the shared checker.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderDigest, renderDraftReady, type DigestBlock, type DigestMessage, type DigestInput } from '../../shared/digest/render';
import { buildSnapshot } from '../../shared/digest/snapshot';
import type { TrendPoint } from '../../shared/ports';
import type { Gap, GenericRow, Scalar, VisibilityOverview } from '../../shared/read-api-types';
import { findBlockKitViolations } from '../../shared/slack-text';

const ODD = ['\u200b', '\u202e', '\u2066', '*', '_', '~', '`', '<', '>', '&', '|', '👩‍👩‍👧', 'e\u0301', '\ud83d', ' ', '\n', 'é', '語'];

/** Text mixing plain letters, odd characters and, sometimes, a very long run. */
const text = (maxLength: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc.array(fc.constantFrom(...ODD, 'a', 'Z'), { maxLength }).map((parts) => parts.join('')),
    fc.tuple(fc.constantFrom(...ODD, 'x'), fc.integer({ min: 200, max: 4000 })).map(([c, n]) => c.repeat(n)),
  );

const scalar: fc.Arbitrary<Scalar> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  text(40),
  fc.boolean(),
  fc.constant(null),
);

const row = (nameField: string): fc.Arbitrary<GenericRow> =>
  fc.tuple(text(60), fc.array(fc.tuple(text(20), scalar), { maxLength: 6 })).map(([name, rest]) => [[nameField, name] as const, ...rest]);

const alert: fc.Arbitrary<GenericRow> = fc
  .tuple(
    fc.constantFrom('critical', 'error', 'warning', 'info', 'bogus', 'HIGH'),
    text(600),
    fc.array(fc.tuple(text(15), scalar), { maxLength: 3 }),
  )
  .map(([severity, message, rest]) => [['severity', severity] as const, ['message', message] as const, ...rest]);

const gap = (i: number): fc.Arbitrary<Gap> =>
  fc.record({
    prompt_id: fc.oneof(fc.constant(`p-${i}`), fc.constant(`p-${i % 7}`), text(30)),
    prompt_ref: fc.oneof(fc.integer(), text(30)),
    prompt_text: text(400),
    platforms_losing: fc.array(text(30), { maxLength: 12 }),
    top_competitor: text(80),
    extra: fc.array(fc.tuple(fc.constantFrom('trend', 'worsening', 'note'), scalar), { maxLength: 3 }),
  });

const gaps: fc.Arbitrary<Gap[]> = fc.integer({ min: 0, max: 260 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => gap(i))));

const overview: fc.Arbitrary<VisibilityOverview> = fc.record({
  metrics: fc.array(fc.record({ label: text(120), value: scalar, caption: fc.oneof(fc.constant(null), text(500)) }), { maxLength: 60 }),
  engines: fc.array(fc.oneof(row('engine'), row('platform')), { maxLength: 40 }),
  alerts: fc.array(alert, { maxLength: 60 }),
});

/** A stored trend as a damaged snapshot may hold it: any names, any numbers, repeated days. */
const trend: fc.Arbitrary<TrendPoint[]> = fc.array(
  fc.record({
    atMs: fc.integer({ min: 1, max: 2_000_000_000_000 }),
    engines: fc.dictionary(text(40), fc.oneof(fc.double(), fc.double({ min: 0, max: 100, noNaN: true })), { maxKeys: 20 }),
  }),
  { maxLength: 60 },
);

const TEMPLATES = [undefined, 'https://app.example.com/p/{project_id}/runs/{run_id}?prompt={prompt_id}&a={asset_id}'];

const digestInput: fc.Arbitrary<DigestInput> = fc
  .record({
    name: fc.oneof(fc.constant(null), text(300)),
    id: fc.oneof(fc.uuid(), text(80)),
    answers: fc.oneof(fc.constant(null), fc.nat(), fc.constant(0)),
    status: fc.oneof(fc.constant(undefined), fc.constantFrom('completed', 'failed'), text(60)),
    before: fc.option(overview),
    beforeGaps: gaps,
    overview,
    gaps,
    pageSize: fc.option(fc.constantFrom(1, 5, 50, 100), { nil: undefined }),
    unreadable: fc.option(fc.nat({ max: 500 }), { nil: undefined }),
    template: fc.constantFrom(...TEMPLATES),
    mode: fc.constantFrom('full' as const, 'changes' as const),
    topGaps: fc.option(fc.nat({ max: 80 }), { nil: undefined }),
    reasoningGaps: fc.option(fc.nat({ max: 10 }), { nil: undefined }),
    reasons: fc.array(fc.record({ impact: text(20), category: text(60), detail: text(800) }), { maxLength: 12 }),
    trend,
  })
  .map((r) => ({
    project: { id: r.id, name: r.name ?? '', industry: null },
    run: { eventId: 'e', runId: 'r-2', answers: r.answers, createdAt: '2026-11-08T09:00:00Z', status: r.status },
    overview: r.overview,
    gaps: r.gaps,
    pageSize: r.pageSize,
    unreadableGaps: r.unreadable,
    previous:
      r.before === null
        ? null
        : buildSnapshot({ projectId: r.id, runId: 'r-1', createdAt: '2026-11-01T09:00:00Z', pageSize: r.pageSize }, r.before, r.beforeGaps),
    reasoning: new Map(
      r.gaps.slice(0, 5).map((g) => [g.prompt_id, { reasons: r.reasons, engine: g.platforms_losing[0] ?? null }] as const),
    ),
    options: { dashboardUrlTemplate: r.template, mode: r.mode, topGaps: r.topGaps, reasoningGaps: r.reasoningGaps, trend: r.trend },
  }));

/** Slack's limits, checked here directly (not through the shared checker). */
function boundsProblems(message: DigestMessage): string[] {
  const problems: string[] = [];
  if (message.text.trim().length === 0) problems.push('empty text');
  if (message.blocks.length > 50) problems.push(`${message.blocks.length} blocks`);
  message.blocks.forEach((block: DigestBlock, i) => {
    if (block.type === 'header' && block.text.text.length > 150) problems.push(`header ${i}`);
    if (block.type === 'section') {
      if ((block.text?.text.length ?? 0) > 3000) problems.push(`section ${i} text`);
      if ((block.fields?.length ?? 0) > 10) problems.push(`section ${i} fields`);
      if ((block.fields ?? []).some((f) => f.text.length > 2000)) problems.push(`section ${i} field text`);
    }
    if (block.type === 'context' && block.elements.length > 10) problems.push(`context ${i}`);
    if (block.type === 'actions') {
      for (const element of block.elements) if (element.type === 'button' && element.text.text.length > 75) problems.push(`button ${i}`);
    }
  });
  return problems;
}

function expectWithinBounds(message: DigestMessage): void {
  expect(boundsProblems(message)).toEqual([]);
  expect(findBlockKitViolations(message)).toEqual([]);
}

describe('Block Kit bounds for any input', () => {
  it('every digest message: ≤ 50 blocks, section ≤ 3000, header ≤ 150, fields ≤ 10 × 2000, buttons ≤ 75, context ≤ 10, text non-empty', () => {
    fc.assert(
      fc.property(digestInput, (input) => {
        const rendered = renderDigest(input);
        for (const message of [rendered.main, ...rendered.thread]) {
          expectWithinBounds(message);
          // Sent when Slack refuses the native blocks: within the same bounds, and none of them.
          if (message.fallbackBlocks !== undefined) expectWithinBounds({ ...message, blocks: message.fallbackBlocks });
        }
        // Short by construction, whatever the input: a phone screen's worth of blocks, at most three replies.
        expect(rendered.main.blocks.length).toBeLessThanOrEqual(8);
        expect(rendered.thread.length).toBeLessThanOrEqual(3);
      }),
      { numRuns: 40 },
    );
  }, 300_000); // CPU-bound: several minutes with two suites at once

  it('the draft notice too', () => {
    fc.assert(
      fc.property(text(300), text(200), text(200), scalar, fc.constantFrom(...TEMPLATES), (name, projectId, assetId, version, template) => {
        const notice = renderDraftReady({
          project: { id: projectId, name, industry: null },
          projectId,
          assetId,
          version,
          createdAt: '2026-11-08T09:00:00Z',
          dashboardUrlTemplate: template,
        });
        expectWithinBounds(notice);
      }),
      { numRuns: 200 },
    );
  });
});
