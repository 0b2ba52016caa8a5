/**
 * cdk-nag AwsSolutions: the synth (with CDK's built-in CloudFormation validation, as `cdk synth`
 * runs it) reports nothing, and every acknowledgement is a known one with a specific reason.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app';
import { configDir, devConfig, synthApp } from './helpers';

/** The one wildcard: GetSecretValue on the stage's connection secrets, by their name prefix (ingest and digest). */
const CONNECTION_SECRETS_IAM5 =
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:visibility-bridge/dev/connections/*]';

const outdir = mkdtempSync(join(tmpdir(), 'bridge-nag-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

// synthApp synthesizes: the AwsSolutions plugin registered by buildApp runs here and would throw
// on any unacknowledged finding.
const { app } = synthApp({}, { cfnValidation: true, outdir });

/** Acknowledged rule ids by construct path, read from the metadata Validations.acknowledge writes. */
function acknowledgements(root: IConstruct): { path: string; id: string; reason: string }[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

interface ValidationReport {
  pluginReports: { pluginName: string; violations: unknown[] }[];
}

describe('cdk-nag AwsSolutions', () => {
  it('the synth’s validation report has no findings (cdk-nag or CloudFormation schema)', () => {
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as ValidationReport;
    expect(report.pluginReports.flatMap((plugin) => plugin.violations)).toEqual([]);
  });

  it('the AwsSolutions pack finds no unacknowledged error or warning', () => {
    const report = new AwsSolutionsChecks().validateScope(app);
    expect(report.violations).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('acknowledges exactly the expected findings, each with a specific reason', () => {
    const acks = acknowledgements(app);
    expect(acks.map(({ path, id }) => `${id} @ ${path}`).sort()).toEqual([
      'AwsSolutions-APIG4 @ VisibilitySlackBridge-dev/Webhook/Api/POST--slack--commands',
      'AwsSolutions-APIG4 @ VisibilitySlackBridge-dev/Webhook/Api/POST--slack--events',
      'AwsSolutions-APIG4 @ VisibilitySlackBridge-dev/Webhook/Api/POST--slack--interactions',
      'AwsSolutions-APIG4 @ VisibilitySlackBridge-dev/Webhook/Api/POST--webhook',
      'AwsSolutions-APIG4 @ VisibilitySlackBridge-dev/Webhook/Api/POST--webhook--{connection}',
      `${CONNECTION_SECRETS_IAM5} @ VisibilitySlackBridge-dev/DigestWorker/Digest/Role`,
      `${CONNECTION_SECRETS_IAM5} @ VisibilitySlackBridge-dev/Webhook/Ingest/Role`,
      'AwsSolutions-SMG4 @ VisibilitySlackBridge-dev/Secrets/ActionSigningKey',
      'AwsSolutions-SMG4 @ VisibilitySlackBridge-dev/Secrets/ReadApiKey/Secret',
      'AwsSolutions-SMG4 @ VisibilitySlackBridge-dev/Secrets/SigningSecrets/Secret',
      'AwsSolutions-SMG4 @ VisibilitySlackBridge-dev/Secrets/SlackToken/Secret',
      'AwsSolutions-SMG4 @ VisibilitySlackBridge-dev/SlackApp/SigningSecret/Secret',
    ]);
    for (const { reason } of acks) expect(reason.length).toBeGreaterThan(80);
  });

  it('a stack with imported secrets and topic passes with only the generated key’s secret acknowledgement', () => {
    const imported = synthApp({
      readApiKeySecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:a-AbC123',
      slackTokenSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:b-AbC123',
      signingSecretsSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:c-AbC123',
      slackSigningSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:d-AbC123',
      alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:alarms',
    }).app;
    expect(new AwsSolutionsChecks().validateScope(imported).violations).toEqual([]);
    expect(
      acknowledgements(imported)
        .map((ack) => ack.id)
        .sort(),
    ).toEqual([...Array<string>(5).fill('AwsSolutions-APIG4'), ...Array<string>(2).fill(CONNECTION_SECRETS_IAM5), 'AwsSolutions-SMG4']);
  });

  it('is wired into the synth: an unacknowledged finding fails it', () => {
    const { app: failing, stack } = buildApp(
      {
        context: { stage: 'dev', 'aws:cdk:bundling-stacks': [] },
        builtinCloudFormationValidation: false,
        outdir: mkdtempSync(join(outdir, 'failing-')),
      },
      { configDir: configDir({ dev: devConfig() }) },
    );
    new Secret(stack, 'UnrotatedSecret');
    expect(() => failing.synth()).toThrow(/AwsSolutions-SMG4/);
  });
});
