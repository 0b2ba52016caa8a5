/**
 * The mode a new subscription starts in (issue 22: `changes` by default, so a quiet run is one line),
 * read once at cold start by both composition roots that subscribe: the digest function (`subscribe`,
 * deferred) and the Slack function (a settings button on a digest routed by configuration).
 */
import { ConfigError, optionalString, type Env } from '../config-env';
import { DIGEST_MODES, ENV, SLACK_APP_DEFAULTS, type DigestMode } from '../contracts';

export function readSubscriptionDefaultMode(env: Env): DigestMode {
  const raw = optionalString(env, ENV.subscriptionDefaultMode) ?? SLACK_APP_DEFAULTS.subscriptionMode;
  const mode = DIGEST_MODES.find((m) => m === raw);
  if (mode === undefined)
    throw new ConfigError(ENV.subscriptionDefaultMode, `must be "changes" or "full" (stage key subscriptionDefaultMode), got "${raw}"`);
  return mode;
}
