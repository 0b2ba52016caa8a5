/**
 * The local Slack server plays Slack for "Share in channel": a button on an ephemeral answer can be
 * clicked (by the user who sees it), and the answers to its response_url post in the channel and
 * delete the ephemeral message, as Slack applies them. The app here is a stand-in that answers as
 * the bridge does (the bridge's own flow is in slack-app-service.test.ts and the e2e tests).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSlackServer } from '../../local/slack/server';

let slack: LocalSlackServer;
let app: Server;

const SHARE_ANSWER = {
  response_type: 'ephemeral',
  text: 'your figures',
  blocks: [
    { type: 'section', text: { type: 'mrkdwn', text: 'your figures' } },
    {
      type: 'actions',
      block_id: 'share',
      elements: [{ type: 'button', action_id: 'share_in_channel', value: 'v', text: { type: 'plain_text', text: 'Share in channel' } }],
    },
  ],
};

async function post(url: string, body: unknown): Promise<void> {
  await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

beforeAll(async () => {
  slack = await LocalSlackServer.start();
  app = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/commands') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SHARE_ANSWER));
        return;
      }
      const payload = JSON.parse(new URLSearchParams(raw).get('payload') ?? '{}') as { response_url: string };
      res.writeHead(200).end();
      void post(payload.response_url, { response_type: 'in_channel', text: 'shared figures' }).then(() =>
        post(payload.response_url, { delete_original: true }),
      );
    });
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  slack.connectApp({ commandsUrl: `${base}/commands`, interactionsUrl: `${base}/interactions`, signingSecret: 'secret' });
});

afterAll(async () => {
  await new Promise<void>((resolve) => app.close(() => resolve()));
  await slack.close();
});

describe('Share in channel on the local Slack server', () => {
  it('clicks a button on an ephemeral answer; the answers post in the channel and delete the ephemeral one', async () => {
    await slack.sendCommand({ channel: 'C0SHARE', line: '/visibility status x' });
    const [ephemeral] = slack.ephemerals('C0SHARE');
    expect(ephemeral?.text).toBe('your figures');
    await expect(
      slack.clickButton({ channel: 'C0SHARE', ts: ephemeral!.ts, actionId: 'share_in_channel', user: { id: 'U0OTHER', name: 'eve' } }),
    ).rejects.toThrow(/visible only to U0LOCAL/);
    expect((await slack.clickButton({ channel: 'C0SHARE', ts: ephemeral!.ts, actionId: 'share_in_channel' })).status).toBe(200);
    await expect.poll(() => slack.ephemerals('C0SHARE')).toEqual([]);
    expect(slack.messages('C0SHARE').map((m) => m.text)).toEqual(['shared figures']);
  });
});
