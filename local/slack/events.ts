/**
 * The local Slack server delivering Events API requests and Home tab clicks to the app, built and
 * signed as Slack does: `url_verification` (Slack's check of the request URL), `app_home_opened`
 * when a user opens the app's Home tab (a JSON `event_callback` with a fresh event id; a retry is the
 * same event re-signed with `X-Slack-Retry-Num`), and a `block_actions` from the Home view (container
 * `view`, no response_url), the clicked element found in the view the app published for that user.
 */
import { randomUUID } from 'node:crypto';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { isRecord, parseJsonOrUndefined as readJson } from '../../shared/util';
import { deliverSigned, findButton, type AppAnswer, type SlackAppTarget, type SlackSender } from '../slack-app-delivery';
import type { HomeTabs } from './views';

/** Who opens the Home tab in the local workspace (the preview user). */
const LOCAL_USER_ID = 'U0LOCAL';

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

  /** Slack's check of the events request URL, as when the app's Event Subscriptions are saved. */
  async verifyUrl(challenge: string = randomUUID()): Promise<AppAnswer & { challenge: string }> {
    const body = JSON.stringify({ token: 'deprecated-verification-token', challenge, type: 'url_verification' });
    return { ...(await this.deliverJson(body, {})), challenge };
  }

  /** A user opens the app's Home tab: a signed `app_home_opened`. */
  async openHome(input: OpenHomeInput = {}): Promise<EventDelivery> {
    const userId = input.userId ?? LOCAL_USER_ID;
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
    const headers = input.retryOf === undefined ? {} : { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' };
    return { ...(await this.deliverJson(body, headers)), eventId };
  }

  /** A click on the user's Home tab: a button (its value from the published view) or a channel picked in a select. */
  async clickHome(input: HomeClickInput): Promise<AppAnswer> {
    const app = this.app();
    const userId = input.userId ?? LOCAL_USER_ID;
    const published = this.homeTabs.of(userId);
    if (published === undefined) throw new Error(`the app has published no Home tab for ${userId}`);
    const action =
      input.selectedChannel === undefined ? this.button(published.view.blocks, input.actionId) : this.select(published.view.blocks, input);
    const payload = {
      type: 'block_actions',
      user: { id: userId, username: 'you', name: 'you', team_id: this.source.teamId },
      api_app_id: this.source.appId,
      team: { id: this.source.teamId },
      ...(this.source.enterpriseId !== undefined ? { enterprise: { id: this.source.enterpriseId } } : {}),
      container: { type: 'view', view_id: `V${userId}` },
      trigger_id: randomUUID(),
      view: { id: `V${userId}`, type: 'home', blocks: published.view.blocks, private_metadata: published.view.private_metadata ?? '' },
      actions: [{ ...action, action_ts: (Date.now() / 1000).toFixed(6) }],
    };
    return deliverSigned(
      app.interactionsUrl,
      app.signingSecret,
      new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
      Date.now(),
    );
  }

  private button(blocks: readonly unknown[], actionId: string): Record<string, unknown> {
    const button = findButton(blocks, actionId);
    if (button === undefined) throw new Error(`the Home tab has no button ${actionId}`);
    return {
      type: 'button',
      action_id: actionId,
      ...(button.blockId !== undefined ? { block_id: button.blockId } : {}),
      ...(button.value !== undefined ? { value: button.value } : {}),
      text: { type: 'plain_text', text: button.text, emoji: true },
    };
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

  private async deliverJson(body: string, headers: Record<string, string>): Promise<AppAnswer> {
    const app = this.app();
    if (app.eventsUrl === undefined) throw new Error('the connected Slack app has no events URL (connectApp eventsUrl)');
    const response = await fetch(app.eventsUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...signSlackRequest(app.signingSecret, Math.floor(Date.now() / 1000), body),
        ...headers,
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(3_000),
    });
    const text = await response.text();
    return { status: response.status, body: text.trim() === '' ? undefined : (readJson(text) ?? text) };
  }
}
