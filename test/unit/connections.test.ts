/** Connections' model: ids, the webhook path's target, the secret's shape, rotation rules, routes. */
import { describe, expect, it } from 'vitest';
import {
  connectionIdProblem,
  connectionWebhookUrl,
  finishRotation,
  formatConnectionSecret,
  parseConnectionSecret,
  routesProblem,
  startRotation,
  webhookTargetOf,
} from '../../shared/connections/model';
import { parseQueuedMessage } from '../../shared/worker/parse';
import { silenceNotice, untoldSilence, usualIntervalMs } from '../../shared/connections/watchdog';

describe('connection ids', () => {
  it('takes lower-case letters, digits and inner hyphens, up to 40', () => {
    for (const id of ['a', 'acme', 'acme-seo', 'c-3f9a1c2b', 'x'.repeat(40)]) expect(connectionIdProblem(id), id).toBeUndefined();
    for (const id of ['', 'Acme', '-acme', 'acme-', 'ac me', 'acme/x', 'acme_seo', 'x'.repeat(41), '~index', 'ä'])
      expect(connectionIdProblem(id), id).toMatch(/lower-case letters/);
  });

  it('refuses `stack`, the name of the stack’s own tenant (its metric dimension and message group)', () => {
    expect(connectionIdProblem('stack')).toMatch(/stack's own workspace/);
  });
});

describe('webhook paths', () => {
  it("routes /webhook to the stack's own and /webhook/<id> to that connection; anything else to none", () => {
    expect(webhookTargetOf('/webhook')).toEqual({ kind: 'default' });
    expect(webhookTargetOf('/webhook/acme')).toEqual({ kind: 'connection', id: 'acme' });
    for (const path of ['/webhook/', '/webhook/Acme', '/webhook/acme/x', '/webhooks/acme', '/slack/commands', '/'])
      expect(webhookTargetOf(path), path).toEqual({ kind: 'none' });
  });

  it('builds the URL the service is given', () => {
    expect(connectionWebhookUrl('https://x.example/webhook', 'acme')).toBe('https://x.example/webhook/acme');
    expect(connectionWebhookUrl('https://x.example/webhook/', 'acme')).toBe('https://x.example/webhook/acme');
  });
});

describe('the connection secret', () => {
  it('round-trips and trims', () => {
    const text = formatConnectionSecret({ readApiKey: 'key', signingSecrets: ['whsec_a', 'whsec_b'] });
    expect(parseConnectionSecret(text, 's')).toEqual({ readApiKey: 'key', signingSecrets: ['whsec_a', 'whsec_b'] });
    expect(parseConnectionSecret('{"readApiKey":" k ","signingSecrets":[" w "]}', 's')).toEqual({ readApiKey: 'k', signingSecrets: ['w'] });
  });

  it('refuses what verifies nothing, naming the secret and the shape, never the value', () => {
    const bad = [
      'whsec_t0ps3cret',
      '["whsec_t0ps3cret"]',
      '{"signingSecrets":["whsec_t0ps3cret"]}',
      '{"readApiKey":"t0ps3cret"}',
      '{"readApiKey":"t0ps3cret","signingSecrets":[]}',
      '{"readApiKey":"k","signingSecrets":["t0ps3cret","b","c"]}',
      '{"readApiKey":"t0ps3cret","signingSecrets":[1]}',
    ];
    for (const text of bad) {
      expect(() => parseConnectionSecret(text, 'visibility-bridge/prod/connections/acme'), text).toThrow(
        /secret visibility-bridge\/prod\/connections\/acme/,
      );
      try {
        parseConnectionSecret(text, 'name');
      } catch (error) {
        expect((error as Error).message).not.toContain('t0ps3cret');
      }
    }
  });
});

describe('rotation', () => {
  it('adds the new secret next to the old one, and finishing keeps only the new one', () => {
    const started = startRotation(['whsec_old'], 'whsec_new');
    expect(started).toEqual({ ok: true, signingSecrets: ['whsec_old', 'whsec_new'] });
    expect(finishRotation(['whsec_old', 'whsec_new'])).toEqual({ ok: true, signingSecrets: ['whsec_new'] });
  });

  it('refuses a third secret, the same secret twice, and finishing with none under way', () => {
    expect(startRotation(['a', 'b'], 'c')).toMatchObject({ ok: false, problem: expect.stringMatching(/already under way/) as string });
    expect(startRotation(['a'], 'a')).toMatchObject({ ok: false, problem: expect.stringMatching(/already live/) as string });
    expect(finishRotation(['a'])).toMatchObject({ ok: false, problem: expect.stringMatching(/no rotation/) as string });
  });
});

describe('routes', () => {
  it('takes channel ids only', () => {
    expect(routesProblem({ defaultChannel: 'C0ACME', byProject: { p1: 'G0PRIV' } })).toBeUndefined();
    expect(routesProblem({ defaultChannel: '#digests', byProject: {} })).toMatch(/not a channel id/);
    expect(routesProblem({ defaultChannel: 'C0ACME', byProject: { p1: 'general' } })).toMatch(/project p1/);
  });
});

describe('the queued message of a connection', () => {
  const event = {
    id: '0b7e3c52-1111-4a4a-9a9a-000000000001',
    type: 'run.completed',
    created_at: '2026-11-20T10:00:00Z',
    data: { project_id: 'p-1', run_id: 'r-1', status: 'completed', answers: 10 },
  };

  it('carries the connection id to the handler', () => {
    const parsed = parseQueuedMessage(JSON.stringify({ event, received_at: '2026-11-20T10:00:01Z', connection: 'acme' }));
    expect(parsed.kind).toBe('message');
    if (parsed.kind === 'message') expect(parsed.message.payload).toMatchObject({ connection: 'acme' });
  });

  it("leaves the stack's own envelope without one, and refuses a connection that is not an id", () => {
    const own = parseQueuedMessage(JSON.stringify({ event, received_at: '2026-11-20T10:00:01Z' }));
    expect(own.kind === 'message' && 'connection' in own.message.payload).toBe(false);
    const bad = parseQueuedMessage(JSON.stringify({ event, received_at: '2026-11-20T10:00:01Z', connection: '../x' }));
    expect(bad).toMatchObject({ kind: 'unusable', reason: expect.stringMatching(/connection/) as string });
  });
});

describe('the silence watchdog', () => {
  const HOUR = 3_600_000;
  const runs = [0, 6 * HOUR, 12 * HOUR, 18 * HOUR];

  it("learns the usual interval from the connection's own runs (median gap), once it has three", () => {
    expect(usualIntervalMs([0, HOUR])).toBeUndefined();
    expect(usualIntervalMs(runs)).toBe(6 * HOUR);
    expect(usualIntervalMs([0, HOUR, 2 * HOUR, 30 * HOUR])).toBe(HOUR);
  });

  it('tells a silence of 3× the usual interval, once, and a new silence after a new run', () => {
    const last = 18 * HOUR;
    expect(untoldSilence({ runTimesMs: runs, silenceToldAfterMs: undefined }, last + 17 * HOUR)).toBeUndefined();
    expect(untoldSilence({ runTimesMs: runs, silenceToldAfterMs: undefined }, last + 18 * HOUR)).toEqual({
      lastRunMs: last,
      usualMs: 6 * HOUR,
    });
    expect(untoldSilence({ runTimesMs: runs, silenceToldAfterMs: last }, last + 40 * HOUR)).toBeUndefined();
    const later = [...runs.slice(1), 24 * HOUR];
    expect(untoldSilence({ runTimesMs: later, silenceToldAfterMs: last }, 24 * HOUR + 18 * HOUR)).toMatchObject({ lastRunMs: 24 * HOUR });
  });

  it("says when the last run came, its usual interval, and what to check in the service's settings", () => {
    const notice = silenceNotice(
      {
        id: 'acme',
        baseUrl: 'https://x',
        secretName: 's',
        routes: { defaultChannel: 'C0A', byProject: {} },
        slackTeamIds: [],
        status: 'active',
        createdAtMs: 0,
      },
      { lastRunMs: Date.parse('2026-11-20T10:00:00Z'), usualMs: 6 * HOUR },
    );
    expect(notice.text).toContain('switched off after 15 failed deliveries');
    expect(notice.text).toContain('2026-11-20 10:00 UTC');
    expect(notice.text).toContain('every 6 h');
  });
});
