/**
 * A synthesized cloud assembly as the rehearsal reads it: the stack's template, its region, and
 * where each function's bundled code is (the `aws:asset:path` metadata CDK writes). `synthesize`
 * runs `cdk synth` into a directory of the rehearsal's own.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { CloudAssembly, UNKNOWN_REGION } from 'aws-cdk-lib/cx-api';

/** The part of a CloudFormation template the rehearsal reads. */
export interface CfnResource {
  Type: string;
  /** Arbitrary JSON: each reader checks the shape it needs. */
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown }>;
}

export interface StackArtifact {
  stackName: string;
  /** The stack's region, or undefined for an environment-agnostic stack. */
  region: string | undefined;
  templateFile: string;
  template: CfnTemplate;
  assemblyDir: string;
}

export class AssemblyError extends Error {
  override readonly name = 'AssemblyError';
}

/** The stacks of a cloud assembly directory (cdk.out). */
export function readAssembly(assemblyDir: string): StackArtifact[] {
  const dir = resolve(assemblyDir);
  const manifestFile = join(dir, 'manifest.json');
  if (!existsSync(manifestFile)) {
    throw new AssemblyError(`${dir} is not a cloud assembly (no manifest.json): synthesize first, or leave out --app`);
  }
  return new CloudAssembly(dir).stacks.map(({ displayName, environment: { region }, templateFullPath, template }) => ({
    stackName: displayName,
    region: region === UNKNOWN_REGION ? undefined : region,
    templateFile: templateFullPath,
    template: template as CfnTemplate,
    assemblyDir: dir,
  }));
}

/** The one bridge stack of an assembly (the WAF stack of clientRateLimitEnabled has no functions). */
export function bridgeStackOf(stacks: StackArtifact[]): StackArtifact {
  const candidates = stacks.filter((stack) => resourcesOfType(stack.template, 'AWS::Lambda::Function').length > 0);
  if (candidates.length === 1) return candidates[0]!;
  throw new AssemblyError(`expected one stack with functions, found: ${stacks.map((stack) => stack.stackName).join(', ') || 'none'}`);
}

/** The template's resources of one type, with their logical ids. */
export function resourcesOfType(template: unknown, type: string): [string, CfnResource][] {
  const resources = (template as Partial<CfnTemplate> | undefined)?.Resources;
  if (typeof resources !== 'object' || resources === null) throw new Error('not a CloudFormation template: no Resources object');
  return Object.entries(resources).filter(([, resource]) => resource?.Type === type);
}

/** The directory holding a function's bundled code. */
export function assetDirOf(stack: StackArtifact, logicalId: string): string {
  const resource = stack.template.Resources[logicalId];
  const path = resource?.Metadata?.['aws:asset:path'];
  if (typeof path !== 'string') {
    throw new AssemblyError(`${logicalId} has no aws:asset:path metadata: synthesize with asset metadata (the default) and bundling on`);
  }
  const dir = resolve(stack.assemblyDir, path);
  if (!existsSync(dir)) throw new AssemblyError(`${logicalId}'s code ${dir} is missing from the assembly`);
  return dir;
}

/**
 * `cdk synth` of the project's app into `outDir` with the given context (e.g. `stage=dev`),
 * offline and without telemetry, as CI synthesizes it.
 */
export function synthesize(projectRoot: string, outDir: string, context: readonly string[]): void {
  const args = ['cdk', 'synth', '--no-notices', '--quiet', '--output', outDir, ...context.flatMap((entry) => ['-c', entry])];
  try {
    execFileSync('npx', args, {
      cwd: projectRoot,
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new AssemblyError(`cdk synth ${context.join(' ')} failed:\n${stderr.trim().split('\n').slice(-15).join('\n')}`);
  }
}
