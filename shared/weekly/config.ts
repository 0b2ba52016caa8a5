/** The stage's time zone as the functions read it (set by the stack from the stage key `timeZone`; default UTC). */
import { ConfigError, optionalString, type Env } from '../config-env';
import { ENV } from '../contracts';
import { canonicalZone, isTimeZone } from './schedule';

export const DEFAULT_TIME_ZONE = 'UTC';

/**
 * Read at every cold start: the default zone is returned as it is, because asking Intl about any zone
 * starts ICU (tens of ms of CPU). Any other zone is checked here, and the stack checks it at synth.
 */
export function readStageTimeZone(env: Env): string {
  const zone = optionalString(env, ENV.timeZone) ?? DEFAULT_TIME_ZONE;
  if (zone === DEFAULT_TIME_ZONE) return zone;
  if (!isTimeZone(zone))
    throw new ConfigError(
      ENV.timeZone,
      `must be an IANA time zone such as Europe/Berlin or UTC, got "${zone}" (the stage file's "timeZone")`,
    );
  return canonicalZone(zone);
}
