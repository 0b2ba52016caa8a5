/**
 * The local Slack server delivering Events API requests and Home tab clicks to the app, built and
 * signed as Slack does: `app_home_opened` when a user opens the app's Home tab (a JSON
 * `event_callback` with a fresh event id; a retry is the same event re-signed with `X-Slack-Retry-Num`),
 * and a `block_actions` from the Home view (container `view`, no response_url), the clicked element
 * found in the view the app published for that user.
 */
import { randomUUID } from 'node:crypto';
import { isRecord } from '../../shared/util';
import {
  blockActionsForm,
  deliverSigned,
  findButton,
  LOCAL_SLACK_USER,
  type AppAnswer,
  type SlackAppTarget,
  type SlackSender,
} from '../slack-app-delivery';
import type { HomeTabs } from './views';

export interface OpenHomeInput {
  userId?: string | undefined;
  /** Another workspace, org or app than the local one (tests of what the bridge refuses). */
  from?: Partial<SlackSender> | undefined;
  /** Deliver this event again (a Slack retry: same event id, new signature, `X-Slack-Retry-Num`). */
  retryOf?: string | undefined;
}

export interface HomeClickInput {
  userId?: string | undefined;
  actionId: string;
  /** For a conversations_select: the channel picked; its block is the one with `blockId`. */
  selectedChannel?: string | undefined;
  blockId?: string | undefined;
}

/** What was delivered: the bridge's answer and the event's id (for a retry). */
export interface EventDelivery extends AppAnswer {
  eventId: string;
}

export class SlackEvents {
  constructor(
    private readonly app: () => SlackAppTarget,
    private readonly source: { teamId: string; appId: string; enterpriseId: string | undefined },
    private readonly homeTabs: HomeTabs,
  ) {}

  /** A user opens the app's Home tab: a signed `app_home_opened`. */
  async openHome(input: OpenHomeInput = {}): Promise<EventDelivery> {
    const userId = input.userId ?? LOCAL_SLACK_USER.id;
    const eventId = input.retryOf ?? `Ev${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;
    const nowS = Math.floor(Date.now() / 1000);
    const teamId = input.from?.teamId ?? this.source.teamId;
    const enterpriseId = input.from?.enterpriseId ?? this.source.enterpriseId;
    const published = this.homeTabs.of(userId);
    const body = JSON.stringify({
      token: 'deprecated-verification-token',
      team_id: teamId,
      ...(enterpriseId !== undefined ? { enterprise_id: enterpriseId } : {}),
      api_app_id: input.from?.appId ?? this.source.appId,
      event: {
        type: 'app_home_opened',
        user: userId,
        channel: `D${userId}`,
        tab: 'home',
        event_ts: `${nowS}.000100`,
        ...(published !== undefined
          ? { view: { id: `V${userId}`, type: 'home', private_metadata: published.view.private_metadata ?? '' } }
          : {}),
      },
      type: 'event_callback',
      event_id: eventId,
      event_time: nowS,
      authorizations: [{ team_id: teamId, user_id: 'U0LOCALBOT', is_bot: true }],
    });
    const retry = input.retryOf === undefined ? {} : { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' };
    const app = this.app();
    if (app.eventsUrl === undefined) throw new Error('the connected Slack app has no events URL (connectApp eventsUrl)');
    const headers = { 'content-type': 'application/json', ...retry };
    return { ...(await deliverSigned(app.eventsUrl, app.signingSecret, body, Date.now(), headers)), eventId };
  }

  /** A click on the user's Home tab: a button (its value from the published view) or a channel picked in a select. */
  async clickHome(input: HomeClickInput): Promise<AppAnswer> {
    const app = this.app();
    const userId = input.userId ?? LOCAL_SLACK_USER.id;
    const published = this.homeTabs.of(userId);
    if (published === undefined) throw new Error(`the app has published no Home tab for ${userId}`);
    const { blocks } = published.view;
    const action = input.selectedChannel === undefined ? findButton(blocks, input.actionId) : this.select(blocks, input);
    if (action === undefined) throw new Error(`the Home tab has no button ${input.actionId}`);
    const { teamId, appId, enterpriseId } = this.source;
    const view = { id: `V${userId}`, blocks, privateMetadata: published.view.private_metadata ?? '' };
    const form = blockActionsForm(
      { user: { ...LOCAL_SLACK_USER, id: userId }, teamId, appId, enterpriseId, place: { view }, action },
      Date.now(),
    );
    return deliverSigned(app.interactionsUrl, app.signingSecret, form, Date.now());
  }

  private select(blocks: readonly unknown[], input: HomeClickInput): Record<string, unknown> {
    const block = blocks.find(
      (b) =>
        isRecord(b) &&
        b['block_id'] === input.blockId &&
        Array.isArray(b['elements']) &&
        b['elements'].some((e) => isRecord(e) && e['action_id'] === input.actionId),
    );
    if (block === undefined) throw new Error(`the Home tab has no ${input.actionId} in block ${String(input.blockId)}`);
    return {
      type: 'conversations_select',
      action_id: input.actionId,
      block_id: input.blockId,
      selected_conversation: input.selectedChannel,
    };
  }
}
