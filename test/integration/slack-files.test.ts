import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalSlackServer } from '../../local/slack/server';
import { SlackPermanentError, SlackUnavailableError } from '../../shared/adapters/slack-errors';
import { createSlackFileUploader, isAllowedUploadUrl } from '../../shared/adapters/slack-files';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import { UnexpectedResponse } from '../../shared/errors';
import { rejection } from '../support/rejection';

const TOKEN = 'xoxb-local-files-test-token';
const CHANNEL = 'C0CHARTS';
/** A PNG signature and a few bytes: the adapter moves bytes, it does not read them. */
const BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5]);

describe('createSlackFileUploader against LocalSlackServer', () => {
  let server: LocalSlackServer;

  beforeAll(async () => {
    server = await LocalSlackServer.start({ tokens: [TOKEN], memberChannels: [CHANNEL] });
  });
  afterEach(() => server.reset());
  afterAll(async () => {
    await server.close();
  });

  async function digestThread(): Promise<string> {
    const poster = createSlackPoster({ token: TOKEN, slackApiUrl: server.apiUrl });
    return (await poster.post(CHANNEL, { text: 'Northwind digest', blocks: [] })).ts;
  }

  it('puts the file in the digest thread, with its alt text and a URL that serves the bytes', async () => {
    const threadTs = await digestThread();
    const uploader = createSlackFileUploader({ token: TOKEN, slackApiUrl: server.apiUrl });

    const { fileId } = await uploader.upload({
      channel: CHANNEL,
      threadTs,
      filename: 'northwind-trend.png',
      title: 'Northwind — visibility, last 8 weeks',
      bytes: BYTES,
      altText: 'Visibility by engine for Northwind: ChatGPT 52 → 61 (+9).',
      initialComment: 'Trend, last 8 weeks',
    });

    const reply = server.messages(CHANNEL).find((m) => m.thread_ts === threadTs);
    expect(reply?.text).toBe('Trend, last 8 weeks');
    expect(reply?.files).toEqual([
      {
        id: fileId,
        name: 'northwind-trend.png',
        title: 'Northwind — visibility, last 8 weeks',
        mimetype: 'image/png',
        size: BYTES.length,
        alt_txt: 'Visibility by engine for Northwind: ChatGPT 52 → 61 (+9).',
        url_private: expect.stringContaining(`/_files/${fileId}/`) as unknown,
      },
    ]);
    const served = await fetch(reply!.files![0]!.url_private);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(BYTES);
    // The upload URL carries its own authorisation: the bot token is not sent there.
    expect(server.fileUpload(fileId)?.withToken).toBe(false);
    // Slack's argument is alt_txt (WebClient's filesUploadV2 sends alt_text, which Slack ignores).
    expect(server.calls('files.getUploadURLExternal')[0]?.args).toMatchObject({ filename: 'northwind-trend.png', length: '13' });
    expect(server.calls('files.getUploadURLExternal')[0]?.args['alt_txt']).toContain('ChatGPT 52');
    // The thread shows it in conversations.replies, as the preview and a retried digest see it.
    const replies = await fetch(`${server.apiUrl}conversations.replies?channel=${CHANNEL}&ts=${threadTs}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const body = (await replies.json()) as { messages: { files?: { id: string }[] }[] };
    expect(body.messages.at(-1)?.files?.[0]?.id).toBe(fileId);
  });

  it('a channel the bot is not in is an operator fix, and nothing is posted', async () => {
    const uploader = createSlackFileUploader({ token: TOKEN, slackApiUrl: server.apiUrl });
    const error = await rejection(uploader.upload({ channel: 'C0ELSEWHERE', filename: 'c.png', bytes: BYTES }));
    expect(error).toBeInstanceOf(SlackPermanentError);
    expect((error as SlackPermanentError).code).toBe('not_in_channel');
    expect((error as SlackPermanentError).method).toBe('files.completeUploadExternal');
    expect((error as SlackPermanentError).fix).toContain('/invite');
    expect(server.messages()).toEqual([]);
  });

  it('a missing files:write scope says to add it', async () => {
    server.injectFault({ method: 'files.getUploadURLExternal', kind: 'slack_error', error: 'missing_scope', times: 1 });
    const uploader = createSlackFileUploader({ token: TOKEN, slackApiUrl: server.apiUrl });
    const error = await rejection(uploader.upload({ channel: CHANNEL, filename: 'c.png', bytes: BYTES }));
    expect(error).toBeInstanceOf(SlackPermanentError);
    expect((error as SlackPermanentError).fix).toContain('files:write');
  });

  it('a failure while sharing is Unavailable with the outcome unknown (the file may be in the thread)', async () => {
    server.injectFault({ method: 'files.completeUploadExternal', kind: 'server_error', times: 1 });
    const uploader = createSlackFileUploader({ token: TOKEN, slackApiUrl: server.apiUrl });
    const error = await rejection(uploader.upload({ channel: CHANNEL, filename: 'c.png', bytes: BYTES }));
    expect(error).toBeInstanceOf(SlackUnavailableError);
    expect((error as SlackUnavailableError).outcomeUnknown).toBe(true);

    server.injectFault({ method: 'files.getUploadURLExternal', kind: 'ratelimited', retryAfterSeconds: 3, times: 1 });
    const limited = await rejection(uploader.upload({ channel: CHANNEL, filename: 'c.png', bytes: BYTES }));
    expect(limited).toBeInstanceOf(SlackUnavailableError);
    expect((limited as SlackUnavailableError).retryAfterSeconds).toBe(3);
    expect((limited as SlackUnavailableError).outcomeUnknown).toBe(false);
  });

  it('a bad token fails without quoting it', async () => {
    const uploader = createSlackFileUploader({ token: 'xoxb-not-a-valid-token-at-all', slackApiUrl: server.apiUrl });
    const error = await rejection(uploader.upload({ channel: CHANNEL, filename: 'c.png', bytes: BYTES }));
    expect(error).toBeInstanceOf(SlackPermanentError);
    expect((error as SlackPermanentError).code).toBe('invalid_auth');
    expect(String((error as Error).message)).not.toContain('xoxb-not-a-valid');
  });

  it('an upload URL outside Slack is refused before any byte is sent', async () => {
    const elsewhere = await LocalSlackServer.start({ tokens: [TOKEN] });
    try {
      // The API answers from one server, the upload URL points at another origin.
      const uploader = createSlackFileUploader({ token: TOKEN, slackApiUrl: elsewhere.apiUrl.replace('127.0.0.1', 'localhost') });
      const error = await rejection(uploader.upload({ channel: CHANNEL, filename: 'c.png', bytes: BYTES }));
      expect(error).toBeInstanceOf(UnexpectedResponse);
      expect((error as Error).message).toContain('outside Slack');
    } finally {
      await elsewhere.close();
    }
  });
});

describe('isAllowedUploadUrl', () => {
  it("takes Slack's https file hosts and the local server only", () => {
    expect(isAllowedUploadUrl('https://files.slack.com/upload/v1/abc', [])).toBe(true);
    expect(isAllowedUploadUrl('http://files.slack.com/upload/v1/abc', [])).toBe(false);
    expect(isAllowedUploadUrl('https://files.slack.com.evil.test/upload', [])).toBe(false);
    expect(isAllowedUploadUrl('https://files.slack.com:8443/upload', [])).toBe(false);
    expect(isAllowedUploadUrl('http://127.0.0.1:9/_upload/F1', ['http://127.0.0.1:9'])).toBe(true);
    expect(isAllowedUploadUrl('not a url', [])).toBe(false);
  });
});
