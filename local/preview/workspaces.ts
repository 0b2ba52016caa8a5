/**
 * The preview's page of the local Slack's workspaces (`GET /slack/workspaces`, served with
 * `npm start -- --connections N`): each workspace, whether the app is installed there and which
 * connection posts to it, and "Add to Slack", which starts the bridge's real install flow in the browser
 * (`/slack/install` → the local Slack's install page, where the workspace is chosen → `/slack/oauth_redirect`).
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { HTTP_PATHS } from '../../shared/contracts';
import type { GatewayRoute } from '../http-gateway';
import type { LocalWorkspace } from '../slack/oauth';
import { escapeHtml } from './mrkdwn';

export const WORKSPACES_PATH = '/slack/workspaces';

export interface WorkspacesSource {
  workspaces(): LocalWorkspace[];
  installedTeams(): string[];
  /** The connections linked to each team, with their default channel's name. */
  connections: readonly { id: string; slackTeamId: string; channelName: string }[];
}

const STYLE =
  'body{font:15px system-ui,sans-serif;margin:2rem;color:#1d1c1d}table{border-collapse:collapse}td,th{padding:.4rem .8rem;border-bottom:1px solid #ddd;text-align:left}' +
  '.add{display:inline-block;margin:1rem 0;padding:.5rem 1rem;background:#4a154b;color:#fff;border-radius:4px;text-decoration:none}.yes{color:#007a5a}.no{color:#8d8d8d}';

export function workspacesPageHtml(source: WorkspacesSource): string {
  const installed = new Set(source.installedTeams());
  const rows = source.workspaces().map((w) => {
    const linked = source.connections.filter((c) => c.slackTeamId === w.teamId);
    const state = installed.has(w.teamId) ? '<span class="yes">installed</span>' : '<span class="no">not installed</span>';
    const connections = linked.map((c) => `${escapeHtml(c.id)} → #${escapeHtml(c.channelName)}`).join('<br>') || '—';
    return `<tr data-team="${escapeHtml(w.teamId)}"><td>${escapeHtml(w.name)}</td><td><code>${escapeHtml(w.teamId)}</code></td><td class="state">${state}</td><td>${connections}</td></tr>`;
  });
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Slack workspaces · local</title><style>${STYLE}</style></head><body>
<h1>Slack workspaces</h1>
<p>The local Slack's workspaces. "Add to Slack" goes through the bridge's install flow: its install page, the local Slack's page where you pick the workspace, and back.</p>
<a class="add" id="add-to-slack" href="${HTTP_PATHS.slackInstall}">Add to Slack</a>
<table><thead><tr><th>Workspace</th><th>Team</th><th>App</th><th>Connections</th></tr></thead><tbody>${rows.join('')}</tbody></table>
<p><a href="/slack">Messages</a></p></body></html>`;
}

/** The page as a route of the local API (the preview's own routes belong to another module). */
export function workspacesRoute(source: WorkspacesSource): GatewayRoute {
  const page = (): Promise<APIGatewayProxyStructuredResultV2> =>
    Promise.resolve({
      statusCode: 200,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
      },
      body: workspacesPageHtml(source),
    });
  return { method: 'GET', path: WORKSPACES_PATH, createHandler: () => page };
}
