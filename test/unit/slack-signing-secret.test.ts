/**
 * The Slack app's signing secret as Slack gives it (issue 19): the plain value from Basic Information
 * → App Credentials, or a JSON array of values while it is regenerated. Nothing else, and an error
 * shows the Slack example (never the webhook's, never the value).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseSlackSigningSecret } from '../../shared/config-env';
import { ENV } from '../../shared/contracts';
import { readSlackConfig } from '../../functions/slack/runtime';

const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const NAME = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:slack-signing';

function problemOf(raw: string): string {
  try {
    parseSlackSigningSecret(raw, NAME);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
}

describe('parseSlackSigningSecret', () => {
  it('takes the value as Slack shows it, trimmed (what the PutSlackSigningSecretCommand output puts)', () => {
    expect(parseSlackSigningSecret(SLACK_SECRET, NAME)).toEqual([SLACK_SECRET]);
    expect(parseSlackSigningSecret(`  ${SLACK_SECRET}\n`, NAME)).toEqual([SLACK_SECRET]);
  });

  it('takes a JSON array of values while the secret is regenerated', () => {
    expect(parseSlackSigningSecret(`["new0000secret", " ${SLACK_SECRET} "]\n`, NAME)).toEqual(['new0000secret', SLACK_SECRET]);
    expect(parseSlackSigningSecret(`["${SLACK_SECRET}", ""]`, NAME)).toEqual([SLACK_SECRET]);
  });

  // Values unlike anything in the message, so a leak would show.
  const A = 'zq81vv4477';
  const B = 'pp09ww3311';
  it.each([
    ['two values on two lines ("one per line" is not a format)', `${A}\n${B}`],
    ['a space inside', `${A} ${B}`],
    ['a quoted value', `"${A}"`],
    ['a value in single quotes from a shell line', `'${A}'`],
    ['a curly quote pasted with it', `\u201c${A}\u201d`],
    ['a JSON object', `{"${A}":"${B}"}`],
    ['an array with a line break inside a value', `["${A}\\n${B}"]`],
  ])('refuses %s, showing the Slack example and never the value', (_label, raw) => {
    const message = problemOf(raw);
    expect(message).toContain(`${NAME} must be the signing secret as Slack shows it (Basic Information → App Credentials)`);
    expect(message).toContain('["<new secret>", "<old secret>"] while it is regenerated');
    expect(message).not.toContain('whsec');
    expect(message).not.toContain(A);
    expect(message).not.toContain(B);
  });

  it.each([
    ['empty', '  \n', /is empty/],
    ['not JSON after [', '["abc"', /is not JSON/],
    ['an array of non-strings', '[1]', /only strings/],
    ['an empty array', '[]', /holds no signing secret/],
  ])('refuses %s, saying what to put', (_label, raw, problem) => {
    const message = problemOf(raw);
    expect(message).toMatch(problem);
    expect(message).toContain('as Slack shows it');
  });
});

describe('the Slack function’s local signing secret (SLACK_SIGNING_SECRET)', () => {
  const env = {
    [ENV.tableName]: 't',
    [ENV.commandsQueueUrl]: 'http://127.0.0.1:1/q',
    [ENV.actionSigningKey]: 'slack-signing-secret-unit-action-key-0123456789',
  };

  it('is read as Slack shows it, or as a JSON array', () => {
    expect(readSlackConfig({ ...env, [ENV.slackSigningSecret]: SLACK_SECRET }).signingSecret).toEqual({ value: SLACK_SECRET });
    expect(readSlackConfig({ ...env, [ENV.slackSigningSecret]: `["${SLACK_SECRET}"]` }).signingSecret).toEqual({
      value: `["${SLACK_SECRET}"]`,
    });
  });

  it('fails the cold start on a value that would verify nothing, naming the variable', () => {
    expect(() => readSlackConfig({ ...env, [ENV.slackSigningSecret]: 'abc\ndef' })).toThrow(
      `${ENV.slackSigningSecret} must be the signing secret as Slack shows it`,
    );
  });
});
