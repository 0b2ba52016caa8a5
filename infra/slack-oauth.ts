/**
 * "Add to Slack" (stage key `slackClientId`): the function behind GET /slack/install and GET
 * /slack/oauth_redirect on the webhook's HTTP API, the app's client secret, and a role that may only
 * write and read installations (`inst#` items) and read that secret. Absent without `slackClientId`:
 * a single-workspace stack is unchanged.
 */
import { Validations } from 'aws-cdk-lib';
import { HttpMethod, PayloadFormatVersion, type HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { DIGEST_DEFAULTS, ENV, HTTP_PATHS, SERVICES, STACK_OUTPUTS, TABLE } from '../shared/contracts';
import { BridgeFunction } from './bridge-function';
import type { BridgeConfig } from './config';
import { BridgeSecret } from './secrets';
import { Store } from './store';

export interface SlackOAuthProps {
  readonly config: BridgeConfig;
  readonly clientId: string;
  readonly api: HttpApi;
  readonly table: Table;
  /** Where browsers reach the API (the redirect URL Slack sends them back to is under it). */
  readonly publicBaseUrl: string;
}

export class SlackOAuth extends Construct {
  readonly function: BridgeFunction;
  readonly clientSecret: BridgeSecret;
  private readonly publicBaseUrl: string;
  private readonly clientId: string;

  constructor(scope: Construct, id: string, props: SlackOAuthProps) {
    super(scope, id);
    this.publicBaseUrl = props.publicBaseUrl;
    this.clientId = props.clientId;
    this.clientSecret = new BridgeSecret(this, 'ClientSecret', {
      existingArn: props.config.slackClientSecretArn,
      description: `Client secret of the Slack app (Basic Information → App Credentials); exchanges "Add to Slack" codes and signs their state (${props.config.stage}).`,
      exampleValue: "'<Slack app client secret>'",
    });
    this.function = new BridgeFunction(this, 'SlackOAuth', {
      service: SERVICES.slackOAuth,
      config: props.config,
      description: '"Add to Slack": the install page and the OAuth v2 redirect that stores the installation',
      timeoutSeconds: 10,
      environment: {
        [ENV.tableName]: props.table.tableName,
        [ENV.slackClientId]: props.clientId,
        [ENV.slackClientSecretSecretArn]: this.clientSecret.secret.secretArn,
        [ENV.slackOAuthRedirectUrl]: `${props.publicBaseUrl}${HTTP_PATHS.slackOAuthRedirect}`,
        [ENV.secretsCacheSeconds]: String(DIGEST_DEFAULTS.secretsCacheSeconds),
        // The install asks for the scopes of the stage's recovery (no history scope with the ledger).
        [ENV.slackPostRecovery]: props.config.slackPostRecovery,
      },
    });
    this.function.allow(
      'Installations',
      ['dynamodb:GetItem', 'dynamodb:PutItem'],
      [props.table.tableArn],
      Store.leadingKeys(TABLE.prefixes.installation),
    );
    this.function.allow('ReadSlackClientSecret', ['secretsmanager:GetSecretValue'], [this.clientSecret.secret.secretArn]);
    const integration = new HttpLambdaIntegration('SlackOAuthIntegration', this.function.fn, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
    });
    for (const path of [HTTP_PATHS.slackInstall, HTTP_PATHS.slackOAuthRedirect]) {
      for (const route of props.api.addRoutes({ path, methods: [HttpMethod.GET], integration })) {
        Validations.of(route).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            'A browser opens these pages: the install page is public by design (it only starts an install), and the ' +
            "redirect accepts a code only with the state signed by the client secret and set in that browser's cookie.",
        });
      }
    }
  }

  /**
   * The digest function posts a linked connection's digests with its installation's bot token: it reads
   * installations, refreshes a rotating token under the installation's lease with the client secret,
   * and stores the new token (shared/installations/token-lease.ts).
   */
  grantTokenRefresh(fn: BridgeFunction, table: Table): void {
    const { prefixes } = TABLE;
    fn.allow('InstallationTokens', ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [table.tableArn], Store.leadingKeys(prefixes.installation));
    fn.allow(
      'InstallationTokenLease',
      ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      [table.tableArn],
      Store.leadingKeys(prefixes.installationLease),
    );
    fn.allow('ReadSlackClientSecret', ['secretsmanager:GetSecretValue'], [this.clientSecret.secret.secretArn]);
    fn.fn.addEnvironment(ENV.slackClientId, this.clientId);
    fn.fn.addEnvironment(ENV.slackClientSecretSecretArn, this.clientSecret.secret.secretArn);
  }

  outputs(): [string, string, string][] {
    return [
      [STACK_OUTPUTS.slackInstallUrl, `${this.publicBaseUrl}${HTTP_PATHS.slackInstall}`, 'The "Add to Slack" page a workspace admin opens'],
      [STACK_OUTPUTS.putSlackClientSecretCommand, this.clientSecret.putValueCommand(), "Puts the Slack app's client secret"],
      [STACK_OUTPUTS.slackClientSecretSecretArn, this.clientSecret.secret.secretArn, "The secret holding the Slack app's client secret"],
    ];
  }
}
