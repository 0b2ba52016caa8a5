import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LocalSlackServer } from '../../local/slack/server';
import { SlackPermanentError, SlackUnavailableError } from '../../shared/adapters/slack-errors';
import { createSlackPoster, type SlackPosterOptions } from '../../shared/adapters/slack-poster';
import type { SlackMessage } from '../../shared/ports';
import { checkSlackAuth, isBotInChannel } from '../../cli/slack-checks';
import { rejection } from '../support/rejection';

const TOKEN = 'xoxb-local-test-token-1234';

const message: SlackMessage = {
  text: 'Weekly visibility digest for Acme',
  blocks: [
    { type: 'header', text: { type: 'plain_text', text: 'Acme — visibility digest' } },
    {
      type: 'section',
      text: { type: 'mrkdwn', text: 'Visibility *42%* (+3 pts)' },
      fields: [
        { type: 'mrkdwn', text: '*Runs*\n12' },
        { type: 'mrkdwn', text: '*Gaps*\n3' },
      ],
    },
    { type: 'divider' },
    { type: 'context', elements: [{ type: 'mrkdwn', text: 'run <https://example.test/r/1|r_1>' }] },
  ],
};

/** Records waits instead of waiting; advances the fake clock by each wait. */
function fakeTime(start = 1_000_000): { now: () => number; sleep: (ms: number) => Promise<void>; waits: number[] } {
  let clock = start;
  const waits: number[] = [];
  return {
    now: () => clock,
    sleep: (ms: number) => {
      waits.push(ms);
      clock += ms;
      return Promise.resolve();
    },
    waits,
  };
}

describe('createSlackPoster against LocalSlackServer', () => {
  let server: LocalSlackServer;

  beforeAll(async () => {
    server = await LocalSlackServer.start({ tokens: [TOKEN], memberChannels: ['alerts', 'C0PROJECT', 'general'] });
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(() => {
    server.reset();
  });

  const poster = (overrides: Partial<SlackPosterOptions> = {}) => {
    const time = fakeTime();
    return {
      time,
      poster: createSlackPoster({ token: TOKEN, slackApiUrl: server.apiUrl, now: time.now, sleep: time.sleep, ...overrides }),
    };
  };

  it('sends text, blocks, unfurl flags off, metadata, and no parse / link_names', async () => {
    const { poster: p } = poster();
    const metadata = { event_type: 'visibility_digest', event_payload: { event_id: 'evt_1', project_id: 'p1', score: 42, draft: false } };
    const result = await p.post('alerts', message, { metadata });

    const calls = server.calls('chat.postMessage');
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.token).toBe(TOKEN);
    expect(call.channel).toBe('alerts');
    expect(call.text).toBe(message.text);
    expect(call.blocks).toEqual(message.blocks);
    expect(call.thread_ts).toBeUndefined();
    expect(call.unfurl_links).toBe(false);
    expect(call.unfurl_media).toBe(false);
    expect(call.parse).toBeUndefined();
    expect(call.link_names).toBeUndefined();
    expect('parse' in call.args).toBe(false);
    expect('link_names' in call.args).toBe(false);
    expect(call.metadata).toEqual(metadata);

    expect(result.channel).toBe('alerts');
    expect(result.ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(server.messages()).toEqual([expect.objectContaining({ channel: 'alerts', ts: result.ts, thread_ts: undefined })]);
  });

  it('posts a reply with thread_ts and gets unique increasing ts', async () => {
    const { poster: p } = poster();
    const parent = await p.post('alerts', message);
    const reply = await p.post('alerts', { text: 'Gap details', blocks: [] }, { threadTs: parent.ts });

    expect(reply.ts).not.toBe(parent.ts);
    expect(Number(reply.ts)).toBeGreaterThan(Number(parent.ts));
    const replyCall = server.calls('chat.postMessage')[1]!;
    expect(replyCall.thread_ts).toBe(parent.ts);
    expect(server.messages().map((m) => m.thread_ts)).toEqual([undefined, parent.ts]);
    expect(server.transcript()).toContain(`  ↳ Gap details`);
  });

  it('replaces a blank text with a non-empty fallback', async () => {
    const { poster: p } = poster();
    await p.post('alerts', { text: '  ', blocks: message.blocks });
    expect(server.calls('chat.postMessage')[0]!.text).toBe('Acme — visibility digest');
  });

  it('retries a 429 after Retry-After and then succeeds with the same call', async () => {
    server.injectFault({ method: 'chat.postMessage', kind: 'ratelimited', retryAfterSeconds: 2, times: 1 });
    const { poster: p, time } = poster({ deadline: () => time.now() + 60_000 });
    const result = await p.post('alerts', message, { threadTs: '1700000000.000100' });

    const calls = server.calls('chat.postMessage');
    expect(calls.map((c) => c.status)).toEqual([429, 200]);
    expect(calls[1]!.args).toEqual(calls[0]!.args);
    expect(time.waits).toEqual([2000]);
    expect(server.messages()).toEqual([expect.objectContaining({ ts: result.ts })]);
  });

  // A 500, an internal_error or a timeout may come after Slack stored the message: posting again
  // blindly could duplicate it, so the poster hands the decision back (outcomeUnknown) after one call.
  it('does not repeat a post answered with HTTP 500: outcome unknown', async () => {
    server.injectFault({ method: 'chat.postMessage', kind: 'server_error', times: 1 });
    const { poster: p, time } = poster({ maxAttempts: 3 });
    const err = await rejection(p.post('alerts', message));

    expect(err).toBeInstanceOf(SlackUnavailableError);
    const e = err as SlackUnavailableError;
    expect(e.reason).toBe('server_error');
    expect(e.code).toBe('http_500');
    expect(e.outcomeUnknown).toBe(true);
    expect(e.attempts).toBe(1);
    expect(server.calls('chat.postMessage')).toHaveLength(1);
    expect(time.waits).toHaveLength(0);
  });

  it('does not repeat a post answered with internal_error: outcome unknown', async () => {
    server.injectFault({ method: 'chat.postMessage', kind: 'slack_error', error: 'internal_error', times: 1 });
    const { poster: p } = poster();
    const err = await rejection(p.post('alerts', message));
    expect((err as SlackUnavailableError).outcomeUnknown).toBe(true);
    expect(server.calls('chat.postMessage').map((c) => c.ok)).toEqual([false]);
  });

  it('finds a message an earlier attempt posted, and counts its replies, by the event id in the metadata', async () => {
    const { poster: p } = poster();
    const metadata = { event_type: 'visibility_digest', event_payload: { event_id: 'evt-lookup' } };
    const since = Math.floor(Date.now() / 1000) - 60;
    expect(await p.findPosted('alerts', 'evt-lookup', since)).toBeUndefined();
    const posted = await p.post('alerts', message, { metadata });
    await p.post('alerts', message, {
      threadTs: posted.ts,
      metadata: { event_type: 'visibility_digest_reply', event_payload: { event_id: 'evt-lookup', reply: 1 } },
    });
    await p.post('alerts', message, {
      threadTs: posted.ts,
      metadata: { event_type: 'visibility_digest_reply', event_payload: { event_id: 'other', reply: 1 } },
    });
    expect(await p.findPosted('alerts', 'evt-lookup', since)).toBe(posted.ts);
    expect(await p.countReplies('alerts', posted.ts, 'evt-lookup')).toBe(1);
  });

  it('throws SlackUnavailableError with retryAfterSeconds when Retry-After does not fit the deadline', async () => {
    server.injectFault({ method: 'chat.postMessage', kind: 'ratelimited', retryAfterSeconds: 30 });
    const { poster: p, time } = poster({ deadline: () => time.now() + 5_000 });
    const err = await rejection(p.post('alerts', message));

    expect(err).toBeInstanceOf(SlackUnavailableError);
    const e = err as SlackUnavailableError;
    expect(e.name).toBe('SlackUnavailableError');
    expect(e.reason).toBe('ratelimited');
    expect(e.retryAfterSeconds).toBe(30);
    expect(e.attempts).toBe(1);
    expect(time.waits).toEqual([]);
    expect(server.calls('chat.postMessage')).toHaveLength(1);
  });

  it('does not call Slack when the deadline has already passed', async () => {
    const { poster: p, time } = poster({ deadline: () => time.now() - 1 });
    const err = await rejection(p.post('alerts', message));
    expect(err).toBeInstanceOf(SlackUnavailableError);
    expect((err as SlackUnavailableError).reason).toBe('deadline');
    expect(server.calls()).toHaveLength(0);
  });

  it.each([
    ['channel_not_found', 'SLACK_DEFAULT_CHANNEL / SLACK_PROJECT_CHANNELS'],
    ['not_in_channel', '/invite @<bot> in alerts'],
    ['invalid_auth', 'xoxb-'],
    ['is_archived', 'archived'],
    ['missing_scope', 'chat:write'],
    ['account_inactive', 'reinstall'],
    ['token_revoked', 'reinstall'],
    ['invalid_blocks', 'bridge bug'],
    ['msg_too_long', 'bridge bug'],
    ['some_new_error', 'https://api.slack.com/methods/chat.postMessage#errors'],
  ])('%s is permanent: SlackPermanentError with a fix, one call only', async (code, fixPart) => {
    server.injectFault({ method: 'chat.postMessage', kind: 'slack_error', error: code });
    const { poster: p, time } = poster({ deadline: () => time.now() + 60_000 });
    const err = await rejection(p.post('alerts', message));

    expect(err).toBeInstanceOf(SlackPermanentError);
    const e = err as SlackPermanentError;
    expect(e.name).toBe('SlackPermanentError');
    expect(e.code).toBe(code);
    expect(e.fix).toContain(fixPart);
    expect(e.message).toContain(code);
    expect(e.channel).toBe('alerts');
    expect(server.calls('chat.postMessage')).toHaveLength(1);
    expect(time.waits).toEqual([]);
  });

  it('not_in_channel from a channel the bot is not a member of', async () => {
    const { poster: p } = poster();
    const err = await rejection(p.post('random', message));
    expect(err).toBeInstanceOf(SlackPermanentError);
    expect((err as SlackPermanentError).code).toBe('not_in_channel');
    expect((err as SlackPermanentError).fix).toContain('/invite @<bot> in random');
  });

  it('carries Slack block errors in details', async () => {
    const { poster: p } = poster();
    const err = await rejection(p.post('alerts', { text: 'x', blocks: [{ type: 'header', text: { type: 'plain_text', text: '' } }] }));
    expect(err).toBeInstanceOf(SlackPermanentError);
    const e = err as SlackPermanentError;
    expect(e.code).toBe('invalid_blocks');
    expect(e.details.join('\n')).toContain('/blocks/0/text/text');
  });

  it('a wrong token is invalid_auth, and the token is in no error', async () => {
    const wrong = 'xoxb-wrong-token-5678';
    const { poster: p } = poster({ token: wrong });
    const err = await rejection(p.post('alerts', message));

    expect(err).toBeInstanceOf(SlackPermanentError);
    const e = err as SlackPermanentError;
    expect(e.code).toBe('invalid_auth');
    expect(e.fix).toContain('xoxb-');
    expect(server.calls('chat.postMessage')).toHaveLength(1);
    const everything = `${e.message} ${e.fix} ${e.stack ?? ''} ${JSON.stringify(e)}`;
    expect(everything).not.toContain(wrong);
    expect(everything).not.toContain(TOKEN);
  });

  it('network errors are retried and end in SlackUnavailableError', async () => {
    const gone = await LocalSlackServer.start();
    const url = gone.apiUrl;
    await gone.close();
    const { poster: p, time } = poster({ slackApiUrl: url, maxAttempts: 2 });
    const err = await rejection(p.post('alerts', message));

    expect(err).toBeInstanceOf(SlackUnavailableError);
    const e = err as SlackUnavailableError;
    expect(e.reason).toBe('network');
    expect(e.attempts).toBe(2);
    expect(time.waits).toHaveLength(1);
    expect(e.message).not.toContain(TOKEN);
  });

  it('a request slower than requestTimeoutMs is cut off and reported as a timeout', async () => {
    server.injectFault({ method: 'chat.postMessage', kind: 'delay', latencyMs: 400, times: 1 });
    const { poster: p } = poster({ requestTimeoutMs: 50, maxAttempts: 1 });
    const err = await rejection(p.post('alerts', message));

    expect(err).toBeInstanceOf(SlackUnavailableError);
    expect((err as SlackUnavailableError).reason).toBe('timeout');
    // Like real Slack, the server still finishes the slow call (the post may land despite the timeout).
    await vi.waitFor(() => expect(server.calls('chat.postMessage')[0]!.status).toBe(200), { timeout: 30_000 });
  });

  it('checkSlackAuth answers team, user and bot id; a bad token gives invalid_auth with a fix', async () => {
    const good = await checkSlackAuth(TOKEN, server.apiUrl);
    expect(good).toEqual(
      expect.objectContaining({
        ok: true,
        team: server.team,
        teamId: server.teamId,
        user: server.botName,
        userId: server.botUserId,
        botId: server.botId,
      }),
    );

    const bad = await checkSlackAuth('xoxb-nope-nope', server.apiUrl);
    expect(bad).toEqual({ ok: false, error: 'invalid_auth', fix: expect.stringContaining('xoxb-') as unknown });
  });

  it('isBotInChannel tells member from non-member, and reports errors', async () => {
    expect(await isBotInChannel(TOKEN, 'C0PROJECT', server.apiUrl)).toEqual({
      ok: true,
      isMember: true,
      channelId: 'C0PROJECT',
      name: 'C0PROJECT',
    });
    expect(await isBotInChannel(TOKEN, 'C0OTHER', server.apiUrl)).toEqual(expect.objectContaining({ ok: true, isMember: false }));

    server.injectFault({ method: 'conversations.info', kind: 'slack_error', error: 'missing_scope', times: 1 });
    const scoped = await isBotInChannel(TOKEN, 'C0PROJECT', server.apiUrl);
    expect(scoped).toEqual({ ok: false, error: 'missing_scope', fix: expect.stringContaining('channels:read') as unknown });

    server.injectFault({ method: 'conversations.info', kind: 'slack_error', error: 'channel_not_found', times: 1 });
    const missing = await isBotInChannel(TOKEN, 'C0GONE', server.apiUrl);
    expect(missing).toEqual(expect.objectContaining({ ok: false, error: 'channel_not_found' }));
  });
});

describe('LocalSlackServer', () => {
  let server: LocalSlackServer;
  let dir: string;
  const printed: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'slack-server-'));
    server = await LocalSlackServer.start({
      tokens: [TOKEN],
      memberChannels: 'all',
      logFile: join(dir, 'slack.jsonl'),
      onMessage: (rendered) => printed.push(rendered),
    });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the real WebClient: unknown methods, update, delete, log file and onMessage', async () => {
    const client = new WebClient(TOKEN, { slackApiUrl: server.apiUrl, retryConfig: { retries: 0 } });

    const unknown = await rejection(client.apiCall('reactions.add', { channel: 'general' }));
    expect((unknown as { data?: { error?: string } }).data?.error).toBe('unknown_method');

    const posted = await client.chat.postMessage({ channel: '#general', text: 'hello <https://example.test|there>' });
    expect(posted.channel).toBe('general');
    expect(posted.message?.text).toBe('hello <https://example.test|there>');
    expect(printed).toEqual([`#general  ${posted.ts}\nhello there (https://example.test)`]);

    await client.chat.update({ channel: 'general', ts: posted.ts!, text: 'edited' });
    expect(server.messages()[0]).toEqual(expect.objectContaining({ text: 'edited', edited: true }));
    await client.chat.delete({ channel: 'general', ts: posted.ts! });
    expect(server.messages()).toEqual([]);

    const lines = readFileSync(join(dir, 'slack.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.method)).toEqual(['reactions.add', 'chat.postMessage', 'chat.update', 'chat.delete']);
    expect(lines[1]).toEqual(expect.objectContaining({ channel: '#general', text: 'hello <https://example.test|there>', ok: true }));
    expect(readFileSync(join(dir, 'slack.jsonl'), 'utf8')).not.toContain(TOKEN);
  });

  it('faults match on channel and are used up after `times`', async () => {
    server.reset();
    const client = new WebClient(TOKEN, { slackApiUrl: server.apiUrl, retryConfig: { retries: 0 } });
    server.injectFault({ channel: 'broken', kind: 'slack_error', error: 'is_archived', times: 1 });

    await client.chat.postMessage({ channel: 'fine', text: 'a' });
    const failed = await rejection(client.chat.postMessage({ channel: 'broken', text: 'b' }));
    expect((failed as { data?: { error?: string } }).data?.error).toBe('is_archived');
    await client.chat.postMessage({ channel: 'broken', text: 'c' });
    expect(server.calls('chat.postMessage').map((c) => c.ok)).toEqual([true, false, true]);
  });

  it("enforces Slack's per-channel pace when asked: a post past the burst answers 429 with Retry-After, per channel", async () => {
    const paced = await LocalSlackServer.start({ tokens: [TOKEN], channelPace: { intervalMs: 60_000, burst: 2 } });
    try {
      const post = (channel: string) =>
        fetch(`${paced.apiUrl}chat.postMessage`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ channel, text: 'x' }),
        });
      expect((await post('busy')).status).toBe(200);
      expect((await post('busy')).status).toBe(200);
      const third = await post('busy');
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toBe('60');
      expect(await third.json()).toEqual({ ok: false, error: 'ratelimited' });
      expect((await post('quiet')).status).toBe(200);
      expect(paced.messages('busy')).toHaveLength(2);
    } finally {
      await paced.close();
    }
  });
});
