/** The stage keys that reach the functions as variables: a new subscription's mode and the digest's noise minimums. */
import { describe, expect, it } from 'vitest';
import { readDigestConfig } from '../../functions/digest/runtime';
import { ENV } from '../../shared/contracts';
import { readSubscriptionDefaultMode } from '../../shared/slack-app/default-mode';
import { MINIMAL_DIGEST_ENV } from '../support/function-env';

const DIGEST_ENV = MINIMAL_DIGEST_ENV;

describe('SUBSCRIPTION_DEFAULT_MODE', () => {
  it('is `changes` when unset (issue 22), `full` when the stage says so, and refused otherwise naming the variable', () => {
    expect(readSubscriptionDefaultMode({})).toBe('changes');
    expect(readSubscriptionDefaultMode({ [ENV.subscriptionDefaultMode]: 'full' })).toBe('full');
    expect(() => readSubscriptionDefaultMode({ [ENV.subscriptionDefaultMode]: 'quiet' })).toThrow(
      /SUBSCRIPTION_DEFAULT_MODE must be "changes" or "full"/,
    );
    expect(readDigestConfig(DIGEST_ENV).subscriptionDefaultMode).toBe('changes');
  });
});

describe('NOISE_MINIMUMS', () => {
  it('is read once at cold start with the digest’s own parser; unset is the defaults', () => {
    expect(readDigestConfig(DIGEST_ENV).noiseMinimums).toEqual({});
    expect(readDigestConfig({ ...DIGEST_ENV, [ENV.noiseMinimums]: '{"Mentions":25,"Average position":0.2}' }).noiseMinimums).toEqual({
      Mentions: 25,
      'Average position': 0.2,
    });
    expect(() => readDigestConfig({ ...DIGEST_ENV, [ENV.noiseMinimums]: '{"Mentions":-1}' })).toThrow(
      /NOISE_MINIMUMS "Mentions" must be a number/,
    );
    expect(() => readDigestConfig({ ...DIGEST_ENV, [ENV.noiseMinimums]: 'not json' })).toThrow(/NOISE_MINIMUMS must be a JSON object/);
  });
});
