/**
 * One installation of the Slack app (OAuth v2, shared/adapters/slack-oauth.ts): a workspace, or a whole
 * Enterprise Grid org for an org-wide install, with its bot token. Keyed by the org for an org install
 * and by the workspace otherwise, so a workspace of an org-installed app finds the org's installation.
 */

/** The bot token and, with token rotation, its single-use refresh token and when it expires. */
export interface BotToken {
  token: string;
  refreshToken?: string | undefined;
  /** Epoch ms; absent for a token that does not expire (rotation off). */
  expiresAtMs?: number | undefined;
}

export interface Installation {
  /** Absent for an org-wide install (it covers every workspace of `enterpriseId`). */
  teamId?: string | undefined;
  teamName?: string | undefined;
  enterpriseId?: string | undefined;
  enterpriseName?: string | undefined;
  isEnterpriseInstall: boolean;
  appId?: string | undefined;
  botUserId: string;
  botId: string;
  scopes: string[];
  bot: BotToken;
  /** The Slack user who installed the app. */
  installedBy: string;
  installedAtMs: number;
}

/** What names an installation: a workspace, possibly of a Grid org, or the org itself. */
export interface InstallationRef {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}

/** The id an installation is stored under: the org's for an org install, else the workspace's. */
export function installationId(ref: InstallationRef): string {
  const id = ref.isEnterpriseInstall ? ref.enterpriseId : ref.teamId;
  if (id === undefined || id === '') {
    throw new Error(ref.isEnterpriseInstall ? 'an org-wide installation needs its enterprise id' : 'an installation needs its team id');
  }
  return id;
}

/** Where to look for a workspace's installation, most specific first: its own, then its org's. */
export function installationIdsFor(ref: InstallationRef): string[] {
  if (ref.isEnterpriseInstall) return [installationId(ref)];
  return [ref.teamId, ref.enterpriseId].filter((id): id is string => id !== undefined && id !== '');
}

/** True when the token is absent of an expiry (rotation off) or still has more than `marginMs` left. */
export function tokenIsFresh(bot: BotToken, nowMs: number, marginMs: number): boolean {
  return bot.expiresAtMs === undefined || bot.refreshToken === undefined || bot.expiresAtMs - nowMs > marginMs;
}
