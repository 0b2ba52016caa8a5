/**
 * CDK app: reads and validates context, builds the stack and registers the cdk-nag AwsSolutions
 * checks (they run at synth; an unacknowledged finding fails the synth).
 *
 *   CDK_DISABLE_CLI_TELEMETRY=true npx cdk synth --no-notices --quiet [-c stage=dev ...]
 */
import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BridgeStack, stackNameFor } from './bridge-stack';
import { ContextError, readBridgeConfig } from './config';

export interface BuiltApp {
  readonly app: App;
  readonly stack: BridgeStack;
}

/** Builds the app; throws ContextError naming the key when the context is invalid. */
export function buildApp(props: AppProps = {}): BuiltApp {
  const app = new App(props);
  const config = readBridgeConfig((key) => app.node.tryGetContext(key));
  const stack = new BridgeStack(app, stackNameFor(config.stage), { config });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}

function main(): void {
  try {
    buildApp().app.synth();
  } catch (error) {
    if (error instanceof ContextError) {
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
