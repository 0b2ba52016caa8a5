/**
 * The preview's Home tab (`GET /slack/home`): the app's Home tab as the local Slack server holds it
 * (`views.publish`), drawn by the preview's block renderer. Loading the page opens the tab — the
 * local Slack server sends the bridge a signed `app_home_opened`, as Slack does — and the page redraws
 * when the bridge publishes; a button on it (Previous / Next) or a channel picked in its select is
 * sent through the local Slack server as a Home tab `block_actions`.
 */
import type { LocalSlackServer } from '../slack/server';
import { blockHtml } from './blocks';

export const HOME_PATHS = {
  page: '/slack/home',
  view: '/slack/home/view',
  open: '/slack/preview/home/open',
  click: '/slack/preview/home/click',
} as const;

/** The published view's blocks, or what to wait for. */
export function homeViewHtml(source: LocalSlackServer): string {
  const published = source.homeView();
  if (published === undefined) return '<p class="home-empty">The app has not published a Home tab yet: it does when the tab is opened.</p>';
  const channels = source.namedChannels();
  return `<div class="home-view">${published.view.blocks.map((block) => blockHtml(block, channels)).join('')}</div>`;
}
