/**
 * A connection: one workspace of the visibility service the bridge serves besides (or instead of) the
 * stack's own, with its own webhook URL (`/webhook/<id>`), read-API base URL and key, signing secrets
 * and channel routes. The secrets live in one Secrets Manager secret per connection (JSON, below); the
 * table item holds only what is not secret, and the secret's name.
 */
import { CONNECTION_ID_PATTERN, HTTP_PATHS } from '../contracts';
import type { InstallationRef } from '../installations/model';
import { isHomeChannelId } from '../routing';
import { SLACK_ID_PATTERNS } from '../slack-app/workspace-gate';
import { STACK_TENANT, tenantLabel } from '../tenancy';
import { isRecord } from '../util';

/** Where a connection's digests go: the default channel (also the watchdog's), and a home channel per project. */
export interface ConnectionRoutes {
  defaultChannel: string;
  byProject: Readonly<Record<string, string>>;
}

export type ConnectionStatus = 'active' | 'removed';

export interface Connection {
  id: string;
  /** The service's read-API base URL for this workspace (no trailing slash). */
  baseUrl: string;
  /** Name of the Secrets Manager secret holding its read key and signing secrets. */
  secretName: string;
  routes: ConnectionRoutes;
  /**
   * The Slack installations it is linked to (team ids T…, or an org's E… for an org-wide install): its
   * digests post with that installation's bot token, and only those workspaces see its projects. Empty:
   * the stack's own bot token and workspaces (as before connections could be linked).
   */
  slackTeamIds: readonly string[];
  status: ConnectionStatus;
  createdAtMs: number;
  removedAtMs?: number | undefined;
}

/** What the connection's secret holds (JSON `{"readApiKey": "…", "signingSecrets": ["whsec_…"]}`). */
export interface ConnectionSecret {
  readApiKey: string;
  /** The live signing secrets, oldest first: one, or two while a webhook is rotated. */
  signingSecrets: string[];
}

/**
 * Two at most: during a rotation the old webhook and the new one both deliver (spec §5: rotating is
 * creating a new webhook and deleting the old one). A third would mean a rotation left unfinished.
 */
export const MAX_LIVE_SIGNING_SECRETS = 2;

/** Why `id` cannot be a connection id (it is a URL path segment and part of a secret's name), or undefined. */
export function connectionIdProblem(id: string): string | undefined {
  // `stack` names the stack's own tenant (metric dimension, MessageGroupId, `dlq replay --connection stack`).
  if (id === tenantLabel(STACK_TENANT)) return `"${id}" names the stack's own workspace; choose another connection id (e.g. acme-seo)`;
  if (new RegExp(CONNECTION_ID_PATTERN).test(id)) return undefined;
  return 'a connection id is 1 to 40 lower-case letters, digits and hyphens, starting and ending with a letter or digit (e.g. acme-seo)';
}

/** Which webhook a request path names: the stack's own (`/webhook`), a connection's, or none. */
export type WebhookTarget = { kind: 'default' } | { kind: 'connection'; id: string } | { kind: 'none' };

export function webhookTargetOf(path: string): WebhookTarget {
  if (path === HTTP_PATHS.webhook) return { kind: 'default' };
  const prefix = `${HTTP_PATHS.webhook}/`;
  if (!path.startsWith(prefix)) return { kind: 'none' };
  const id = path.slice(prefix.length);
  return connectionIdProblem(id) === undefined ? { kind: 'connection', id } : { kind: 'none' };
}

/** The webhook URL of a connection, from the stack's `/webhook` URL. */
export function connectionWebhookUrl(defaultWebhookUrl: string, id: string): string {
  return `${defaultWebhookUrl.replace(/\/+$/, '')}/${id}`;
}

/** The connection's secret as stored; throws saying what a good value looks like (never the value). */
export function parseConnectionSecret(text: string, secretName: string): ConnectionSecret {
  const shape = `must be JSON {"readApiKey": "<key>", "signingSecrets": ["whsec_…"]} (\`npx bridge connections add\` writes it)`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`secret ${secretName} is not JSON; it ${shape}`);
  }
  if (!isRecord(parsed)) throw new Error(`secret ${secretName} is not a JSON object; it ${shape}`);
  const key = parsed['readApiKey'];
  const signing = parsed['signingSecrets'];
  if (typeof key !== 'string' || key.trim() === '') throw new Error(`secret ${secretName} has no readApiKey; it ${shape}`);
  if (!Array.isArray(signing) || signing.length === 0 || signing.some((s) => typeof s !== 'string' || s.trim() === ''))
    throw new Error(`secret ${secretName} has no signingSecrets (a non-empty array of strings); it ${shape}`);
  const signingSecrets = (signing as string[]).map((s) => s.trim());
  if (signingSecrets.length > MAX_LIVE_SIGNING_SECRETS)
    throw new Error(`secret ${secretName} holds ${signingSecrets.length} signing secrets; at most ${MAX_LIVE_SIGNING_SECRETS} are live`);
  return { readApiKey: key.trim(), signingSecrets };
}

export function formatConnectionSecret(secret: ConnectionSecret): string {
  return JSON.stringify({ readApiKey: secret.readApiKey, signingSecrets: secret.signingSecrets });
}

/** A rotation step's result: the secrets to store, or why the step is refused (and what to do). */
export type RotationStep = { ok: true; signingSecrets: string[] } | { ok: false; problem: string; fix: string };

/** Why no rotation can start now (one is under way: a third live secret is refused), or undefined. */
export function rotationUnderWay(current: readonly string[]): { problem: string; fix: string } | undefined {
  if (current.length < MAX_LIVE_SIGNING_SECRETS) return undefined;
  return {
    problem: `a rotation is already under way (${current.length} signing secrets live)`,
    fix: 'delete the old webhook in the service, then finish it with `connections rotate <id> --finish`',
  };
}

/** Starts a rotation: the new webhook's secret joins the old one. */
export function startRotation(current: readonly string[], added: string): RotationStep {
  const underWay = rotationUnderWay(current);
  if (underWay !== undefined) return { ok: false, ...underWay };
  if (current.includes(added))
    return {
      ok: false,
      problem: 'that signing secret is already live',
      fix: "paste the new webhook's secret, shown once when it was created",
    };
  return { ok: true, signingSecrets: [...current, added] };
}

/** Finishes a rotation: the newest secret stays, the old one is dropped. */
export function finishRotation(current: readonly string[]): RotationStep {
  const newest = current[current.length - 1];
  if (current.length < 2 || newest === undefined)
    return { ok: false, problem: 'no rotation is under way (one signing secret live)', fix: 'start one with `connections rotate <id>`' };
  return { ok: true, signingSecrets: [newest] };
}

/** Routes as the operator gives them: every channel a Slack id (C…/G…), as the stage file's. */
export function routesProblem(routes: ConnectionRoutes): string | undefined {
  if (!isHomeChannelId(routes.defaultChannel)) return `default channel "${routes.defaultChannel}" is not a channel id (C… or G…)`;
  for (const [project, channel] of Object.entries(routes.byProject)) {
    if (project.trim() === '') return 'a route has an empty project id';
    if (!isHomeChannelId(channel)) return `the channel of project ${project} ("${channel}") is not a channel id (C… or G…)`;
  }
  return undefined;
}

/** Why `id` cannot name a linked Slack installation (a workspace T…, or an org E… for an org-wide install), or undefined. */
export function slackTeamIdProblem(id: string): string | undefined {
  if (SLACK_ID_PATTERNS.team.test(id) || SLACK_ID_PATTERNS.enterprise.test(id)) return undefined;
  return 'a Slack workspace id (T…, e.g. T0123ABCD) or, for an org-wide install, an Enterprise Grid org id (E…)';
}

/** The installation a linked id names: the workspace's own, or the org's for an org-wide install. */
export function installationRefOf(linkedId: string): InstallationRef {
  return SLACK_ID_PATTERNS.enterprise.test(linkedId) ? { enterpriseId: linkedId, isEnterpriseInstall: true } : { teamId: linkedId };
}

/**
 * The linked installation whose bot token posts the connection's digests and its watchdog notice:
 * the first linked (channel → workspace is not known without a Slack call, so the routes are taken to
 * be channels of that workspace, or Slack Connect channels shared with it). Undefined: the stack's token.
 */
export function postingTeamOf(connection: Connection): string | undefined {
  return connection.slackTeamIds[0];
}

/** `current` with `added` linked after it (each once, order kept: the first stays the posting one). */
export function withTeamsLinked(current: readonly string[], added: readonly string[]): string[] {
  return [...new Set([...current, ...added])];
}

/** `current` without `removed`. */
export function withTeamsUnlinked(current: readonly string[], removed: readonly string[]): string[] {
  return current.filter((id) => !removed.includes(id));
}
