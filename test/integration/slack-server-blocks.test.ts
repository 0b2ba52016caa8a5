/**
 * The local Slack server and the chart (`data_visualization`) and `data_table` blocks, through the real
 * Web API client: blocks past Slack's limits answer `invalid_blocks` as Slack does (HTTP 200, the problems
 * in `errors`), and the refuse switch (a server option, or a fault over `/_faults`) answers it for every
 * such block, as a workspace the rollout has not reached.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebClient, type WebAPIPlatformError } from '@slack/web-api';
import { LocalSlackServer, type LocalSlackServerOptions } from '../../local/slack/server';

let server: LocalSlackServer | undefined;

async function start(options: LocalSlackServerOptions = {}): Promise<{ server: LocalSlackServer; slack: WebClient }> {
  server = await LocalSlackServer.start(options);
  return { server, slack: new WebClient('xoxb-test', { slackApiUrl: server.apiUrl, retryConfig: { retries: 0 } }) };
}

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const categories = ['Nov 1', 'Nov 8', 'Nov 15'];

function chart(seriesCount = 2) {
  const series = Array.from({ length: seriesCount }, (_, i) => ({
    name: `Engine ${i}`,
    data: categories.map((label, j) => ({ label, value: 40 + i + j })),
  }));
  return {
    type: 'data_visualization',
    title: 'Visibility by engine (%)',
    chart: { type: 'line', series, axis_config: { categories, y_label: '%' } },
  };
}

function table(rows = 3) {
  const cell = (text: string) => ({ type: 'raw_text', text });
  return {
    type: 'data_table',
    caption: 'AI engines',
    page_size: 2,
    rows: [[cell('Engine'), cell('Visibility')], ...Array.from({ length: rows }, (_, i) => [cell(`E${i}`), cell(`${40 + i} %`)])],
  };
}

const headline = { type: 'section', text: { type: 'mrkdwn', text: '*Northwind* — visibility 43.5 %' } };

/** The Slack error a call failed with (`ok: false` at HTTP 200), and the body Slack sent with it. */
async function refusal(call: Promise<unknown>): Promise<{ error: string; errors: string[]; messages: string[] }> {
  const failure = await call.then(
    () => {
      throw new Error('the call succeeded');
    },
    (error: unknown) => error as WebAPIPlatformError,
  );
  const data = failure.data as unknown as { error: string; errors?: string[]; response_metadata?: { messages?: string[] } };
  return { error: data.error, errors: data.errors ?? [], messages: data.response_metadata?.messages ?? [] };
}

describe('chart and table blocks on the local Slack server', () => {
  it('posts, updates and posts ephemerally a chart and a table within the limits', async () => {
    const { server, slack } = await start();
    const posted = await slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [headline, chart(), table()] });
    expect(posted.ok).toBe(true);
    await slack.chat.update({ channel: '#digests', ts: posted.ts!, text: 'fallback', blocks: [headline, chart(6), table(100)] });
    const ephemeral = await slack.chat.postEphemeral({ channel: '#digests', user: 'U0LOCAL', text: 'only you', blocks: [chart()] });
    expect(ephemeral.ok).toBe(true);
    expect(server.messages('#digests')[0]?.blocks).toEqual([headline, chart(6), table(100)]);
    expect(server.ephemerals('#digests').map((m) => m.userId)).toEqual(['U0LOCAL']);
  });

  it('answers invalid_blocks, as Slack does, to a chart or table past a limit, and keeps nothing of it', async () => {
    const { server, slack } = await start();
    const tooMany = await refusal(slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [headline, chart(7)] }));
    expect(tooMany.error).toBe('invalid_blocks');
    expect(tooMany.errors).toEqual(['blocks[1].chart has 7 series (1–6)']);
    expect(tooMany.messages).toEqual(['[ERROR] blocks[1].chart has 7 series (1–6)']);
    expect(server.messages()).toEqual([]);

    const posted = await slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [headline, table()] });
    const longTable = await refusal(slack.chat.update({ channel: '#digests', ts: posted.ts!, text: 'x', blocks: [table(101)] }));
    expect(longTable.errors).toEqual(['blocks[0] has 102 rows (2–101, the header included)']);
    expect(server.messages()[0]).toMatchObject({ blocks: [headline, table()], edited: false });

    const threeCharts = await refusal(
      slack.chat.postEphemeral({ channel: '#digests', user: 'U0LOCAL', text: 'x', blocks: [chart(), chart(), chart()] }),
    );
    expect(threeCharts.errors).toEqual(['3 data_visualization blocks (at most 2 per message)']);
    expect(server.ephemerals()).toEqual([]);
    expect(server.calls().map((c) => [c.method, c.status, c.error])).toEqual([
      ['chat.postMessage', 200, 'invalid_blocks'],
      ['chat.postMessage', 200, undefined],
      ['chat.update', 200, 'invalid_blocks'],
      ['chat.postEphemeral', 200, 'invalid_blocks'],
    ]);
  });

  it('refuses every chart and table block with refuseNativeBlocks, through a reset, and takes messages without them', async () => {
    const { server, slack } = await start({ refuseNativeBlocks: true });
    const refused = await refusal(slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [headline, chart(), table()] }));
    expect(refused.error).toBe('invalid_blocks');
    expect(refused.errors).toEqual([
      'unsupported block type data_visualization at blocks[1]',
      'unsupported block type data_table at blocks[2]',
    ]);
    const view = { type: 'home', blocks: [headline, table()] };
    expect((await refusal(slack.apiCall('views.publish', { user_id: 'U0LOCAL', view }))).errors).toEqual([
      'unsupported block type data_table at blocks[1]',
    ]);

    server.reset();
    await expect(slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [headline] })).resolves.toMatchObject({
      ok: true,
    });
    expect((await refusal(slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [chart()] }))).error).toBe(
      'invalid_blocks',
    );
    expect(server.messages().map((m) => m.blocks)).toEqual([[headline]]);
  });

  it('refuses them from outside the process (POST /_faults) for as many calls as asked, counting only calls that carry them', async () => {
    const { server, slack } = await start();
    const control = `${new URL(server.apiUrl).origin}/_faults`;
    const answer = await fetch(control, { method: 'POST', body: JSON.stringify({ kind: 'refuse_native_blocks', times: 1 }) });
    expect(answer.status).toBe(200);

    await slack.chat.postMessage({ channel: '#digests', text: 'no chart here' });
    expect((await refusal(slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [chart()] }))).error).toBe(
      'invalid_blocks',
    );
    await expect(slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [chart()] })).resolves.toMatchObject({ ok: true });

    await fetch(control, { method: 'POST', body: JSON.stringify({ kind: 'refuse_native_blocks' }) });
    expect((await refusal(slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [table()] }))).error).toBe(
      'invalid_blocks',
    );
    await fetch(control, { method: 'DELETE' });
    await expect(slack.chat.postMessage({ channel: '#digests', text: 'fallback', blocks: [table()] })).resolves.toMatchObject({ ok: true });
    expect(server.messages().map((m) => m.text)).toEqual(['no chart here', 'fallback', 'fallback']);
  });
});
