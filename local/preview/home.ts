/**
 * The preview's Home tab (`GET /slack/home`): the app's Home tab as the local Slack server holds it
 * (`views.publish`), drawn by the preview's block renderer. Loading the page opens the tab — the
 * local Slack server sends the bridge a signed `app_home_opened`, as Slack does — and the page redraws
 * when the bridge publishes; a button on it (Previous / Next) is clicked through the local Slack
 * server as a Home tab `block_actions`.
 */
import { blockHtml } from './blocks';
import { escapeHtml } from './mrkdwn';

export const HOME_PATHS = {
  page: '/slack/home',
  view: '/slack/home/view',
  js: '/slack/home.js',
  open: '/slack/preview/home/open',
  click: '/slack/preview/home/click',
} as const;

/** What the Home tab reads and does; the local Slack server is one. */
export interface HomeSource {
  /** The view the app last published for the preview user; undefined before one. */
  homeView?(): { view: { blocks: unknown[] } } | undefined;
  /** The preview user opens the Home tab (a signed `app_home_opened` to the app). */
  openHome?(): Promise<{ status: number }>;
  /** The preview user clicks the button `actionId` of the published view. */
  clickHome?(input: { actionId: string }): Promise<{ status: number }>;
}

/** The published view's blocks, or what to wait for. */
export function homeViewHtml(source: HomeSource): string {
  const published = source.homeView?.();
  if (published === undefined) return '<p class="home-empty">The app has not published a Home tab yet: it does when the tab is opened.</p>';
  return `<div class="home-view">${published.view.blocks.map(blockHtml).join('')}</div>`;
}

export function homePageHtml(workspace: string, view: string, css: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Home · ${escapeHtml(workspace)}</title>
<link rel="stylesheet" href="${css}">
</head>
<body>
<div id="app">
<header class="topbar"><a class="topbar-tab" href="/slack">Messages</a><span id="title" class="topbar-tab selected">Home</span><span class="topbar-note">the app's Home tab</span><span id="status" class="status">opening…</span></header>
<div id="home" class="home">${view}</div>
</div>
<script src="${HOME_PATHS.js}"></script>
</body>
</html>
`;
}

export const HOME_JS = `
(() => {
  'use strict';
  const home = document.getElementById('home');
  const status = document.getElementById('status');
  async function refresh() {
    const response = await fetch('${HOME_PATHS.view}', { cache: 'no-store' });
    if (response.ok) home.innerHTML = await response.text();
  }
  async function post(path, body) {
    try {
      const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const answer = await response.json().catch(() => ({}));
      status.textContent = response.ok ? (answer.status === 200 ? 'sent' : 'the bridge answered ' + answer.status) : answer.error || 'HTTP ' + response.status;
    } catch (error) {
      status.textContent = 'not sent: ' + error.message;
    }
  }
  home.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action-id]');
    if (button) void post('${HOME_PATHS.click}', { actionId: button.dataset.actionId });
  });
  const events = new EventSource('/slack/events');
  events.addEventListener('change', () => void refresh());
  void post('${HOME_PATHS.open}', {});
})();
`;
