import { describe, expect, it } from 'vitest';
import type { GenericRow } from '../../shared/read-api-types';
import { alertView, alertsBySeverity, nameFieldIndex, rowName, rowPrimaryValue } from '../../shared/digest/rows';

describe('engine rows read by meaning', () => {
  it('take their name from a known name field wherever it is, not from the first text field', () => {
    const row: GenericRow = [
      ['region', 'EU'],
      ['visibility', 40],
      ['Engine ', 'Gemini'],
    ];
    expect(rowName(row)).toBe('Gemini');
    expect(nameFieldIndex(row)).toBe(2);
  });

  it('prefer engine over platform over name, and skip blank ones', () => {
    expect(
      rowName([
        ['name', 'n'],
        ['platform', 'p'],
        ['engine', 'e'],
      ]),
    ).toBe('e');
    expect(
      rowName([
        ['engine', '  '],
        ['platform', 'Claude'],
      ]),
    ).toBe('Claude');
  });

  it('fall back to the first non-blank text field; no name without one', () => {
    expect(
      rowName([
        ['share', 3],
        ['label', ' '],
        ['label2', 'Copilot'],
      ]),
    ).toBe('Copilot');
    expect(
      rowName([
        ['share', 3],
        ['ok', true],
      ]),
    ).toBeNull();
    expect(nameFieldIndex([['share', 3]])).toBe(-1);
  });

  it('are compared by a known figure first (numeric text counts), else the first numeric field, never a boolean', () => {
    expect(
      rowPrimaryValue([
        ['mentions', 12],
        ['visibility', '41.5%'],
      ]),
    ).toEqual({ field: 'visibility', value: 41.5 });
    expect(
      rowPrimaryValue([
        ['visibility', 'n/a'],
        ['score', 7],
      ]),
    ).toEqual({ field: 'score', value: 7 });
    expect(
      rowPrimaryValue([
        ['active', true],
        ['engine', 'Gemini'],
        ['citations', '1,200'],
      ]),
    ).toEqual({ field: 'citations', value: 1200 });
    expect(
      rowPrimaryValue([
        ['engine', 'Gemini'],
        ['active', false],
      ]),
    ).toBeNull();
  });
});

describe('alerts read by meaning', () => {
  it('take severity and text from known fields anywhere; the rest is kept in order', () => {
    const view = alertView([
      ['since', '2026-11-01'],
      ['title', 'Gemini dropped'],
      ['Level', 'High'],
      ['engine', 'Gemini'],
    ]);
    expect(view).toEqual({
      severity: 'critical',
      severityText: 'High',
      text: 'Gemini dropped',
      rest: [
        ['since', '2026-11-01'],
        ['engine', 'Gemini'],
      ],
    });
  });

  it.each([
    ['CRITICAL', 'critical'],
    ['fatal', 'critical'],
    ['Error', 'error'],
    ['severe', 'error'],
    ['warn', 'warning'],
    ['moderate', 'warning'],
    ['notice', 'info'],
    ['low', 'info'],
    ['bogus', 'other'],
  ] as const)('severity "%s" is %s', (word, severity) => {
    expect(
      alertView([
        ['severity', word],
        ['message', 'x'],
      ]).severity,
    ).toBe(severity);
  });

  it('without a severity or text: other, null text, every field kept', () => {
    const row: GenericRow = [
      ['severity', 3],
      ['count', 2],
    ];
    expect(alertView(row)).toEqual({ severity: 'other', severityText: null, text: null, rest: row });
  });

  it('are ordered critical, error, warning, info, other; API order kept within a severity', () => {
    const alert = (severity: string, message: string): GenericRow => [
      ['severity', severity],
      ['message', message],
    ];
    const ordered = alertsBySeverity([
      alert('info', 'i1'),
      alert('?', 'o1'),
      alert('warning', 'w1'),
      alert('critical', 'c1'),
      alert('info', 'i2'),
      alert('error', 'e1'),
      alert('critical', 'c2'),
    ]);
    expect(ordered.map((a) => a.text)).toEqual(['c1', 'c2', 'e1', 'w1', 'i1', 'i2', 'o1']);
  });
});
