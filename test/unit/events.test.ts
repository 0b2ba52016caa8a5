import { describe, expect, it } from 'vitest';
import { validateWebhookEvent, parseRunCompletedData, projectIdOf } from '../../shared/events';

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
