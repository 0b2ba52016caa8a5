/** The preview's page shell, for the messages and the Home tab: the first render is inline, so a page shows it before the script runs. */
import { HOME_PATHS } from './home';
import { escapeHtml } from './mrkdwn';

export const PREVIEW_PATHS = {
  page: '/slack',
  css: '/slack/preview.css',
  js: '/slack/preview.js',
  timeline: '/slack/timeline',
  events: '/slack/events',
  command: '/slack/preview/command',
  click: '/slack/preview/click',
  /** `<prefix><file id>`: the bytes of a file shared in a message (the trend chart's PNG), from this origin. */
  files: '/slack/files/',
} as const;

/** The message box under the timeline: slash commands typed here reach the bridge as Slack would send them. */
function composerHtml(composer: { channel: string }): string {
  return (
    `<form id="composer" class="composer" autocomplete="off">` +
    `<label class="composer-channel"># <input id="composer-channel" name="channel" value="${escapeHtml(composer.channel)}" aria-label="channel" required></label>` +
    `<input id="composer-line" name="line" placeholder="/visibility help" aria-label="slash command" required>` +
    `<button type="submit" class="button primary">Send</button>` +
    `<output id="composer-result" class="composer-result"></output>` +
    `</form>`
  );
}

export interface PageContent {
  tab: 'messages' | 'home';
  /** The tab's first render: the workspace's timeline, or the Home view. */
  html: string;
  /** The message box's channel; no message box without one (no app to talk to). */
  composer?: { channel: string } | undefined;
}

export function pageHtml(workspace: string, page: PageContent): string {
  const home = page.tab === 'home';
  const tabs = home
    ? `<a class="topbar-tab" href="${PREVIEW_PATHS.page}">Messages</a><span id="title" class="topbar-tab selected">Home</span><span class="topbar-note">the app's Home tab</span>`
    : `<span id="title">All messages</span><a class="topbar-tab" href="${HOME_PATHS.page}">Home</a><span class="topbar-note">local Slack preview</span>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${home ? 'Home' : 'Slack preview'} · ${escapeHtml(workspace)}</title>
<link rel="stylesheet" href="${PREVIEW_PATHS.css}">
</head>
<body>
<div id="app">
<header class="topbar">${tabs}<span id="status" class="status">${home ? 'opening…' : 'connecting…'}</span></header>
${home ? `<div id="home" class="home">${page.html}</div>` : `<div id="timeline">${page.html}</div>`}
${page.composer ? composerHtml(page.composer) : ''}
</div>
<script src="${PREVIEW_PATHS.js}"></script>
</body>
</html>
`;
}
