/**
 * The deploy rehearsal on config/dev.json: the synthesized stack, its bundles run as Lambda runs
 * them, the operator's documented steps and the scenarios, then the IAM, metrics and log checks
 * (local/rehearse). The IAM check of the same recorded calls against a template with one IAM statement
 * removed must fail, naming the call — the rehearsal is what stands between a missing permission and
 * the first real deploy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../cli/rehearse';
import { bridgeStackOf, readAssembly, synthesize, type CfnTemplate } from '../../local/rehearse/assembly';
import { checkIamCalls } from '../../local/rehearse/checks';
import { RehearsedStack } from '../../local/rehearse/rehearsed-stack';
import { rehearseInParallel, type RehearsalReport } from '../../local/rehearse/rehearsal';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('deploy rehearsal (config/dev.json)', () => {
  let workDir: string;
  let report: RehearsalReport;
  /** The two stacks rehearsed (closed by then; their recorded AWS calls kept). */
  const stacks: RehearsedStack[] = [];

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'rehearse-test-'));
    const assemblyDir = join(workDir, 'cdk.out');
    synthesize(PROJECT_ROOT, assemblyDir, ['stage=dev']);
    const artifact = bridgeStackOf(readAssembly(assemblyDir));
    report = await rehearseInParallel(
      async (group) => {
        const stack = await RehearsedStack.start({
          stack: artifact,
          workDir: mkdtempSync(join(workDir, `group-${group}-`)),
          apiId: 'rhtest',
        });
        stacks.push(stack);
        return stack;
      },
      { projectRoot: PROJECT_ROOT, runCli: runCliInProcess },
    );
  }, 900_000); // a cold synth and the rehearsal: ~1.5 min quiet, several with two suites at once

  afterAll(() => {
    rmSync(workDir, { recursive: true, force: true });
  });

  it('passes every check: documented steps, scenarios, IAM, alarms ↔ metrics, no secret in the logs', () => {
    const failed = report.checks.filter((check) => !check.ok).map((check) => `${check.name}: ${check.detail}`);
    expect(failed).toEqual([]);
    const names = report.checks.map((check) => check.name);
    // Each part of the rehearsal actually ran (a check that silently did not run would pass).
    for (const output of ['PutReadApiKeyCommand', 'PutSlackTokenCommand', 'PutSigningSecretsCommand', 'PutSlackSigningSecretCommand']) {
      expect(names).toContain(`operator: output ${output} run as shown`);
    }
    expect(names.filter((name) => name.startsWith('runbook step')).length).toBeGreaterThanOrEqual(5);
    expect(names.some((name) => name.includes('npx bridge smoke --stack VisibilitySlackBridge-dev'))).toBe(true);
    // Each of the four functions (with "Add to Slack") made AWS calls that were checked (on at least one of the two stacks).
    const checkedFunctions = new Set(
      names.flatMap((name) => /^IAM: every AWS call of (\w+) is allowed by its role \([1-9]\d* calls/.exec(name)?.[1] ?? []),
    );
    expect(checkedFunctions.size).toBe(4);
    expect(names).toContain('digest: posted in the configured channel C0DEV00001');
    expect(names).toContain('slack outage: the replayed digest is posted exactly once');
    // The Slack app's trust: other workspaces and apps refused, a replay not acted on twice, the Slack routes' own throttle.
    expect(names).toContain('foreign: a signed /visibility subscribe from another workspace is refused (403)');
    expect(names).toContain('foreign: nothing was done for another app (no answer, no subscription of C0FOREIGN)');
    expect(names).toContain('replay: the same request again is answered (200) but not acted on again');
    expect(names).toContain('slack flood: the service’s signed deliveries sent during it are accepted (the webhook keeps its throttle)');
    // This round's paths through the real bundle: the weekly report, the trend chart, quiet hours.
    expect(names).toContain('weekly: with Slack failing, the report due in C0DEV00001 fails and counts WeeklyReportFailed');
    expect(names).toContain('weekly: once Slack is back, the report is posted in the default channel C0DEV00001');
    expect(names).toContain('weekly: the sweep sent again the same week posts nothing twice');
    expect(names).toContain("chart: the second run's digest in C0DEV00001 carries Slack's own chart, nothing uploaded");
    expect(names).toContain("chart: the refused digest was sent again with the chart's words");
    expect(names).toContain("chart: the refused chart's digest thread in C0DEV00001 gets the trend PNG");
    expect(names).toContain('chart: the bundle ships the wasm and the font (no ChartAssetMissing logged)');
    expect(names).toContain("quiet: the run's digest is held in C0QUIET (DigestHeld), nothing posted there");
    expect(names).toContain(
      'quiet: a hold the table refuses skips C0QUIET alone (DigestHoldFailed); the run is posted in its other channels',
    );
    expect(names.some((name) => name.startsWith('quiet: after quiet off, the quiet_catch_up sweep posts one catch-up'))).toBe(true);
    expect(names.some((name) => name.startsWith("metrics: every alarm's metric was emitted"))).toBe(true);
    // Two tenants: installed through Add to Slack, isolated, a token refreshed once, an uninstall purged.
    expect(names.filter((name) => name.startsWith('tenants: ')).length).toBeGreaterThanOrEqual(12);
    expect(names).toContain("tenants: /visibility projects in team A names A's projects and none of B's");
  });

  it('fails, naming the call and the statement, when the template lacks a permission the code uses', async () => {
    const [stack] = stacks;
    const template = structuredClone<CfnTemplate>(stack!.stack.template);
    let removed = 0;
    for (const resource of Object.values(template.Resources)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      const document = resource.Properties?.['PolicyDocument'] as { Statement: { Sid?: string }[] };
      const kept = document.Statement.filter((statement) => statement.Sid !== 'ReadSigningSecrets');
      removed += document.Statement.length - kept.length;
      document.Statement = kept;
    }
    expect(removed).toBe(1);

    // The rehearsal's own IAM check, over the calls the functions made, against the template without the statement.
    const checks = await checkIamCalls(stack!, template);
    const iam = checks.find((check) => check.name.startsWith('IAM: every AWS call of WebhookIngest'));
    expect(checks.every((check) => check.ok)).toBe(false);
    expect(iam?.ok).toBe(false);
    expect(iam?.detail).toContain('secretsmanager:GetSecretValue');
    expect(iam?.detail).toMatch(/no statement allows it/);
  }, 120_000);
});
