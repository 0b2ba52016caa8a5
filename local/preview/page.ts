/** The preview page shell: the first render is inline, so the page shows messages even before the script runs. */
import { escapeHtml } from './mrkdwn';

export const PREVIEW_PATHS = {
  page: '/slack',
  css: '/slack/preview.css',
  js: '/slack/preview.js',
  timeline: '/slack/timeline',
  events: '/slack/events',
} as const;

export function pageHtml(workspace: string, timeline: string): string {
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
<header class="topbar"><span id="title">All messages</span><span class="topbar-note">local Slack preview</span><span id="status" class="status">connecting…</span></header>
<div id="timeline">${timeline}</div>
</div>
<script src="${PREVIEW_PATHS.js}"></script>
</body>
</html>
`;
}
