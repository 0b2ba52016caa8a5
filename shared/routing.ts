/**
 * Where a project's digest goes. Sources, in order:
 * 1. subscriptions (DynamoDB), each with its mode; a muted one is skipped with its reason;
 * 2. the configured `projectChannels[project]`, unless a subscription of that channel already
 *    decided (its settings win);
 * 3. the configured default channel, only when neither of the above names a channel.
 * One entry per channel: each is posted under its own claim (`post#<channel>#<event id>`).
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
}

export interface SkippedChannel {
  channel: string;
  reason: 'muted';
  mutedUntilMs: number;
}

export interface DigestRoute {
  deliveries: ChannelDelivery[];
  skipped: SkippedChannel[];
}

export function routeDigest(
  projectId: string,
  subscriptions: readonly Subscription[],
  fallback: FallbackRouting,
  nowMs: number,
): DigestRoute {
  const route: DigestRoute = { deliveries: [], skipped: [] };
  const decided = new Set<string>();
  for (const subscription of subscriptions) {
    if (subscription.projectId !== projectId || decided.has(subscription.channel)) continue;
    decided.add(subscription.channel);
    const muted = subscription.mutedUntilMs;
    if (muted !== undefined && muted > nowMs) route.skipped.push({ channel: subscription.channel, reason: 'muted', mutedUntilMs: muted });
    else route.deliveries.push({ channel: subscription.channel, mode: subscription.mode, source: 'subscription' });
  }
  const configured = fallback.projectChannels[projectId]?.trim();
  if (configured && !decided.has(configured)) {
    decided.add(configured);
    route.deliveries.push({ channel: configured, mode: 'full', source: 'config' });
  }
  const defaultChannel = fallback.defaultChannel.trim();
  if (decided.size === 0 && defaultChannel !== '') route.deliveries.push({ channel: defaultChannel, mode: 'full', source: 'default' });
  return route;
}

/** Slack's conversation ids: C… (public), G… (private, older), D… (direct); anything else is a name (`#digests`). */
export function isChannelId(channel: string): boolean {
  return /^[CGD][A-Z0-9]{2,}$/.test(channel);
}
