/**
 * Home channels reach the digest function by id only: a name in its environment (a function deployed
 * before synth refused names, or edited by hand) stops the cold start, naming the variable and the
 * stage-file key, rather than posting every run twice in a channel where someone changed a setting.
 */
import { describe, expect, it } from 'vitest';
import { readDigestConfig } from '../../functions/digest/runtime';
import { ConfigError } from '../../shared/config-env';
import { ENV } from '../../shared/contracts';
import { MINIMAL_DIGEST_ENV } from '../support/function-env';

function coldStartError(env: Record<string, string>): ConfigError {
  let caught: unknown;
  try {
    readDigestConfig({ ...MINIMAL_DIGEST_ENV, ...env });
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  return caught as ConfigError;
}

describe('home channels at cold start', () => {
  it('reads channel ids as given', () => {
    const config = readDigestConfig({
      ...MINIMAL_DIGEST_ENV,
      [ENV.slackDefaultChannel]: 'C0HOME',
      [ENV.slackProjectChannels]: '{"ridgeway":"G0PRIVATE"}',
    });
    expect(config).toMatchObject({ defaultChannel: 'C0HOME', projectChannels: { ridgeway: 'G0PRIVATE' } });
  });

  it.each(['#visibility-digests', 'visibility-digests', 'D0DIRECT'])('refuses %j as the default channel, naming both keys', (channel) => {
    const error = coldStartError({ [ENV.slackDefaultChannel]: channel });
    expect(error.variable).toBe(ENV.slackDefaultChannel);
    expect(error.message).toContain(`${ENV.slackDefaultChannel} holds "${channel}", which is not a channel id`);
    expect(error.message).toContain(`the stage file's "slackDefaultChannel" must be a Slack channel id (C… or G…)`);
    expect(error.message).toContain('About tab');
  });

  it("refuses a project's channel given by name, naming the project's key", () => {
    const error = coldStartError({ [ENV.slackProjectChannels]: '{"ridgeway":"C0OK","northwind":"#northwind"}' });
    expect(error.variable).toBe(ENV.slackProjectChannels);
    expect(error.message).toContain(`the stage file's "projectChannels.northwind" must be a Slack channel id`);
  });
});
