/** "Add to Slack" resources (infra/slack-oauth.ts): only with `slackClientId`; its routes, client secret, role and outputs; the ledger's grant. */
import { describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { ENV, HTTP_PATHS, SERVICES, STACK_OUTPUTS as OUTPUTS, TABLE } from '../../shared/contracts';
import { actionsOf, leadingKeys, logicalId, roleStatements, statementBySid, synthApp } from './helpers';

const plain = synthApp().template;
const { template } = synthApp({ slackClientId: '1234567890.9876543210', slackPostRecovery: 'ledger' });
const routeKeys = (t: typeof template): string[] =>
  Object.values(t.findResources('AWS::ApiGatewayV2::Route')).map((r) =>
    String((r as { Properties: { RouteKey: string } }).Properties.RouteKey),
  );

describe('Add to Slack', () => {
  it('is absent from a single-workspace stack, whose digest keeps reading history', () => {
    expect(routeKeys(plain).filter((k) => k.startsWith('GET'))).toEqual([]);
    expect(Object.keys(plain.findResources('AWS::Lambda::Function')).filter((id) => id.startsWith('SlackOAuth'))).toEqual([]);
    const digest = roleStatements(plain, 'DigestWorkerDigestRole');
    expect(digest.map((s) => s.Sid)).not.toContain('PostedLedger');
    const plainSlack = roleStatements(plain, 'SlackAppSlackRole').map((s) => s.Sid);
    for (const sid of [
      'PostedLedgerRecord',
      'TeamChannels',
      'UninstallDeletesInstallation',
      'GateReadsInstallations',
      'UninstallPurgesChannels',
      'UninstallPurgesSchedules',
    ])
      expect(plainSlack).not.toContain(sid);
  });

  it('serves GET /slack/install and GET /slack/oauth_redirect from its own function with the client secret and redirect URL', () => {
    expect(routeKeys(template)).toEqual(expect.arrayContaining([`GET ${HTTP_PATHS.slackInstall}`, `GET ${HTTP_PATHS.slackOAuthRedirect}`]));
    const secretId = logicalId(template, 'AWS::SecretsManager::Secret', 'SlackOAuthClientSecret');
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          [ENV.powertoolsServiceName]: SERVICES.slackOAuth,
          [ENV.slackClientId]: '1234567890.9876543210',
          [ENV.slackClientSecretSecretArn]: { Ref: secretId },
          [ENV.slackOAuthRedirectUrl]: Match.anyValue(),
          [ENV.slackPostRecovery]: 'ledger',
        }),
      },
    });
    template.hasOutput(OUTPUTS.slackInstallUrl, {});
    template.hasOutput(OUTPUTS.putSlackClientSecretCommand, {});
    template.hasOutput(OUTPUTS.slackClientSecretSecretArn, { Value: { Ref: secretId } });
  });

  it('may only read and write installations and read its client secret', () => {
    const statements = roleStatements(template, 'SlackOAuthRole');
    const installations = statementBySid(statements, 'Installations');
    expect(actionsOf(installations).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
    expect(JSON.stringify(installations.Condition)).toContain(`${TABLE.prefixes.installation}*`);
    expect(actionsOf(statementBySid(statements, 'ReadSlackClientSecret'))).toEqual(['secretsmanager:GetSecretValue']);
  });

  it("the digest may read installations, refresh their tokens under the lease with the client secret, and is told the app's client", () => {
    const digest = roleStatements(template, 'DigestWorkerDigestRole');
    const keys = (prefix: string) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${prefix}*`] } });
    for (const [sid, prefix] of [
      ['InstallationTokens', TABLE.prefixes.installation],
      ['InstallationTokenLease', TABLE.prefixes.installationLease],
    ] as const) {
      const statement = statementBySid(digest, sid);
      expect([...actionsOf(statement)].sort()).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
      expect(statement.Condition).toEqual(keys(prefix));
    }
    expect(actionsOf(statementBySid(digest, 'ReadSlackClientSecret'))).toEqual(['secretsmanager:GetSecretValue']);
    const secretId = logicalId(template, 'AWS::SecretsManager::Secret', 'SlackOAuthClientSecret');
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          [ENV.powertoolsServiceName]: SERVICES.digest,
          [ENV.slackClientId]: '1234567890.9876543210',
          [ENV.slackClientSecretSecretArn]: { Ref: secretId },
        }),
      },
    });
    expect(roleStatements(plain, 'DigestWorkerDigestRole').map((s) => s.Sid)).not.toContain('InstallationTokens');
  });

  it("with the ledger, the digest writes and reads posted# items (the stack's and each connection's) and is told to use it", () => {
    const ledger = statementBySid(roleStatements(template, 'DigestWorkerDigestRole'), 'PostedLedger');
    expect(actionsOf(ledger).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(ledger.Condition).toEqual(leadingKeys([TABLE.prefixes.posted], [TABLE.prefixes.posted]));
  });

  it('with the ledger, the Slack function may only update posted# items (message_metadata_posted) and is told to', () => {
    const record = statementBySid(roleStatements(template, 'SlackAppSlackRole'), 'PostedLedgerRecord');
    expect(actionsOf(record)).toEqual(['dynamodb:UpdateItem']);
    expect(record.Condition).toEqual(leadingKeys([TABLE.prefixes.posted], [TABLE.prefixes.posted]));
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ [ENV.powertoolsServiceName]: SERVICES.slack, [ENV.slackPostRecovery]: 'ledger' }) },
    });
  });

  it("the Slack function notes workspaces' channels and may purge them on uninstall: deletes and removals by key prefix only", () => {
    const slack = roleStatements(template, 'SlackAppSlackRole');
    const { prefixes } = TABLE;
    // Every tenant's items of a channel are purged (`t#<connection id>#chan#…`); its window and schedule are the channel's.
    const expected: [string, string[], ReturnType<typeof leadingKeys>][] = [
      ['TeamChannels', ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'], leadingKeys([prefixes.team])],
      ['UninstallDeletesInstallation', ['dynamodb:DeleteItem'], leadingKeys([prefixes.installation])],
      ['GateReadsInstallations', ['dynamodb:GetItem'], leadingKeys([prefixes.installation])],
      [
        'UninstallPurgesChannels',
        ['dynamodb:DeleteItem'],
        leadingKeys(
          [prefixes.subscriptionsOfChannel, prefixes.audit, prefixes.quiet, prefixes.held],
          [prefixes.subscriptionsOfChannel, prefixes.audit, prefixes.held],
        ),
      ],
      ['UninstallPurgesSchedules', ['dynamodb:UpdateItem'], leadingKeys([prefixes.held, prefixes.weeklySettings], [prefixes.held])],
    ];
    for (const [sid, actions, condition] of expected) {
      const statement = statementBySid(slack, sid);
      expect([...actionsOf(statement)].sort()).toEqual(actions);
      expect(statement.Condition).toEqual(condition);
    }
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ [ENV.powertoolsServiceName]: SERVICES.slack, [ENV.slackClientId]: '1234567890.9876543210' }),
      },
    });
  });
});
