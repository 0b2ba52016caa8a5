/**
 * The Slack app through the whole local stack, as a channel uses it. The local Slack server plays
 * Slack: it delivers slash commands and button clicks to the bridge signed with the app's signing
 * secret, hands out response_urls, and applies the answers (ephemeral, in channel, replacing the
 * clicked message). Subscribe by project name (a deferred command), a run's digest arrives in that
 * channel, mute (by command or by the digest's button), and the next run posts nothing there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack';
import type { PostedMessage } from '../../local/slack/server';
import { HTTP_PATHS } from '../../shared/contracts';
import { ACTION_IDS } from '../../shared/buttons/ids';
import { eventIdOf, simulatorOf, slackOf, startTestStack } from './helpers';

const CHANNEL = 'C0E2EAPP';
let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

/** A `/visibility` command typed in `channel`, delivered by the local Slack; settles once its deferred work is done. */
async function command(text: string, channel = CHANNEL): Promise<number> {
  const answer = await slackOf(stack).sendCommand({ channel, line: `/visibility ${text}` });
  await stack.waitForIdle();
  return answer.status;
}

/** Every reply the user saw in `channel` (ephemeral ones and in-channel ones), as one text. */
function repliesIn(channel: string): string {
  const slack = slackOf(stack);
  return [...slack.ephemerals(channel), ...slack.messages(channel).filter((m) => eventIdOf(m) === undefined)]
    .map((m) => m.text ?? '')
    .join('\n');
}

function projectNamed(index: number): { id: string; name: string } {
  const id = stack.projectIds[index]!;
  return simulatorOf(stack)
    .data.projects()
    .find((p) => p.id === id)!;
}

async function runPosts(
  projectId: string,
  channel = CHANNEL,
): Promise<{ inChannel: number; elsewhere: number; digest: PostedMessage | undefined }> {
  const sent = simulatorOf(stack).triggerRun(projectId);
  await sent.delivered;
  await stack.waitForIdle();
  const posts = slackOf(stack)
    .messages()
    .filter((m) => m.thread_ts === undefined && eventIdOf(m) === sent.event.id);
  const here = posts.filter((m) => m.channel === channel);
  return { inChannel: here.length, elsewhere: posts.length - here.length, digest: here[0] };
}

describe('the Slack app on the local stack', () => {
  it('subscribes a channel by project name, digests there, and stays silent there once muted', async () => {
    const project = projectNamed(0);

    expect(await command(`subscribe ${project.name}`)).toBe(200);
    expect(repliesIn(CHANNEL)).toContain(project.name);

    // A subscribed project goes to its subscribers, and still to its home (default) channel: no other channel can take it away.
    expect(await runPosts(project.id)).toMatchObject({ inChannel: 1, elsewhere: 1 });

    expect(await command(`mute ${project.name} 1d`)).toBe(200);
    expect((await runPosts(project.id)).inChannel).toBe(0);
    expect(stack.observability.countOf('digest:DigestMutedSkip')).toBeGreaterThanOrEqual(1);
  });

  it("mutes from the digest's button: the digest says who muted it, and the next run is silent there", async () => {
    const channel = 'C0E2EBUTTON';
    const project = projectNamed(1);
    expect(await command(`subscribe ${project.id}`, channel)).toBe(200);
    const { digest } = await runPosts(project.id, channel);
    if (!digest) throw new Error('the subscribed channel got no digest');

    const click = await slackOf(stack).clickButton({ channel, ts: digest.ts, actionId: ACTION_IDS.mute7d });
    expect(click.status).toBe(200);
    await stack.waitForIdle();

    const updated = slackOf(stack)
      .messages(channel)
      .find((m) => m.ts === digest.ts)!;
    expect(updated.edited).toBe(true);
    expect(updated.text).toMatch(/muted/i);
    expect(updated.text).toContain('<@U0LOCAL>');
    expect((await runPosts(project.id, channel)).inChannel).toBe(0);
  });

  it('answers `help` ephemerally, only to the user who typed it', async () => {
    const channel = 'C0E2EHELP';
    expect(await command('help', channel)).toBe(200);
    const [reply, ...more] = slackOf(stack).ephemerals(channel);
    expect(more).toEqual([]);
    expect(reply).toMatchObject({ userId: 'U0LOCAL' });
    expect(reply?.text).toContain('/visibility subscribe');
    expect(slackOf(stack).messages(channel)).toEqual([]);
  });

  it('takes commands and clicks from the preview page, as the user', async () => {
    const channel = 'C0E2EPREVIEW';
    const post = (path: string, body: unknown) =>
      fetch(`${stack.gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const typed = await post('/slack/preview/command', { channel, line: '/visibility help' });
    expect(typed.status).toBe(200);
    expect(await typed.json()).toEqual({ status: 200 });
    const page = await (await fetch(`${stack.gateway.url}/slack/timeline`)).text();
    expect(page).toContain('Only visible to you');

    expect((await post('/slack/preview/command', { channel })).status).toBe(400);
    expect((await post('/slack/preview/click', { channel, ts: '1.000001', actionId: ACTION_IDS.mute7d })).status).toBe(502);
    const form = await fetch(`${stack.gateway.url}/slack/preview/command`, { method: 'POST', body: 'channel=x&line=help' });
    expect(form.status).toBe(415);
  });

  it('refuses a forged command with 401 and does nothing', async () => {
    const response = await fetch(stack.webhookUrl.replace(HTTP_PATHS.webhook, HTTP_PATHS.slackCommands), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-signature': 'v0=00',
        'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)),
      },
      body: 'command=%2Fvisibility&text=list&channel_id=C0E2EAPP',
    });
    expect(response.status).toBe(401);
  });
});
