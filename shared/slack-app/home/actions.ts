/**
 * The Home tab's own actions (a `block_actions` payload whose container is the Home view): a page
 * button (re-publish that page), "Subscribe a channel" (a channel picked in the project's select) and
 * the "Open latest digest" link (Slack opens it; the click needs only a 200). The project a select is
 * for is in its block's id; whether the user may subscribe there is decided where it is acted on, by
 * the same `slackAccess` policy as `/visibility subscribe`.
 */
import { isRecord } from '../../util';
import type { SlackTeam } from '../ports';
import type { HomeSubscribe } from './ports';

export const HOME_ACTION_IDS = {
  previous: 'home_page_previous',
  next: 'home_page_next',
  openDigest: 'home_open_digest',
  subscribe: 'home_subscribe',
} as const;

/** The block of a project's buttons: its id names the project (`home_project:<id>`). */
export const HOME_PROJECT_BLOCK_PREFIX = 'home_project:';

/** The workspace the tab was used in (`team.id`, `enterprise.id`): its tenants are what the tab shows. */
type InTeam = { team?: SlackTeam | undefined };

export type HomeAction =
  | ({ kind: 'page'; userId: string; page: number } & InTeam)
  | ({ kind: 'subscribe'; userId: string; page: number } & HomeSubscribe & InTeam)
  | { kind: 'open_digest' };

/** Whether a block_actions payload was clicked on the app's Home tab. */
export function isHomeAction(payload: Record<string, unknown>): boolean {
  return isRecord(payload['view']) && payload['view']['type'] === 'home';
}

/** The Home tab action of a block_actions payload, or what is wrong with it. */
export function parseHomeAction(payload: Record<string, unknown>): HomeAction | string {
  const user = isRecord(payload['user']) ? payload['user']['id'] : undefined;
  const actions = payload['actions'];
  const first: unknown = Array.isArray(actions) ? actions[0] : undefined;
  if (typeof user !== 'string' || user === '' || !isRecord(first)) return 'Home tab action lacks user.id or its action';
  const actionId = first['action_id'];
  if (actionId === HOME_ACTION_IDS.openDigest) return { kind: 'open_digest' };
  const team = teamOf(payload);
  if (actionId === HOME_ACTION_IDS.previous || actionId === HOME_ACTION_IDS.next) {
    const page = Number(first['value']);
    return Number.isSafeInteger(page) && page >= 0 ? { kind: 'page', userId: user, page, ...team } : 'Home tab page button without a page';
  }
  if (actionId !== HOME_ACTION_IDS.subscribe) return `Home tab action "${String(actionId).slice(0, 40)}" is not handled`;
  const blockId = first['block_id'];
  const channel = first['selected_conversation'] ?? first['selected_channel'];
  if (typeof blockId !== 'string' || !blockId.startsWith(HOME_PROJECT_BLOCK_PREFIX) || typeof channel !== 'string' || channel === '')
    return 'Home tab subscribe lacks its project or channel';
  const projectId = blockId.slice(HOME_PROJECT_BLOCK_PREFIX.length);
  if (projectId === '') return 'Home tab subscribe lacks its project';
  return { kind: 'subscribe', userId: user, projectId, channel, page: viewPage(payload['view']), ...team };
}

/** The workspace a block_actions payload was clicked in (on the Home tab or a message). */
export function teamOf(payload: Record<string, unknown>): InTeam {
  const teamId = isRecord(payload['team']) ? payload['team']['id'] : undefined;
  const enterpriseId = isRecord(payload['enterprise']) ? payload['enterprise']['id'] : undefined;
  if (typeof teamId !== 'string' || teamId === '') return {};
  return { team: { teamId, ...(typeof enterpriseId === 'string' && enterpriseId !== '' ? { enterpriseId } : {}) } };
}

/** The page the view shows (its `private_metadata`), so a subscribe re-publishes the same page. */
export function viewPage(view: unknown): number {
  const metadata = isRecord(view) ? view['private_metadata'] : undefined;
  const page = typeof metadata === 'string' ? Number(/^page=(\d{1,6})$/.exec(metadata)?.[1]) : Number.NaN;
  return Number.isSafeInteger(page) ? page : 0;
}

/** The view's `private_metadata` for a page. */
export function pageMetadata(page: number): string {
  return `page=${page}`;
}
