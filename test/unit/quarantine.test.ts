/** The quarantine envelope and its re-admission on `bridge dlq replay`, and ingest's admission rules. */
import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth, isStrictUtcTimestamp, parseSignedDelivery } from '../../shared/events';
import { parseQuarantinedDelivery, quarantinedDelivery, readmitQuarantined } from '../../shared/quarantine';

const T = Date.parse('2026-11-20T10:00:05Z') / 1000;
const body = (fields: Record<string, unknown>) =>
  Buffer.from(
    JSON.stringify({
      id: 'e-1',
      type: 'run.completed',
      created_at: '2026-11-20T10:00:00Z',
      data: { project_id: 'p-1', run_id: 'r-1' },
      ...fields,
    }),
  );

describe('admission rules', () => {
  it('takes created_at only as strict ISO 8601 UTC', () => {
    for (const ok of ['2026-11-20T10:00:00Z', '2026-11-20T10:00:00.1Z', '2026-02-28T23:59:59.999Z'])
      expect(isStrictUtcTimestamp(ok), ok).toBe(true);
    for (const bad of [
      '1',
      'Fri, 20 Nov 2026 10:00:00 GMT',
      '2026-11-20T10:00:00+00:00',
      '2026-11-20T10:00Z',
      '2026-02-30T00:00:00Z',
      '2026-11-20T24:00:00Z',
      ' 2026-11-20T10:00:00Z',
    ]) {
      expect(isStrictUtcTimestamp(bad), bad).toBe(false);
    }
  });

  it('measures nesting without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(exceedsJsonDepth(deep, 32)).toBe(true);
    expect(exceedsJsonDepth({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(exceedsJsonDepth({ a: [{ b: {} }] }, 3)).toBe(true);
  });

  it('skips a UTF-8 BOM for parsing only', () => {
    const parsed = parseSignedDelivery(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body({})]), T, 300);
    expect(parsed.ok).toBe(true);
  });

  it('names why a body is refused, and its id for the header comparison', () => {
    expect(parseSignedDelivery(body({ created_at: '1' }), T, 300)).toEqual({
      ok: false,
      reason: '"created_at" is not ISO 8601 UTC (YYYY-MM-DDTHH:MM:SS[.sss]Z)',
      bodyId: 'e-1',
    });
    expect(parseSignedDelivery(body({ data: { project_id: 'p-1' } }), T, 300)).toMatchObject({
      ok: false,
      reason: 'run.completed without data.run_id',
    });
    expect(parseSignedDelivery(Buffer.from('{'), T, 300)).toEqual({ ok: false, reason: 'body is not JSON', bodyId: undefined });
  });
});

describe('quarantine envelope', () => {
  const kept = (raw: Buffer, reason = 'old reason') =>
    JSON.parse(
      JSON.stringify(quarantinedDelivery({ raw, reason, receivedAt: '2026-11-20T10:00:05.000Z', signedAt: T, bodyId: 'e-1' })),
    ) as unknown;

  it('round-trips through JSON and is told apart from other queue messages', () => {
    const envelope = parseQuarantinedDelivery(kept(body({ created_at: '1' })));
    expect(envelope).toMatchObject({ kind: 'quarantined_delivery', reason: 'old reason', signed_at: T, event_id: 'e-1' });
    expect(parseQuarantinedDelivery({ event: {}, received_at: 'x' })).toBeUndefined();
    expect(parseQuarantinedDelivery({ kind: 'slack_command' })).toBeUndefined();
    expect(parseQuarantinedDelivery({ kind: 'quarantined_delivery', raw_base64: 1 })).toBeUndefined();
  });

  it('leaves out an event id that could not be stored', () => {
    expect(
      quarantinedDelivery({ raw: Buffer.from('{}'), reason: 'r', receivedAt: 'x', signedAt: T, bodyId: 'x'.repeat(300) }),
    ).not.toHaveProperty('event_id');
  });

  it('re-admits with the current rules: processable now → the queued event; still not → the current reason', () => {
    const nowReadable = parseQuarantinedDelivery(kept(body({})))!;
    expect(readmitQuarantined(nowReadable)).toEqual({
      kind: 'event',
      queued: {
        event: { id: 'e-1', type: 'run.completed', created_at: '2026-11-20T10:00:00Z', data: { project_id: 'p-1', run_id: 'r-1' } },
        received_at: '2026-11-20T10:00:05.000Z',
      },
    });
    expect(readmitQuarantined(parseQuarantinedDelivery(kept(body({ created_at: '1' })))!)).toEqual({
      kind: 'still_unprocessable',
      reason: '"created_at" is not ISO 8601 UTC (YYYY-MM-DDTHH:MM:SS[.sss]Z)',
    });
    expect(readmitQuarantined(parseQuarantinedDelivery(kept(body({ type: 'project.renamed' })))!)).toMatchObject({ kind: 'ignored' });
  });
});
