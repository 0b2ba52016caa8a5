/**
 * An installation's bot token, refreshed when it is about to expire. Slack's refresh tokens are single
 * use: two refreshers spending the same one get one new token and one `invalid_grant`, which would
 * leave the second with nothing. So a refresh happens only under the installation's lease, and the
 * holder reads the installation again once it holds it (a holder just before may have refreshed it);
 * everyone else waits for the stored token to change instead of refreshing.
 */
import { AFTER_FIX_REPLAY, NeedsOperatorFix, Unavailable } from '../errors';
import type { Clock, Log } from '../ports';
import { installationIdsFor, tokenIsFresh, type Installation, type InstallationRef } from './model';
import type { InstallationStore, RefreshLease, TokenRefresher } from './ports';

export interface TokenLeaseOptions {
  /** Refresh when less than this is left (Slack's tokens live 12 h; @slack/oauth refreshes 2 h before). */
  refreshMarginMs: number;
  /** How often a waiter reads the installation again while another holds the lease. */
  pollMs: number;
  /** How long a waiter waits for the holder before giving up (Unavailable: the caller retries). */
  maxWaitMs: number;
}

export const DEFAULT_TOKEN_LEASE_OPTIONS: TokenLeaseOptions = { refreshMarginMs: 2 * 3600_000, pollMs: 100, maxWaitMs: 15_000 };

export interface TokenLeaseDeps {
  store: InstallationStore;
  lease: RefreshLease;
  refresher: TokenRefresher;
  clock: Clock;
  sleep: (ms: number) => Promise<void>;
  log: Log;
  options?: TokenLeaseOptions | undefined;
}

/** The installation serving `ref` (its workspace's own, else its org's), or an operator fix naming the install. */
export async function installationFor(ref: InstallationRef, store: InstallationStore): Promise<{ id: string; installation: Installation }> {
  for (const id of installationIdsFor(ref)) {
    const installation = await store.get(id);
    if (installation) return { id, installation };
  }
  throw new NeedsOperatorFix(
    `the Slack app is not installed in ${describeRef(ref)}`,
    `install it with the bridge's Add to Slack page (/slack/install); ${AFTER_FIX_REPLAY}`,
  );
}

/** A bot token of the installation serving `ref` with more than the margin left, refreshing it under the lease when needed. */
export async function freshBotToken(ref: InstallationRef, deps: TokenLeaseDeps): Promise<string> {
  const options = deps.options ?? DEFAULT_TOKEN_LEASE_OPTIONS;
  const { id, installation } = await installationFor(ref, deps.store);
  if (tokenIsFresh(installation.bot, deps.clock.now(), options.refreshMarginMs)) return installation.bot.token;
  const waitUntil = deps.clock.now() + options.maxWaitMs;
  for (;;) {
    const holder = await deps.lease.take(id, deps.clock.now());
    if (holder !== undefined) return refreshHeld(id, holder, deps, options);
    await deps.sleep(options.pollMs);
    const current = (await installationFor(ref, deps.store)).installation;
    if (tokenIsFresh(current.bot, deps.clock.now(), options.refreshMarginMs)) return current.bot.token;
    if (deps.clock.now() >= waitUntil) {
      throw new Unavailable(`the bot token of ${id} is being refreshed by another invocation that has not finished; try again`);
    }
  }
}

async function refreshHeld(id: string, holder: string, deps: TokenLeaseDeps, options: TokenLeaseOptions): Promise<string> {
  try {
    const installation = await deps.store.get(id);
    if (!installation)
      throw new NeedsOperatorFix(`the Slack app was uninstalled from ${id}`, 'install it again with the Add to Slack page');
    const { bot } = installation;
    if (tokenIsFresh(bot, deps.clock.now(), options.refreshMarginMs) || bot.refreshToken === undefined) return bot.token;
    const next = await deps.refresher.refresh(bot.refreshToken);
    if (!(await deps.store.replaceBotToken(id, bot.refreshToken, next))) {
      throw new Unavailable(
        `the installation ${id} was reinstalled or removed while its token was refreshed; the next attempt reads it again`,
      );
    }
    deps.log.info('bot token refreshed', { installation: id, expiresAtMs: next.expiresAtMs });
    return next.token;
  } finally {
    await deps.lease.release(id, holder);
  }
}

function describeRef(ref: InstallationRef): string {
  if (ref.isEnterpriseInstall) return `the org ${ref.enterpriseId ?? '?'}`;
  return ref.enterpriseId ? `the workspace ${ref.teamId ?? '?'} (org ${ref.enterpriseId})` : `the workspace ${ref.teamId ?? '?'}`;
}
