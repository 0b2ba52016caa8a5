/**
 * Stage files: config/dev.json as committed, the example that must not deploy, and errors that
 * name the key and the file.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app';
import { ConfigError } from '../../shared/config-env';
import { StageFileErrors } from '../../infra/config-fields';
import { CONFIG_DIR, loadStageConfig, parseStageConfig, slackAccessJson, type BridgeConfig } from '../../infra/config';
import { parseSlackAccessPolicy } from '../../shared/slack-app/policy';
import { maxDigestBatchSize } from '../../infra/digest-budget';
import { configDir, devConfig } from './helpers';

const FILE = 'config/test.json';
const PROD_BASE = {
  readApiBaseUrl: 'https://api.visibility.example.com',
  slackDefaultChannel: 'C0PROD0001',
  alarmEmail: 'ops@example.com',
};
const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const SLACK_IDS = { slackTeamIds: ['T0123ABCD'], slackAppId: 'A0123ABCD' };
const read = (values: Record<string, unknown>): BridgeConfig => parseStageConfig('test', values, FILE);

/** The error `run` throws (the test fails when it throws none). */
function caught(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

/** Asserts that reading throws a ConfigError for `key` naming the file (and returns it). */
function configErrorFor(key: string, values: Record<string, unknown>): ConfigError {
  let caught: unknown;
  try {
    read(values);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const error = caught as ConfigError;
  expect(error.variable).toBe(key);
  expect(error.message).toContain(`"${key}"`);
  expect(error.message).toContain(FILE);
  return error;
}

describe('committed stage files', () => {
  it('config/dev.json is a development stage with the documented defaults', () => {
    expect(loadStageConfig('dev')).toEqual({
      stage: 'dev',
      source: expect.stringMatching(/config\/dev\.json$/) as unknown,
      development: true,
      readApiBaseUrl: 'https://api.visibility.example.com',
      slackDefaultChannel: 'C0DEV00001',
      projectChannels: {},
      visibilityRange: '7d',
      gapsPageSize: 50,
      dashboardUrlTemplate: undefined,
      digestMode: 'full',
      chartsEnabled: true,
      subscriptionDefaultMode: 'changes',
      noiseMinimums: {},
      timeZone: 'UTC',
      digestBatchSize: 10,
      digestBatchWindowSeconds: 5,
      digestMaxConcurrency: 2,
      maxReceiveCount: 5,
      alarmEmail: undefined,
      alarmTopicArn: undefined,
      silenceAlarmHours: 26,
      signatureRejectedAlarmThreshold: 10,
      undeliveredDigestHours: 6,
      queueAgeAlarmMinutes: 30,
      api5xxRatePercent: 5,
      api5xxMinCount: 3,
      dedupRetentionDays: 3,
      tableRemovalPolicy: 'destroy',
      tableDeletionProtection: false,
      readApiKeySecretArn: undefined,
      slackTokenSecretArn: undefined,
      signingSecretsSecretArn: undefined,
      logRetentionDays: 14,
      logLevel: 'DEBUG',
      apiThrottleRateLimit: 500,
      apiThrottleBurstLimit: 1000,
      clientRateLimitEnabled: false,
      clientRateLimitPerFiveMinutes: 300,
      slackTeamIds: ['T0DEV00001'],
      slackEnterpriseId: undefined,
      slackSigningSecretArn: undefined,
      slackAppId: 'A0DEV00001',
      slackClientId: '1000.2000',
      slackClientSecretArn: undefined,
      slackPostRecovery: 'history',
      slackAccess: { changes: { kind: 'everyone' }, changeChannels: {} },
      slackThrottleRateLimit: 50,
      slackThrottleBurstLimit: 100,
      customDomain: undefined,
    });
  });

  it('config/example.json cannot be deployed: one read names all four of its placeholders', () => {
    const error = caught(() => loadStageConfig('example'));
    expect(error).toBeInstanceOf(StageFileErrors);
    expect((error as StageFileErrors).errors.map((e) => e.variable)).toEqual([
      'readApiBaseUrl',
      'slackDefaultChannel',
      'projectChannels',
      'alarmEmail',
    ]);
    expect(error.message).toMatch(
      /^config\/example\.json: 4 keys to fix, each in config\/example\.json:\n {2}"readApiBaseUrl" still holds the placeholder/,
    );
  });

  it('a fresh copy of config/example.json stops the app once, naming its four placeholders', () => {
    const example = JSON.parse(readFileSync(join(CONFIG_DIR, 'example.json'), 'utf8')) as Record<string, unknown>;
    const dir = configDir({ fresh: example });
    const error = caught(() => buildApp({ context: { stage: 'fresh' } }, { configDir: dir }));
    for (const key of ['readApiBaseUrl', 'slackDefaultChannel', 'projectChannels', 'alarmEmail'])
      expect(error.message).toContain(`"${key}"`);
    expect(error.message).toContain('4 keys to fix');
  });

  it('reads subscriptionDefaultMode and noiseMinimums as given', () => {
    const minimums = { Mentions: 25, 'Average position': 0.2 };
    expect(read({ ...PROD_BASE, subscriptionDefaultMode: 'full', noiseMinimums: minimums })).toMatchObject({
      subscriptionDefaultMode: 'full',
      noiseMinimums: minimums,
    });
  });

  it('a production stage with an alarm address passes', () => {
    expect(read(PROD_BASE)).toMatchObject({
      development: false,
      alarmEmail: 'ops@example.com',
      tableRemovalPolicy: 'retain',
      tableDeletionProtection: true,
    });
  });
});

describe('the stage', () => {
  it('is required: no default in cdk.json', () => {
    expect(() => loadStageConfig(undefined)).toThrow(/"stage" is required: pass -c stage=<name>.*stages: dev/);
  });

  it('must have a file, named in the error', () => {
    expect(() => loadStageConfig('prod', configDir({ dev: devConfig() }))).toThrow(
      /^the command line: "stage" is "prod", a stage without a file: create .*prod\.json \(copy config\/example\.json\), or pass a stage that has one \(dev\)/,
    );
  });

  it('must be a lower-case name', () => {
    expect(() => loadStageConfig('Prod_1', CONFIG_DIR)).toThrow(/"stage" must be lower-case letters/);
  });
});

describe('errors name the key and the file', () => {
  it.each([
    ['readApiBaseUrl', { ...PROD_BASE, readApiBaseUrl: undefined }, 'is missing'],
    ['readApiBaseUrl', { ...PROD_BASE, readApiBaseUrl: 'https://api.example-visibility.invalid' }, 'placeholder'],
    ['readApiBaseUrl', { ...PROD_BASE, readApiBaseUrl: 'https://<host>' }, 'placeholder'],
    ['readApiBaseUrl', { ...PROD_BASE, readApiBaseUrl: 'http://api.example.test' }, 'https'],
    ['readApiBaseUrl', { ...PROD_BASE, readApiBaseUrl: 'not a url' }, 'absolute https URL'],
    ['slackDefaultChannel', { ...PROD_BASE, slackDefaultChannel: ' ' }, 'must not be empty'],
    ['slackDefaultChannel', { ...PROD_BASE, slackDefaultChannel: 'TODO' }, 'placeholder'],
    ['alarmEmail', { ...PROD_BASE, alarmEmail: '' }, 'needs somewhere to send its alarms'],
    ['alarmEmail', { ...PROD_BASE, alarmEmail: 'ops@alerts.invalid' }, 'placeholder'],
    ['alarmEmail', { ...PROD_BASE, alarmEmail: 'ops' }, 'e-mail address'],
    ['alarmEmail', { ...PROD_BASE, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:t' }, 'cannot be combined'],
    ['alarmTopicArn', { ...PROD_BASE, alarmEmail: '', alarmTopicArn: 'arn:aws:sqs:eu-west-1:123456789012:q' }, 'SNS topic ARN'],
    ['alarmEmial', { ...PROD_BASE, alarmEmial: 'ops@example.com' }, 'not a known key'],
    ['digestBatchSize', { ...PROD_BASE, digestBatchSize: '10' }, 'whole number'],
    ['digestBatchSize', { ...PROD_BASE, digestBatchSize: 2.5 }, 'whole number'],
    ['digestBatchSize', { ...PROD_BASE, digestBatchSize: maxDigestBatchSize() + 1 }, "fit Lambda's 900 s"],
    ['gapsPageSize', { ...PROD_BASE, gapsPageSize: 0 }, 'between 1 and 1000'],
    ['dashboardUrlTemplate', { ...PROD_BASE, dashboardUrlTemplate: 'http://dash.example.com/{project_id}' }, 'https://'],
    ['digestMode', { ...PROD_BASE, digestMode: 'quiet' }, '"full", "changes"'],
    ['subscriptionDefaultMode', { ...PROD_BASE, subscriptionDefaultMode: 'quiet' }, '"full", "changes"'],
    ['noiseMinimums', { ...PROD_BASE, noiseMinimums: [1] }, 'object of label → minimum change'],
    ['noiseMinimums', { ...PROD_BASE, noiseMinimums: { Mentions: -1 } }, '"Mentions" must be a number ≥ 0'],
    ['noiseMinimums', { ...PROD_BASE, noiseMinimums: { Mentions: '25' } }, '"Mentions" must be a number ≥ 0'],
    ['noiseMinimums', { ...PROD_BASE, noiseMinimums: { ' ': 1 } }, 'empty label'],
    [
      'noiseMinimums',
      { ...PROD_BASE, noiseMinimums: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`Custom metric ${i}`, 1])) },
      'too large',
    ],
    ['digestMaxConcurrency', { ...PROD_BASE, digestMaxConcurrency: 1 }, 'between 2 and 1000'],
    ['tableDeletionProtection', { ...PROD_BASE, tableDeletionProtection: 'false' }, 'true or false'],
    ['tableRemovalPolicy', { ...PROD_BASE, tableRemovalPolicy: 'snapshot' }, '"retain", "destroy"'],
    ['projectChannels', { ...PROD_BASE, projectChannels: ['#a'] }, 'JSON object'],
    ['projectChannels', { ...PROD_BASE, projectChannels: { p: 5 } }, '"p" maps to 5'],
    ['projectChannels', { ...PROD_BASE, projectChannels: { '<project id>': 'C0123ABCD' } }, 'placeholder project id'],
    ['logRetentionDays', { ...PROD_BASE, logRetentionDays: 31 }, 'CloudWatch Logs values'],
    ['logLevel', { ...PROD_BASE, logLevel: 'verbose' }, '"DEBUG"'],
    ['undeliveredDigestHours', { ...PROD_BASE, undeliveredDigestHours: 100 }, 'between 1 and 84'],
    ['clientRateLimitEnabled', { ...PROD_BASE, clientRateLimitEnabled: 'yes' }, 'true or false'],
    ['clientRateLimitPerFiveMinutes', { ...PROD_BASE, clientRateLimitPerFiveMinutes: 5 }, 'between 10 and'],
    [
      'signingSecretsSecretArn',
      { ...PROD_BASE, signingSecretsSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:signing' },
      'complete ARN',
    ],
    ['digestBatchWindowSeconds', { ...PROD_BASE, digestBatchSize: 20, digestBatchWindowSeconds: 0 }, 'at least 1'],
    ['slackTeamIds', { ...PROD_BASE, ...SLACK_IDS, slackTeamIds: 'T0123ABCD' }, 'JSON array'],
    ['slackTeamIds', { ...PROD_BASE, ...SLACK_IDS, slackTeamIds: ['acme'] }, 'not a workspace id'],
    ['slackTeamIds', { ...PROD_BASE, ...SLACK_IDS, slackTeamIds: ['<T… of your workspace>'] }, 'placeholder'],
    ['slackTeamIds', { ...PROD_BASE, slackAppId: 'A0123ABCD' }, 'must name the workspace'],
    ['slackAppId', { ...PROD_BASE, slackTeamIds: ['T0123ABCD'] }, 'must be set with "slackTeamIds"'],
    ['slackAppId', { ...PROD_BASE, ...SLACK_IDS, slackAppId: 'B0123ABCD' }, 'Slack app id'],
    ['slackEnterpriseId', { ...PROD_BASE, ...SLACK_IDS, slackEnterpriseId: 'T0123ABCD' }, 'Enterprise Grid'],
    ['slackThrottleBurstLimit', { ...PROD_BASE, slackThrottleBurstLimit: 0 }, 'between 1 and 5000'],
    ['slackThrottleRateLimit', { ...PROD_BASE, slackThrottleRateLimit: '50' }, 'must be a number'],
    ['customDomainCertificateArn', { ...PROD_BASE, customDomainName: 'bridge.example.com' }, 'must be set with "customDomainName"'],
    ['customDomainName', { ...PROD_BASE, customDomainCertificateArn: CERTIFICATE }, 'must be set with'],
    ['customDomainName', { ...PROD_BASE, customDomainName: 'Bridge.Example.com', customDomainCertificateArn: CERTIFICATE }, 'host name'],
    ['customDomainCertificateArn', { ...PROD_BASE, customDomainName: 'b.example.com', customDomainCertificateArn: 'cert' }, 'ACM'],
  ] as const)('%s: %j', (key, values, fragment) => {
    expect(configErrorFor(key, values).message).toContain(fragment);
  });

  describe('home channels are named by id: a name would key the same channel twice (two posts per run)', () => {
    it.each([
      ['slackDefaultChannel', { ...PROD_BASE, slackDefaultChannel: '#ai-visibility' }, '"#ai-visibility"'],
      ['slackDefaultChannel', { ...PROD_BASE, slackDefaultChannel: 'ai-visibility' }, '"ai-visibility"'],
      ['slackDefaultChannel', { ...PROD_BASE, slackDefaultChannel: 'D0123ABCD' }, '"D0123ABCD"'],
      ['slackDefaultChannel', { ...PROD_BASE, slackDefaultChannel: 'c0123abcd' }, '"c0123abcd"'],
      ['projectChannels.ridgeway', { ...PROD_BASE, projectChannels: { ridgeway: '#ridgeway' } }, '"#ridgeway"'],
    ] as const)('%s: %j is refused, with where to find the id', (key, values, shown) => {
      const { message } = configErrorFor(key, values);
      expect(message).toContain(`must be a Slack channel id (C… or G…), not a name`);
      expect(message).toContain('About tab');
      expect(message).toContain(shown);
      expect(message).toContain(`Fix "${key}" in ${FILE}`);
    });

    it('public (C…) and private (G…) channel ids pass', () => {
      expect(read({ ...PROD_BASE, slackDefaultChannel: 'G0123ABCD', projectChannels: { ridgeway: 'C0456EFGH' } })).toMatchObject({
        slackDefaultChannel: 'G0123ABCD',
        projectChannels: { ridgeway: 'C0456EFGH' },
      });
    });

    it('the synth stops on a name before any stack is built', () => {
      const dir = configDir({ named: { ...devConfig(), slackDefaultChannel: '#visibility-digests' } });
      expect(() => buildApp({ context: { stage: 'named' } }, { configDir: dir })).toThrow(
        /named\.json: "slackDefaultChannel" must be a Slack channel id/,
      );
    });
  });

  it('are all collected: every bad key and every unknown key in one error, each once, in the order read', () => {
    const error = caught(() =>
      read({
        ...PROD_BASE,
        alarmEmial: 'ops@example.com',
        gapsPageSize: 'x',
        logLevel: 'LOUD',
        slackDefaultChannel: 'TODO',
        timeZone: 'Mars',
      }),
    );
    expect(error).toBeInstanceOf(StageFileErrors);
    const { errors } = error as StageFileErrors;
    expect(errors.map((e) => e.variable)).toEqual(['alarmEmial', 'slackDefaultChannel', 'gapsPageSize', 'timeZone', 'logLevel']);
    expect(error.message.split('\n')).toEqual([
      `${FILE}: 5 keys to fix, each in ${FILE}:`,
      ...errors.map((e) => expect.stringMatching(new RegExp(`^ {2}"${e.variable}" `)) as unknown as string),
    ]);
  });

  it('one bad key alone is named as before', () => {
    expect(caught(() => read({ ...PROD_BASE, gapsPageSize: 'x' }))).not.toBeInstanceOf(StageFileErrors);
  });

  it('tell where to fix it', () => {
    expect(configErrorFor('gapsPageSize', { ...PROD_BASE, gapsPageSize: 'x' }).message).toMatch(/Fix "gapsPageSize" in config\/test\.json/);
  });

  it('stop the app before any stack is built', () => {
    const dir = configDir({ broken: { ...devConfig(), digestMaxConcurrency: 0 } });
    expect(() => buildApp({ context: { stage: 'broken' } }, { configDir: dir })).toThrow(/"digestMaxConcurrency"/);
  });
});

describe('Slack app keys', () => {
  it('may be unset on a production stage: the first deploy comes before the app exists', () => {
    expect(read(PROD_BASE)).toMatchObject({ slackTeamIds: [], slackAppId: undefined, slackEnterpriseId: undefined });
  });

  it('read the workspace, org and app ids and the custom domain', () => {
    const config = read({
      ...PROD_BASE,
      slackTeamIds: ['T0123ABCD', 'T0123ABCD', 'T0456EFGH'],
      slackEnterpriseId: 'E0123ABCD',
      slackAppId: 'A0123ABCD',
      customDomainName: 'bridge.example.com',
      customDomainCertificateArn: CERTIFICATE,
    });
    expect(config).toMatchObject({
      slackTeamIds: ['T0123ABCD', 'T0456EFGH'],
      slackEnterpriseId: 'E0123ABCD',
      slackAppId: 'A0123ABCD',
      customDomain: { name: 'bridge.example.com', certificateArn: CERTIFICATE },
    });
  });

  it('slackAccess is validated by the policy’s own parser, naming the key and the file', () => {
    expect(() => read({ ...PROD_BASE, slackAccess: { changes: { users: ['bob'] } } })).toThrow(
      /config\/test\.json: "slackAccess" .*not a Slack user id.*Fix "slackAccess" in config\/test\.json/,
    );
    expect(() => read({ ...PROD_BASE, slackAccess: { who: 'everyone' } })).toThrow(/"slackAccess" has an unknown key "who"/);
  });

  it('slackAccess goes to the functions in the stage file’s spelling, which reads back to the same policy', () => {
    for (const slackAccess of [
      undefined,
      { changes: 'everyone' },
      { changes: { users: ['U0123ABCD', 'W0123ABCD'] }, changeChannels: { proj_1: ['C0123ABCD'] } },
      { changes: { userGroup: 'S0614TZR7' } },
    ]) {
      const policy = read({ ...PROD_BASE, slackAccess }).slackAccess;
      expect(parseSlackAccessPolicy(JSON.parse(JSON.stringify(slackAccessJson(policy))), 'SLACK_ACCESS_POLICY', 'the variable')).toEqual(
        policy,
      );
    }
  });

  it('slackAccess and projectChannels must fit the functions’ environment together', () => {
    const channels = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`project_${i}`, ['C0123ABCD', 'C0456EFGH']]));
    expect(() => read({ ...PROD_BASE, slackAccess: { changeChannels: channels } })).toThrow(/"slackAccess" and "projectChannels" together/);
  });
});

describe('app entry (as run by `cdk synth`)', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const run = (context: Record<string, unknown>): ReturnType<typeof spawnSync> =>
    spawnSync(process.execPath, ['--import', 'tsx', 'infra/app.ts'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify(context) },
      timeout: 60_000,
    });

  it('prints the error and exits 1 without a stage', () => {
    const result = run({});
    expect(result.status).toBe(1);
    expect(String(result.stderr)).toContain('"stage" is required');
  });

  it('prints the error and exits 1 for the example stage', () => {
    const result = run({ stage: 'example' });
    expect(result.status).toBe(1);
    expect(String(result.stderr)).toContain('config/example.json: 4 keys to fix, each in config/example.json:\n  "readApiBaseUrl"');
  });
});
