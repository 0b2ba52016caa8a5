/**
 * A workspace removed the app: Slack sends `app_uninstalled` and `tokens_revoked`, in either order, each
 * possibly twice. Either one (tokens_revoked only when it names bot tokens: a user token is not the
 * bridge's) purges what the bridge keeps for the team (its installation, subscriptions, channel settings
 * and held digests) and marks its routes broken, so nothing waits on a token that no longer works. Every
 * step is idempotent, so the second event, a repeat, or a retry after a failure finds nothing left to
 * do; only the event that removed the installation says so to ops, in one line.
 */
import type { Log } from '../ports';
import { installationId, type InstallationRef } from './model';
import type { InstallationStore, TeamData } from './ports';

export interface UninstallDeps {
  store: InstallationStore;
  teamData: TeamData;
  log: Log;
}

/** The code routes are marked broken with: what `list` and the digest's skip say. */
export const UNINSTALLED_CODE = 'app_uninstalled';

export type UninstallOutcome = 'purged' | 'already_purged' | 'ignored';

/** `app_uninstalled`: the team (or, for an org-wide install, the org's installation) is gone. */
export async function onAppUninstalled(ref: InstallationRef, deps: UninstallDeps): Promise<UninstallOutcome> {
  return purgeTeam(ref, 'app_uninstalled', deps);
}

/** Slack's `tokens_revoked` event's `tokens`: the user ids of revoked user tokens and bot user ids of revoked bot tokens. */
export interface RevokedTokens {
  oauth?: string[] | undefined;
  bot?: string[] | undefined;
}

/** `tokens_revoked`: the same purge when a bot token was revoked; user tokens alone are not the bridge's. */
export async function onTokensRevoked(ref: InstallationRef, tokens: RevokedTokens, deps: UninstallDeps): Promise<UninstallOutcome> {
  if ((tokens.bot ?? []).length === 0) return 'ignored';
  return purgeTeam(ref, 'tokens_revoked', deps);
}

async function purgeTeam(ref: InstallationRef, cause: string, deps: UninstallDeps): Promise<UninstallOutcome> {
  // The installation goes last: were a step before it to fail, Slack's retry of the event finds it and
  // runs the purge again, and the ops line is still said once, by the run that removed it.
  const team = ref.teamId;
  const channels = team === undefined ? [] : await deps.teamData.purge(team);
  const routes = team === undefined ? 0 : await deps.teamData.markRoutesBroken(team, UNINSTALLED_CODE);
  // Only the installation the event names: a workspace leaving never removes its org's org-wide install.
  if (!(await deps.store.delete(installationId(ref)))) return 'already_purged';
  deps.log.warn(
    'Slack app removed from a workspace: its installation, subscriptions, settings and held digests purged, its routes marked broken',
    {
      teamId: team,
      enterpriseId: ref.enterpriseId,
      cause,
      channelsPurged: channels.length,
      routesBroken: routes,
    },
  );
  return 'purged';
}
