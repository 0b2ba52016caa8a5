import { describe, expect, it } from 'vitest';
import {
  EVENT_TYPES,
  HANDLED_EVENT_TYPES,
  hasSqsInvalidCharacter,
  parseRunCompletedData,
  parseTypedEvent,
  projectIdOf,
  validateWebhookEvent,
} from '../../shared/events';

describe('validateWebhookEvent', () => {
  const good = { id: 'e1', type: 'run.completed', created_at: '2026-11-01T10:00:00Z', data: { project_id: 'p1' } };

  it('accepts a complete body and keeps only the four fields', () => {
    const result = validateWebhookEvent({ ...good, extra: 1 });
    expect(result).toEqual({ ok: true, event: good });
  });

  it.each([
    ['id', { ...good, id: '' }],
    ['type', { ...good, type: 7 }],
    ['created_at', { ...good, created_at: 'yesterday' }],
    ['data', { ...good, data: [1] }],
  ])('rejects a body with a bad %s', (field, body) => {
    const result = validateWebhookEvent(body);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(field);
  });

  it('accepts ids of up to 256 printable ASCII characters', () => {
    for (const id of ['0d4c4f7e-1f0a-4c33-9a55-0c2b1d7e9a01', 'evt_01HZX.a:b-c', 'x'.repeat(256)]) {
      expect(validateWebhookEvent({ ...good, id }).ok, id).toBe(true);
    }
  });

  // DynamoDB and SQS would refuse these on every retry: a 400 ends the delivery, a 503 does not.
  it.each([
    ['longer than 256 characters', 'x'.repeat(257)],
    ['a control character', 'e1\u0000'],
    ['a newline', 'e1\n'],
    ['DEL', 'e1\u007f'],
    ['non-ASCII', 'é1'],
    ['a lone surrogate', 'e1\ud800'],
    ['an emoji', 'e1😀'],
  ])('rejects an id with %s', (_label, id) => {
    const result = validateWebhookEvent({ ...good, id });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain('"id"');
  });

  it.each([
    ['a NUL', '\u0000'],
    ['a control character', '\u001b'],
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate', '\udfff'],
    ['U+FFFE', '\ufffe'],
    ['U+FFFF', '\uffff'],
  ])('rejects a type or data.project_id holding %s, which SQS refuses', (_label, bad) => {
    const badType = validateWebhookEvent({ ...good, type: `run.completed${bad}` });
    expect(badType.ok).toBe(false);
    if (!badType.ok) expect(badType.reason).toContain('"type"');
    const badProject = validateWebhookEvent({ ...good, data: { project_id: `p${bad}1` } });
    expect(badProject.ok).toBe(false);
    if (!badProject.ok) expect(badProject.reason).toContain('"data.project_id"');
  });

  it('accepts a type and project id of any character SQS allows, and a non-string project id', () => {
    const allowed = 'p\t\n\r ~\u007f\u00e9\ud7ff\ue000\ufffd😀\u{10ffff}';
    expect(validateWebhookEvent({ ...good, type: allowed, data: { project_id: allowed } }).ok).toBe(true);
    expect(validateWebhookEvent({ ...good, data: { project_id: 42 } }).ok).toBe(true);
  });

  it('tells the characters SQS refuses from those it allows', () => {
    expect(
      ['', 'abc', '\t\n\r', '\u0020', '\ud7ff', '\ue000', '\ufffd', '\ud83d\ude00', '\u{10000}', '\u{10ffff}'].map(hasSqsInvalidCharacter),
    ).toEqual(Array(10).fill(false));
    expect(
      ['\u0000', '\u0008', '\u000b', '\u001f', '\ud800', 'a\udc00b', '\ude00\ud83d', '\ufffe', '\uffff'].map(hasSqsInvalidCharacter),
    ).toEqual(Array(9).fill(true));
  });

  it('rejects non-objects', () => {
    expect(validateWebhookEvent([good]).ok).toBe(false);
    expect(validateWebhookEvent(null).ok).toBe(false);
  });

  it('reads project ids and run data tolerantly', () => {
    expect(projectIdOf(good)).toBe('p1');
    expect(projectIdOf({ ...good, data: { project_id: 3 } })).toBeUndefined();
    expect(parseRunCompletedData({ project_id: 'p', run_id: 'r', answers: 'many' })).toEqual({
      ok: true,
      data: { project_id: 'p', run_id: 'r', status: 'completed', answers: null },
    });
    expect(parseRunCompletedData({ project_id: 'p' }).ok).toBe(false);
  });
});

describe('the event-type registry', () => {
  it('parses the example data of every handled type, and names the type in a refusal', () => {
    for (const type of HANDLED_EVENT_TYPES) {
      const data = EVENT_TYPES[type].exampleData('p1', () => 'id-1');
      const event = { id: 'e1', type, created_at: '2026-03-01T12:00:00Z', data };
      expect(parseTypedEvent(event)).toEqual({ ok: true, data: { type, event, data } });
      const refused = parseTypedEvent({ ...event, data: {} });
      expect(refused.ok).toBe(false);
      expect(!refused.ok && refused.reason.startsWith(type)).toBe(true);
    }
  });

  it('leaves other types to the caller (acknowledged and dropped)', () => {
    expect(parseTypedEvent({ id: 'e1', type: 'prompt.added', created_at: '2026-03-01T12:00:00Z', data: {} })).toEqual({
      ok: false,
      reason: 'unhandled event type "prompt.added"',
    });
  });
});
