/**
 * Where a project's digest goes:
 * - its home channel: the configured `projectChannels[project]`, else the default channel. It gets
 *   every digest whatever other channels subscribe or mute; only its own subscription (a mute or mode
 *   set in that channel, matched by the channel id Slack sends) or the stage file changes that;
 * - every other subscribed channel, with its mode; one that muted the project, or that Slack refused
 *   for good (`broken`), is skipped with its reason.
 * One entry per channel: each is posted under its own claim (`post#<channel>#<event id>`).
 * Every channel here is a Slack id (C…/G…): the stage file must name channels by id (synth and cold
 * start refuse a name), and Slack reports clicks and commands by id, so one channel is one key.
 */
import type { DigestMode } from './contracts';
import type { Subscription } from './ports';

export interface FallbackRouting {
  defaultChannel: string;
  projectChannels: Readonly<Record<string, string>>;
}

export type RouteSource = 'subscription' | 'config' | 'default';

export interface ChannelDelivery {
  channel: string;
  mode: DigestMode;
  source: RouteSource;
  /** The project's configured or default channel: never dropped by another channel, and its failure fails the run. */
  home: boolean;
}

export type SkippedChannel =
  { channel: string; reason: 'muted'; mutedUntilMs: number } | { channel: string; reason: 'broken'; code: string; sinceMs: number };

export interface DigestRoute {
  deliveries: ChannelDelivery[];
  skipped: SkippedChannel[];
}

/** The project's home channel (configured, else default); undefined when neither is set. */
export function homeChannel(projectId: string, fallback: FallbackRouting): { channel: string; source: 'config' | 'default' } | undefined {
  const configured = fallback.projectChannels[projectId]?.trim();
  if (configured) return { channel: configured, source: 'config' };
  const defaultChannel = fallback.defaultChannel.trim();
  return defaultChannel === '' ? undefined : { channel: defaultChannel, source: 'default' };
}

export function routeDigest(
  projectId: string,
  subscriptions: readonly Subscription[],
  fallback: FallbackRouting,
  nowMs: number,
): DigestRoute {
  const route: DigestRoute = { deliveries: [], skipped: [] };
  const home = homeChannel(projectId, fallback);
  const decided = new Set<string>();
  for (const subscription of subscriptions) {
    if (subscription.projectId !== projectId || decided.has(subscription.channel)) continue;
    decided.add(subscription.channel);
    const isHome = subscription.channel === home?.channel;
    const skipped = skipReason(subscription, isHome, nowMs);
    if (skipped) route.skipped.push(skipped);
    else route.deliveries.push({ channel: subscription.channel, mode: subscription.mode, source: 'subscription', home: isHome });
  }
  if (home && !decided.has(home.channel)) route.deliveries.push({ channel: home.channel, mode: 'full', source: home.source, home: true });
  return route;
}

/** Why a subscribed channel gets nothing this time; the home channel is never skipped as broken (its failure is an operator's fix). */
function skipReason(subscription: Subscription, isHome: boolean, nowMs: number): SkippedChannel | undefined {
  const { channel, mutedUntilMs, broken } = subscription;
  if (mutedUntilMs !== undefined && mutedUntilMs > nowMs) return { channel, reason: 'muted', mutedUntilMs };
  if (broken && !isHome) return { channel, reason: 'broken', code: broken.code, sinceMs: broken.atMs };
  return undefined;
}

/** Slack's conversation ids: C… (public), G… (private, older), D… (direct); anything else is a name (`#digests`). */
export function isChannelId(channel: string): boolean {
  return /^[CGD][A-Z0-9]{2,}$/.test(channel);
}

/** A channel a digest may be routed to by configuration: a public (C…) or private (G…) channel's id, never a name or a DM. */
export function isHomeChannelId(channel: string): boolean {
  return /^[CG][A-Z0-9]{2,}$/.test(channel);
}

/** Where people find a channel's id, for the errors that refuse a name. */
export const CHANNEL_ID_HINT =
  'must be a Slack channel id (C… or G…), not a name: open the channel in Slack, click its name (channel details), ' +
  'and copy the Channel ID at the bottom of the About tab';
