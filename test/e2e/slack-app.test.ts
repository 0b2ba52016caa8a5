/**
 * The Slack app through the whole local stack, as a channel uses it: subscribe by project name (a
 * deferred command, answered via response_url), a run's digest arrives in that channel, mute, and
 * the next run posts nothing there.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack';
import { HTTP_PATHS } from '../../shared/contracts';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { eventIdOf, simulatorOf, slackOf, startTestStack } from './helpers';

const CHANNEL = 'C0E2EAPP';
let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

/** A `/visibility` command signed as Slack signs it, posted to the local API; the JSON answer. */
async function command(text: string): Promise<{ status: number; body: { text?: string } }> {
  const form = new URLSearchParams({
    command: '/visibility',
    text,
    channel_id: CHANNEL,
    user_id: 'U0E2E',
    user_name: 'e2e',
    response_url: `${new URL(slackOf(stack).apiUrl).origin}/response_url/${randomUUID()}`,
    trigger_id: randomUUID(),
    team_id: 'T0E2E',
  }).toString();
  const headers = {
    'content-type': 'application/x-www-form-urlencoded',
    ...signSlackRequest(stack.slackSigningSecret, Date.now() / 1000, form),
  };
  const response = await fetch(`${stack.webhookUrl.replace(HTTP_PATHS.webhook, HTTP_PATHS.slackCommands)}`, {
    method: 'POST',
    headers,
    body: form,
  });
  return { status: response.status, body: (await response.json()) as { text?: string } };
}

async function runPosts(projectId: string): Promise<{ inChannel: number; elsewhere: number }> {
  const sent = simulatorOf(stack).triggerRun(projectId);
  await sent.delivered;
  await stack.waitForIdle();
  const posts = slackOf(stack)
    .messages()
    .filter((m) => m.thread_ts === undefined && eventIdOf(m) === sent.event.id);
  return { inChannel: posts.filter((m) => m.channel === CHANNEL).length, elsewhere: posts.filter((m) => m.channel !== CHANNEL).length };
}

describe('the Slack app on the local stack', () => {
  it('subscribes a channel by project name, digests there, and stays silent there once muted', async () => {
    const projectId = stack.projectIds[0]!;
    const project = simulatorOf(stack)
      .data.projects()
      .find((p) => p.id === projectId)!;

    const subscribed = await command(`subscribe ${project.name}`);
    expect(subscribed.status).toBe(200);
    await stack.waitForIdle();
    expect(
      slackOf(stack)
        .responses.map((r) => r.body)
        .join('\n'),
    ).toContain(project.name);

    // A subscribed project goes to its subscribers; the default channel is the fallback for projects nobody subscribed to.
    expect(await runPosts(projectId)).toEqual({ inChannel: 1, elsewhere: 0 });

    const muted = await command(`mute ${project.name} 1d`);
    expect(muted.status).toBe(200);
    expect((await runPosts(projectId)).inChannel).toBe(0);
    expect(stack.observability.countOf('digest:DigestMutedSkip')).toBeGreaterThanOrEqual(1);
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
