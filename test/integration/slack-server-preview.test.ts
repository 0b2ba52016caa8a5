/**
 * The preview over HTTP: the gateway serves it next to the webhook, with a strict content policy,
 * and the event stream tells the page about every post, edit and delete of the local Slack server.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { HttpGateway } from '../../local/http-gateway';
import { LocalSlackServer } from '../../local/slack/server';

let slackServer: LocalSlackServer;
let gateway: HttpGateway;
let slack: WebClient;

beforeEach(async () => {
  slackServer = await LocalSlackServer.start();
  gateway = await HttpGateway.start({ createHandler: () => () => Promise.resolve({ statusCode: 200, body: 'ok' }), preview: slackServer });
  slack = new WebClient('xoxb-test', { slackApiUrl: slackServer.apiUrl });
});

afterEach(async () => {
  await gateway.close();
  await slackServer.close();
});

/** Reads server-sent events from `/slack/events` until `count` `change` events have arrived. */
async function changeEvents(response: Response, count: number): Promise<string[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const events: string[] = [];
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const frames = buffer.split('\n\n');
    buffer = frames.pop() ?? '';
    for (const frame of frames) if (frame.startsWith('event: change')) events.push(frame);
  }
  await reader.cancel();
  return events;
}

describe('the Slack preview on the gateway', () => {
  it('serves the page with the posted messages and a content policy that allows no inline script', async () => {
    await slack.chat.postMessage({ channel: '#digests', text: 'hello *there*' });
    const response = await fetch(`${gateway.url}/slack`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await response.text();
    expect(html).toContain('hello <b>there</b>');
    expect(html).toContain('<span class="channel">#digests</span>');
    expect(gateway.previewUrl).toBe(`${gateway.url}/slack`);
  });

  it('still answers 404 for other paths and never serves the preview on POST', async () => {
    expect((await fetch(`${gateway.url}/slack/nope`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/slack`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('streams a change event for a post, an edit and a delete', async () => {
    const events = await fetch(`${gateway.url}/slack/events`);
    expect(events.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const received = changeEvents(events, 3);
    const posted = await slack.chat.postMessage({ channel: '#digests', text: 'one' });
    await slack.chat.update({ channel: '#digests', ts: posted.ts!, text: 'two' });
    await slack.chat.delete({ channel: '#digests', ts: posted.ts! });
    expect(await received).toEqual(['event: change\ndata: 1', 'event: change\ndata: 2', 'event: change\ndata: 3']);
  });

  it('closes promptly with an event stream open', async () => {
    const events = await fetch(`${gateway.url}/slack/events`);
    const ended = events.text();
    await gateway.close(60_000);
    await expect(ended).resolves.toBe('retry: 1000\n\n');
  });
});
