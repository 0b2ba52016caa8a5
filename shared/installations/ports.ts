/**
 * What the installations module needs from the outside world: where installations live, the lease that
 * lets one refresher at a time rotate an installation's token, and Slack's token refresh. Adapters:
 * shared/adapters/dynamo-installation-store.ts, shared/adapters/slack-oauth.ts.
 */
import type { BotToken, Installation } from './model';

export interface InstallationStore {
  /** Creates or replaces the installation (a reinstall replaces the tokens). */
  save(installation: Installation): Promise<void>;
  /** The installation stored under `id` (consistent read), or undefined. */
  get(id: string): Promise<Installation | undefined>;
  /**
   * Replaces the bot token after a refresh, if the stored refresh token is still `usedRefreshToken`:
   * false when it is not (a reinstall or a purge happened meanwhile; the new token is dropped).
   */
  replaceBotToken(id: string, usedRefreshToken: string, next: BotToken): Promise<boolean>;
  /** Deletes the installation; idempotent: true when there was one to delete (this call removed it). */
  delete(id: string): Promise<boolean>;
}

/** A per-installation lease: who may spend the installation's single-use refresh token now. */
export interface RefreshLease {
  /** The holder's token, or undefined while another holder's lease is live. */
  take(id: string, nowMs: number): Promise<string | undefined>;
  /** Ends the lease now (after success or failure): the next refresher may take it. */
  release(id: string, holder: string): Promise<void>;
}

/** Slack's oauth.v2.access with grant_type=refresh_token. */
export interface TokenRefresher {
  /** The new token pair; throws TokenRevoked when Slack refuses the refresh token (invalid_grant and kin). */
  refresh(refreshToken: string): Promise<BotToken>;
}

/**
 * What the bridge keeps for a Slack workspace besides its installation: the subscriptions and channel
 * settings its members made (quiet hours, weekly reports, filters), the digests held for its channels,
 * and the routes (connections' project → channel) that post into it.
 */
export interface TeamData {
  /** Deletes the team's subscriptions, channel settings and held digests; idempotent. The channels it purged. */
  purge(teamId: string): Promise<string[]>;
  /** Marks the team's routes broken with `code` (digests skip them and say why); idempotent. How many it marked. */
  markRoutesBroken(teamId: string, code: string): Promise<number>;
}

/** Where a workspace sets things up: noted on every command it runs in a channel, so its uninstall purges them. */
export interface TeamChannels {
  note(teamId: string, channel: string): Promise<void>;
}
