/**
 * Context parsing: cdk.json values, `-c` string overrides, and errors that name the bad key.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app';
import { ContextError, readBridgeConfig, type BridgeConfig } from '../../infra/config';
import { cdkJsonContext } from './helpers';

const base = cdkJsonContext();
const read = (overrides: Record<string, unknown> = {}): BridgeConfig => {
  const context: Record<string, unknown> = { ...base, ...overrides };
  return readBridgeConfig((key) => context[key]);
};

/** Asserts that reading with the overrides throws a ContextError for `key` (and returns it). */
function contextErrorFor(key: string, overrides: Record<string, unknown>): ContextError {
  let caught: unknown;
  try {
    read(overrides);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ContextError);
  const error = caught as ContextError;
  expect(error.key).toBe(key);
  expect(error.message).toContain(`"${key}"`);
  return error;
}

describe('cdk.json context', () => {
  it('parses to the shipped configuration', () => {
    expect(read()).toEqual({
      stage: 'prod',
      readApiBaseUrl: 'https://api.example-visibility.invalid',
      slackDefaultChannel: '#ai-visibility',
      projectChannels: {},
      visibilityRange: '7d',
      gapsPageSize: 50,
      digestBatchSize: 10,
      digestBatchWindowSeconds: 5,
      digestMaxConcurrency: 2,
      maxReceiveCount: 5,
      alarmEmail: undefined,
      alarmTopicArn: undefined,
      silenceAlarmHours: 26,
      signatureRejectedAlarmThreshold: 10,
      dedupRetentionDays: 3,
      tableRemovalPolicy: 'retain',
      tableDeletionProtection: true,
      readApiKeySecretArn: undefined,
      slackTokenSecretArn: undefined,
      signingSecretsSecretArn: undefined,
      logRetentionDays: 30,
      logLevel: 'INFO',
      apiThrottleRateLimit: 50,
      apiThrottleBurstLimit: 100,
    });
  });
});

describe('-c string overrides', () => {
  it('parse whole numbers, decimals, booleans and JSON objects', () => {
    const config = read({
      gapsPageSize: '25',
      apiThrottleRateLimit: '7.5',
      tableDeletionProtection: 'false',
      projectChannels: '{"a": " #x "}',
      readApiBaseUrl: 'https://api.example.test/',
    });
    expect(config).toMatchObject({
      gapsPageSize: 25,
      apiThrottleRateLimit: 7.5,
      tableDeletionProtection: false,
      projectChannels: { a: '#x' },
      readApiBaseUrl: 'https://api.example.test',
    });
  });

  it('treat an empty secret ARN as "create the secret"', () => {
    expect(read({ readApiKeySecretArn: '' }).readApiKeySecretArn).toBeUndefined();
  });
});

describe('errors name the key', () => {
  it.each([
    ['digestBatchSize', { digestBatchSize: 'ten' }, 'whole number'],
    ['digestBatchSize', { digestBatchSize: '1.5' }, 'whole number'],
    ['digestBatchSize', { digestBatchSize: 2.5 }, 'whole number'],
    ['digestBatchSize', { digestBatchSize: '' }, 'whole number'],
    ['gapsPageSize', { gapsPageSize: 0 }, 'between 1 and 1000'],
    ['digestMaxConcurrency', { digestMaxConcurrency: '1' }, 'between 2 and 1000'],
    ['maxReceiveCount', { maxReceiveCount: true }, 'whole number'],
    ['apiThrottleRateLimit', { apiThrottleRateLimit: 'fast' }, 'a number'],
    ['tableDeletionProtection', { tableDeletionProtection: 'yes' }, 'true or false'],
    ['tableRemovalPolicy', { tableRemovalPolicy: 'snapshot' }, '"retain", "destroy"'],
    ['projectChannels', { projectChannels: '{bad json' }, 'JSON object'],
    ['projectChannels', { projectChannels: '["#a"]' }, 'JSON object'],
    ['projectChannels', { projectChannels: { p: 5 } }, '"p" maps to 5'],
    ['readApiBaseUrl', { readApiBaseUrl: 'http://api.example.test' }, 'https'],
    ['readApiBaseUrl', { readApiBaseUrl: 'not a url' }, 'absolute https URL'],
    ['stage', { stage: 'prod_1' }, 'letters, digits and hyphens'],
    ['stage', { stage: undefined }, 'is not set'],
    ['slackDefaultChannel', { slackDefaultChannel: ' ' }, 'must not be empty'],
    ['logRetentionDays', { logRetentionDays: 31 }, 'CloudWatch Logs values'],
    ['logLevel', { logLevel: 'verbose' }, '"DEBUG"'],
    ['silenceAlarmHours', { silenceAlarmHours: 200 }, 'between 1 and 168'],
    ['signingSecretsSecretArn', { signingSecretsSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:signing' }, 'complete ARN'],
    ['readApiKeySecretArn', { readApiKeySecretArn: 'my-secret' }, 'complete ARN'],
    ['alarmTopicArn', { alarmTopicArn: 'arn:aws:sqs:eu-west-1:123456789012:q' }, 'SNS topic ARN'],
    ['alarmEmail', { alarmEmail: 'ops' }, 'e-mail address'],
    ['alarmEmail', { alarmEmail: 'ops@example.com', alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:t' }, 'cannot be combined'],
    ['digestBatchWindowSeconds', { digestBatchSize: 20, digestBatchWindowSeconds: 0 }, 'at least 1'],
  ] as const)('%s: %j', (key, overrides, fragment) => {
    expect(contextErrorFor(key, overrides).message).toContain(fragment);
  });

  it('tell how to fix it', () => {
    expect(contextErrorFor('gapsPageSize', { gapsPageSize: 'x' }).message).toMatch(/cdk\.json or pass -c gapsPageSize=<value>/);
  });

  it('stop the app before any stack is built', () => {
    expect(() => buildApp({ context: { ...base, digestMaxConcurrency: '0' } })).toThrow(/"digestMaxConcurrency"/);
  });
});

describe('app entry (as run by `cdk synth`)', () => {
  it('prints the context error and exits 1', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'infra/app.ts'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ ...base, tableRemovalPolicy: 'keep' }) },
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid CDK context "tableRemovalPolicy"');
  });
});
