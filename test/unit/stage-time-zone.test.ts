/** The stage time zone as the functions read it at cold start. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../shared/config-env';
import { ENV } from '../../shared/contracts';
import { DEFAULT_TIME_ZONE, readStageTimeZone } from '../../shared/weekly/config';

describe('readStageTimeZone', () => {
  afterEach(() => vi.restoreAllMocks());

  it('reads the default zone, unset or set, without asking Intl (ICU stays out of the cold start)', () => {
    const intl = vi.spyOn(Intl, 'DateTimeFormat');
    expect(readStageTimeZone({})).toBe(DEFAULT_TIME_ZONE);
    expect(readStageTimeZone({ [ENV.timeZone]: 'UTC' })).toBe('UTC');
    expect(intl).not.toHaveBeenCalled();
  });

  it('checks any other zone and returns it as Intl spells it', () => {
    expect(readStageTimeZone({ [ENV.timeZone]: 'europe/berlin' })).toBe('Europe/Berlin');
    expect(readStageTimeZone({ [ENV.timeZone]: 'utc' })).toBe('UTC');
    expect(() => readStageTimeZone({ [ENV.timeZone]: 'Mars/Olympus' })).toThrow(ConfigError);
    expect(() => readStageTimeZone({ [ENV.timeZone]: 'Mars/Olympus' })).toThrow(ENV.timeZone);
  });
});
