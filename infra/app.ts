/**
 * CDK app: reads `config/<stage>.json` for `-c stage=<stage>`, builds the stack and registers the
 * cdk-nag AwsSolutions checks (they run at synth; an unacknowledged finding fails the synth).
 *
 *   CDK_DISABLE_CLI_TELEMETRY=true npx cdk synth --no-notices --quiet -c stage=dev
 */
import { App, Validations, type AppProps, type Environment } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BridgeStack, stackNameFor } from './bridge-stack';
import { ClientRateLimitStack, requireStageRegion } from './client-rate-limit';
import { ConfigError } from '../shared/config-env';
import { CONFIG_DIR, loadStageConfig, type BridgeConfig } from './config';

export interface BuiltApp {
  readonly app: App;
  readonly stack: BridgeStack;
  /** The us-east-1 web ACL stack, when clientRateLimitEnabled. */
  readonly edge: ClientRateLimitStack | undefined;
}

export interface BuildOptions {
  /** Where the stage files are (default: the repository's config/). */
  readonly configDir?: string | undefined;
  /** Account and region; default: those of the CLI's credentials (unset offline: an environment-agnostic stack). */
  readonly env?: Environment | undefined;
}

function defaultEnv(): Environment | undefined {
  const region = process.env['CDK_DEFAULT_REGION'];
  const account = process.env['CDK_DEFAULT_ACCOUNT'];
  return region === undefined ? undefined : { region, ...(account === undefined ? {} : { account }) };
}

/** Builds the app; throws ConfigError naming the key and the file when the configuration is invalid. */
export function buildApp(props: AppProps = {}, options: BuildOptions = {}): BuiltApp {
  const app = new App(props);
  const config = loadStageConfig(app.node.tryGetContext('stage'), options.configDir ?? CONFIG_DIR);
  const env = options.env ?? defaultEnv();
  const edge = edgeStack(app, config, env);
  const stack = new BridgeStack(app, stackNameFor(config.stage), { config, clientRateLimit: edge, ...(env ? { env } : {}) });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack, edge };
}

/** With clientRateLimitEnabled: the web ACL stack in us-east-1 (same account as the stage). */
function edgeStack(app: App, config: BridgeConfig, env: Environment | undefined): ClientRateLimitStack | undefined {
  if (!config.clientRateLimitEnabled) return undefined;
  const stageRegion = requireStageRegion(config, env);
  return new ClientRateLimitStack(app, { config, stageRegion, account: env?.account });
}

/**
 * CDK announces each asset it bundles on stderr (`Bundling asset <path>...`), with no option to stop
 * it: those lines are dropped, so a synth of a good stage file prints nothing.
 */
function quietBundling(): void {
  const write = process.stderr.write.bind(process.stderr) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  process.stderr.write = (chunk: string | Uint8Array, ...rest: unknown[]) =>
    typeof chunk === 'string' && /^Bundling asset \S+\.\.\.\n$/.test(chunk) ? true : write(chunk, ...rest);
}

function main(): void {
  quietBundling();
  try {
    buildApp().app.synth();
  } catch (error) {
    // Every stage-file error (infra/config-fields.ts's, or a shared validator's such as slackAccess's) names the key and file.
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

// Synthesize only when run as the CDK app (cdk.json: npx tsx infra/app.ts), not when imported by tests.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main();
}
