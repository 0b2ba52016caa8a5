/**
 * One bridge function: its own log group, a role that may write only to that log group (callers
 * add the function's statements), and the shared bundling and Powertools settings.
 *
 * Bundling: esbuild runs locally (never Docker), output CommonJS (`index.js`), minified with
 * source maps and the AWS SDK bundled, so the deployed code uses the SDK versions of the lockfile.
 * CommonJS because every dependency ships it and it needs no `createRequire` banner; handler code
 * must therefore not use top-level await or `import.meta`.
 */
import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Charset, LogLevel, NodejsFunction, OutputFormat, type BundlingOptions, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV, METRICS_NAMESPACE, type ServiceName } from '../shared/contracts';
import { CHART_ASSETS, CHART_ASSETS_DIR } from '../shared/charts/assets';
import type { BridgeConfig } from './config';

/** Repository root: entries, lockfile and tsconfig are resolved from here. */
const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Lambda runtime of both functions (the newest Node.js runtime in this aws-cdk-lib). */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

export interface BridgeFunctionProps {
  readonly service: ServiceName;
  readonly description: string;
  readonly timeoutSeconds: number;
  readonly config: BridgeConfig;
  /** The function's own variables; stage and Powertools settings are added. */
  readonly environment: Record<string, string>;
  /** The function may draw trend charts: vega bundled (see `functionEsbuildOptions`) and the chart assets shipped beside the handler. */
  readonly charts?: boolean | undefined;
}

export class BridgeFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: BridgeFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.config.logRetentionDays as RetentionDays });
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${props.service} function (${props.config.stage})`,
    });
    this.allow('WriteOwnLogs', ['logs:CreateLogStream', 'logs:PutLogEvents'], [this.logGroup.logGroupArn]);
    this.fn = new NodejsFunction(this, 'Function', {
      entry: `${PROJECT_ROOT}functions/${props.service}/handler.ts`,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      bundling: nodejsBundling(props.charts === true),
      description: props.description,
      memorySize: 512,
      timeout: Duration.seconds(props.timeoutSeconds),
      logGroup: this.logGroup,
      role: this.role,
      environment: { ...props.environment, ...commonEnvironment(props.service, props.config) },
    });
  }

  /** Adds one explicit statement (the grant* helpers add actions the functions do not use). */
  allow(sid: string, actions: string[], resources: string[], conditions?: Record<string, unknown>): void {
    this.role.addToPrincipalPolicy(new PolicyStatement({ sid, actions, resources, ...(conditions ? { conditions } : {}) }));
  }
}

/**
 * The esbuild options of every function, in esbuild's own terms: the stack hands them to NodejsFunction
 * (`nodejsBundling`) and the cold-start benchmark builds with them, so both bundle alike. Every AWS SDK
 * client is bundled (nothing external).
 */
export function functionEsbuildOptions(charts: boolean): FunctionEsbuildOptions {
  return {
    format: 'cjs',
    target: 'node24',
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    // Licences in a file beside the bundle (index.js.LEGAL.txt), not in the code Node parses at every cold start;
    // text as UTF-8, not \u escapes (Node reads UTF-8 source).
    legalComments: 'external',
    charset: 'utf8',
    // A package's ES module build before its CommonJS one (esbuild's default for node is the reverse): the AWS
    // SDK's ESM builds are tree-shaken to the commands the code sends and share one scope, where every module
    // importing a CommonJS client copied all its exports at load (docs/PERFORMANCE.md §3: the digest's cold start).
    mainFields: ['module', 'main'],
    external: [],
    alias: { ...LAMBDA_CREDENTIALS_ALIAS, ...(charts ? CHART_ALIAS : {}) },
  };
}

/**
 * Every AWS client's default credential chain, replaced by the environment's credentials
 * (infra/lambda-credentials.ts): all Lambda gives a function, and ~100 KB less of every bundle to parse at
 * cold start (issue 30's room for the digest's tables).
 */
const LAMBDA_CREDENTIALS_ALIAS: Record<string, string> = {
  '@aws-sdk/credential-provider-node': `${PROJECT_ROOT}infra/lambda-credentials.ts`,
};

/**
 * The PNG fallback's renderer (vega, vega-lite, resvg: ~1.7 MB of JS): a second bundle, `trend-chart.js`,
 * emitted beside the handler. shared/charts/load.ts names it at run time, so the handler's bundle does not
 * hold it and a digest whose chart Slack draws never reads it.
 */
export const CHART_RENDERER_BUNDLE = { entry: `${PROJECT_ROOT}shared/charts/trend-chart.ts`, file: 'trend-chart.js' } as const;

/** esbuild's options for the renderer's own bundle, written to `outdir` (the stack's afterBundling hook, the benches, the tests). */
export function chartRendererEsbuildOptions(outdir: string) {
  return {
    ...functionEsbuildOptions(true),
    entryPoints: [CHART_RENDERER_BUNDLE.entry],
    outfile: `${outdir}/${CHART_RENDERER_BUNDLE.file}`,
    bundle: true,
    platform: 'node' as const,
  };
}

/** The subset of esbuild's BuildOptions the functions set. */
export interface FunctionEsbuildOptions {
  readonly format: 'cjs';
  readonly target: string;
  readonly minify: boolean;
  readonly sourcemap: boolean;
  readonly sourcesContent: boolean;
  readonly legalComments: 'external';
  readonly charset: 'utf8';
  readonly mainFields: string[];
  readonly external: string[];
  readonly alias: Record<string, string>;
}

/** NODE_OPTIONS of every function (the source maps of the bundle are used in stack traces). */
export const FUNCTION_NODE_OPTIONS = '--enable-source-maps';

/**
 * What a function that draws charts needs from esbuild. vega-canvas's Node build awaits
 * `import('canvas')` at the top level, which a CommonJS bundle cannot hold: its browser build is used
 * instead (it finds no DOM and returns no canvas, which is all the renderer needs; text is measured with
 * the chart font). The chart code itself is its own bundle (`CHART_RENDERER_BUNDLE`), imported only when
 * a PNG is drawn (`loadChartRenderer`).
 */
const CHART_ALIAS: Record<string, string> = { 'vega-canvas': `${PROJECT_ROOT}node_modules/vega-canvas/build/vega-canvas.browser.js` };

/** `functionEsbuildOptions` as NodejsFunction's `bundling` (esbuild runs locally, never in Docker). */
function nodejsBundling(charts: boolean): BundlingOptions {
  const options = functionEsbuildOptions(charts);
  return {
    forceDockerBundling: false,
    // A synth prints nothing when the stage file is good: esbuild speaks only of errors.
    logLevel: LogLevel.ERROR,
    format: OutputFormat.CJS,
    target: options.target,
    minify: options.minify,
    sourceMap: options.sourcemap,
    sourcesContent: options.sourcesContent,
    charset: Charset.UTF8,
    mainFields: options.mainFields,
    bundleAwsSDK: options.external.length === 0,
    esbuildArgs: {
      '--legal-comments': options.legalComments,
      ...Object.fromEntries(Object.entries(options.alias).map(([name, path]) => [`--alias:${name}`, path])),
    },
    ...(charts ? { commandHooks: CHART_ASSET_HOOKS } : {}),
  };
}

/**
 * The resvg wasm and the chart font are files, not JavaScript: copied from node_modules into
 * `chart-assets/` beside the handler, where shared/charts/assets.ts looks first ($LAMBDA_TASK_ROOT).
 */
const CHART_ASSET_HOOKS: ICommandHooks = {
  beforeBundling: () => [],
  beforeInstall: () => [],
  afterBundling: (inputDir, outputDir) => [
    rendererBundleCommand(inputDir, outputDir),
    `mkdir -p "${outputDir}/${CHART_ASSETS_DIR}"`,
    ...Object.values(CHART_ASSETS).map(
      (asset) => `cp "${inputDir}/node_modules/${asset.packagePath}" "${outputDir}/${CHART_ASSETS_DIR}/${asset.file}"`,
    ),
  ],
};

/** The esbuild command line of `chartRendererEsbuildOptions` (NodejsFunction bundles one entry; the hook adds the second). */
function rendererBundleCommand(inputDir: string, outputDir: string): string {
  const o = chartRendererEsbuildOptions(outputDir);
  const args = [
    `"${inputDir}/node_modules/.bin/esbuild"`,
    `"${o.entryPoints[0]}"`,
    '--bundle',
    // Quiet as the handler's bundling: a synth prints nothing when the stage file is good.
    '--log-level=error',
    `--platform=${o.platform}`,
    `--format=${o.format}`,
    `--target=${o.target}`,
    ...(o.minify ? ['--minify'] : []),
    ...(o.sourcemap ? ['--sourcemap'] : []),
    `--sources-content=${String(o.sourcesContent)}`,
    `--legal-comments=${o.legalComments}`,
    `--charset=${o.charset}`,
    `--main-fields=${o.mainFields.join(',')}`,
    ...Object.entries(o.alias).map(([name, path]) => `"--alias:${name}=${path}"`),
    `"--outfile=${o.outfile}"`,
  ];
  return args.join(' ');
}

/** Stage and Powertools settings: the metrics carry dimensions {service, stage}. */
function commonEnvironment(service: ServiceName, config: BridgeConfig): Record<string, string> {
  return {
    [ENV.stage]: config.stage,
    [ENV.powertoolsServiceName]: service,
    [ENV.powertoolsMetricsNamespace]: METRICS_NAMESPACE,
    [ENV.powertoolsLogLevel]: config.logLevel,
    NODE_OPTIONS: FUNCTION_NODE_OPTIONS,
  };
}
