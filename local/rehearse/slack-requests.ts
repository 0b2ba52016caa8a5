/**
 * Requests as Slack sends them to the stack's Slack app, and what the app did with them: shared by the
 * rehearsal's scenarios.
 */
import { randomBytes } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { TABLE } from '../../shared/contracts';
import { tenantKey, tenantOf } from '../../shared/tenancy';
import { RESPONSE_URL_PATH } from '../slack/server';
import type { ScenarioContext } from './scenario-context';

/** Who a slash command comes from: by default the stage's own workspace and app (the template's Slack function names them). */
export interface CommandOrigin {
  teamId?: string;
  appId?: string;
  channel?: string;
}

export function slashCommandForm(
  context: ScenarioContext,
  text: string,
  responseUrl = 'https://hooks.slack.com/commands/T0/1/rehearsal',
  origin: CommandOrigin = {},
): string {
  const identity = context.stack.slackIdentity;
  const channel = origin.channel ?? 'C0REHEARSE';
  return new URLSearchParams({
    token: 'unused',
    team_id: origin.teamId ?? context.stack.peers.slack.teamId,
    ...(identity.enterpriseId !== undefined ? { enterprise_id: identity.enterpriseId } : {}),
    api_app_id: origin.appId ?? context.stack.peers.slack.appId,
    channel_id: channel,
    channel_name: channel.toLowerCase(),
    user_id: 'U0REHEARSE',
    user_name: 'operator',
    command: '/visibility',
    text,
    response_url: responseUrl,
    trigger_id: '1.2.3',
  }).toString();
}

/** A response_url on the local Slack server (it keeps what is posted there), as Slack's hooks host. */
export function recordedResponseUrl(name: string): { url: string; answers: (context: ScenarioContext) => number } {
  const path = `${RESPONSE_URL_PATH}${name}-${randomBytes(4).toString('hex')}`;
  return {
    url: `https://hooks.slack.com${path}`,
    answers: (context) => context.stack.peers.slack.responses.filter((response) => response.path === path).length,
  };
}

/** Whether the channel has a subscription index item (`chan#<channel>`, under a connection's tenant when given): what `subscribe` writes. */
export async function channelSubscribed(context: ScenarioContext, channel: string, connectionId?: string): Promise<boolean> {
  const key = tenantKey(tenantOf(connectionId), `${TABLE.prefixes.subscriptionsOfChannel}${channel}`);
  const answer = await context.stack.peers.dynamo.client.send(
    new GetItemCommand({ TableName: context.outputs['TableName']!, Key: { [TABLE.partitionKey]: { S: key } } }),
  );
  return answer.Item !== undefined && Object.keys(answer.Item).some((name) => name !== TABLE.partitionKey);
}

/** The action id of the first button in `blocks` whose id matches `pattern`. */
export function findButton(blocks: unknown[], pattern: RegExp): string | undefined {
  return findButtonBlock(blocks, undefined, pattern)?.['action_id'] as string | undefined;
}

/** The button element with this action id (or, without one, the first whose id matches `pattern`). */
export function findButtonBlock(blocks: unknown[], actionId?: string, pattern?: RegExp): Record<string, unknown> | undefined {
  for (const block of blocks as { elements?: Record<string, unknown>[] }[]) {
    for (const element of block.elements ?? []) {
      if (element['type'] !== 'button') continue;
      const id = typeof element['action_id'] === 'string' ? element['action_id'] : '';
      if (actionId !== undefined ? id === actionId : pattern?.test(id)) return element;
    }
  }
  return undefined;
}
