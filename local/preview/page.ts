/** The preview page shell: the first render is inline, so the page shows messages even before the script runs. */
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

export function pageHtml(workspace: string, timeline: string, composer?: { channel: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Slack preview · ${escapeHtml(workspace)}</title>
<link rel="stylesheet" href="${PREVIEW_PATHS.css}">
</head>
<body>
<div id="app">
<header class="topbar"><span id="title">All messages</span><a class="topbar-tab" href="/slack/home">Home</a><span class="topbar-note">local Slack preview</span><span id="status" class="status">connecting…</span></header>
<div id="timeline">${timeline}</div>
${composer ? composerHtml(composer) : ''}
</div>
<script src="${PREVIEW_PATHS.js}"></script>
</body>
</html>
`;
}
