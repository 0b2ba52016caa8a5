/**
 * What the rehearsal creates from the template beyond plain values: secrets CloudFormation generates
 * (GenerateSecretString: the action-signing key), and the Slack workspace the template's Slack
 * function serves, which the rehearsal's local Slack plays.
 */
import { describe, expect, it } from 'vitest';
import { generateSecretString } from '../../local/rehearse/resources';
import { slackIdentityOf } from '../../local/rehearse/rehearsed-stack';
import type { CfnTemplate } from '../../local/rehearse/assembly';
import { devConfig, synthApp } from '../infra/helpers';

describe('generateSecretString', () => {
  it('follows the template’s properties: 64 letters and digits for the action-signing key, new each time', () => {
    const props = { PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false };
    const [a, b] = [generateSecretString(props), generateSecretString(props)];
    expect(a).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(a).not.toBe(b);
  });

  it('uses Secrets Manager’s defaults (32 characters, punctuation included) and honours exclusions', () => {
    expect(generateSecretString({})).toHaveLength(32);
    const digits = generateSecretString({
      ExcludeLowercase: true,
      ExcludeUppercase: true,
      ExcludePunctuation: true,
      ExcludeCharacters: '0',
    });
    expect(digits).toMatch(/^[1-9]{32}$/);
    expect(() =>
      generateSecretString({ ExcludeLowercase: true, ExcludeUppercase: true, ExcludeNumbers: true, ExcludePunctuation: true }),
    ).toThrow(/excludes every character/);
  });

  it('puts the value under GenerateStringKey of SecretStringTemplate', () => {
    const value = JSON.parse(generateSecretString({ SecretStringTemplate: '{"user":"bridge"}', GenerateStringKey: 'password' })) as Record<
      string,
      string
    >;
    expect(value['user']).toBe('bridge');
    expect(value['password']).toHaveLength(32);
  });
});

describe('slackIdentityOf', () => {
  it('reads the workspace, app and client id config/dev.json gives the Slack function (what the local Slack then sends and serves)', () => {
    const template = synthApp({ slackClientId: devConfig()['slackClientId'] }).template.toJSON() as CfnTemplate;
    expect(slackIdentityOf(template)).toEqual({
      teamId: 'T0DEV00001',
      enterpriseId: undefined,
      appId: 'A0DEV00001',
      clientId: '1000.2000',
    });
  });

  it('takes the first of several workspaces, and the org; no client id without "Add to Slack"', () => {
    const template = synthApp({
      slackTeamIds: ['T0AAA', 'T0BBB'],
      slackEnterpriseId: 'E0CCC',
      slackAppId: 'A0DDD',
    }).template.toJSON() as CfnTemplate;
    expect(slackIdentityOf(template)).toEqual({ teamId: 'T0AAA', enterpriseId: 'E0CCC', appId: 'A0DDD', clientId: undefined });
  });
});
