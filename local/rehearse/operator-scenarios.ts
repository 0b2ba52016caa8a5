/**
 * The operator's part of a deploy, as written: the stack outputs' put-secret-value commands and the
 * `npx bridge …` commands of docs/DEPLOY.md's runbook, in order.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REHEARSAL_ACCOUNT_ID } from './rehearsed-stack';
import { runbookSteps } from './runbook';
import { lastLine, whyFailed, type CliRunResult, type OperatorValues, type ScenarioContext } from './scenario-context';

/**
 * The stack outputs' put-secret-value commands (parsed, run against the local Secrets Manager with
 * what the service and Slack would hand out), after registering the WebhookUrl with the service.
 */
export async function operatorOutputs(context: ScenarioContext): Promise<void> {
  const { stack, values, record } = context;
  const registered = stack.peers.simulator.webhooks.addWebhookWithSecret({ url: context.outputs['WebhookUrl']! });
  values.webhookSecret = registered.secret;
  const valueOf: Record<string, string> = {
    PutSigningSecretsCommand: values.webhookSecret,
    PutReadApiKeyCommand: values.readApiKey,
    PutSlackTokenCommand: values.slackToken,
    PutSlackSigningSecretCommand: values.slackSigningSecret,
    PutSlackClientSecretCommand: values.slackClientSecret,
  };
  for (const [key, command] of Object.entries(context.outputs).filter(([key]) => /^Put.*Command$/.test(key))) {
    const value = valueOf[key];
    const parsed =
      value === undefined
        ? { problem: 'an output put-secret-value command the rehearsal has no value for' }
        : parsePutSecretCommand(command, value);
    if ('problem' in parsed) {
      record(`operator: output ${key}`, false, parsed.problem);
    } else {
      await context.putSecret(outputKeyOfSecret(context, parsed.secretId), parsed.secretString);
      record(
        `operator: output ${key} run as shown`,
        true,
        `put ${parsed.secretString.trim().startsWith('[') ? 'a JSON array' : 'a plain string'}`,
      );
    }
  }
}

/** Runs the `npx bridge` commands of docs/DEPLOY.md's runbook steps, in order. */
export async function runbook(context: ScenarioContext): Promise<void> {
  const markdown = readFileSync(join(context.projectRoot, 'docs/DEPLOY.md'), 'utf8');
  const stage = context.stack.stackName.replace(/^VisibilitySlackBridge-/, '');
  const ran = new Set<string>();
  for (const step of runbookSteps(markdown)) {
    for (const raw of step.commands) {
      const command = fillPlaceholders(raw, {
        ...context.outputs,
        stage,
        project: context.project(),
        region: context.stack.region,
        account: REHEARSAL_ACCOUNT_ID,
      }).replaceAll('VisibilitySlackBridge-<stage>', context.stack.stackName);
      // A command a later step repeats (smoke after an upgrade) proves nothing new here.
      if (!command.startsWith('npx bridge ') || ran.has(command)) continue;
      ran.add(command);
      const args = splitArgs(command.slice('npx bridge '.length));
      const stdin = stdinFor(args, context.values);
      const result = await context.bridge(args, stdin);
      const name = `runbook step ${step.step} (${step.title}): ${command}`;
      if (result.code === 0) context.record(name, true, lastLine(result.stdout));
      else if (onlyTheWorkspaceUnnamed(context, result)) context.record(name, true, `as this step expects: ${whyFailed(result)}`);
      else context.record(name, false, whyFailed(result));
    }
  }
}

/**
 * `doctor` before the stage names its Slack workspace (runbook step 9 runs it for exactly this): its one
 * failure is the workspace check, whose fix is the stage-file lines the step then adds.
 */
function onlyTheWorkspaceUnnamed(context: ScenarioContext, result: CliRunResult): boolean {
  if (context.unconfiguredWorkspace() === undefined) return false;
  const failures = whyFailed(result)
    .split('\n')
    .filter((line) => line.startsWith('✗'));
  // The doctor's title of that check (cli/commands/doctor.ts checkWorkspaceIds).
  return failures.length > 0 && failures.every((line) => line.startsWith('✗ Slack workspace and app allowed:'));
}

/** `<stage>`, `<project>`, `<DlqUrl>` (a stack output) … as the operator fills them in; an unknown one is left for the CLI to refuse. */
function fillPlaceholders(command: string, values: Record<string, string>): string {
  return command.replace(/<([A-Za-z]+)>/g, (match, name: string) =>
    name === 'stage' && command.includes(`VisibilitySlackBridge-${match}`) ? match : (values[name] ?? match),
  );
}

/** What the operator pastes when a documented command reads a secret from standard input. */
function stdinFor(args: readonly string[], values: OperatorValues): string | undefined {
  const line = args.join(' ');
  if (/secrets set slack-signing-secret/.test(line)) return `${values.slackSigningSecret}\n`;
  if (/secrets set slack-token/.test(line)) return `${values.slackToken}\n`;
  if (/secrets set read-api-key/.test(line)) return `${values.readApiKey}\n`;
  if (/secrets signing add/.test(line)) return `${values.webhookSecret}\n`;
  return undefined;
}

/** `aws secretsmanager put-secret-value --region R --secret-id ARN --secret-string '<…>'` with the real value in place of `<…>`. */
function parsePutSecretCommand(command: string, value: string): { secretId: string; secretString: string } | { problem: string } {
  const args = splitArgs(command);
  if (args[0] !== 'aws' || args[1] !== 'secretsmanager' || args[2] !== 'put-secret-value') {
    return { problem: `not an aws secretsmanager put-secret-value command: ${command}` };
  }
  const options = { 'secret-id': { type: 'string' }, 'secret-string': { type: 'string' } } as const;
  const { 'secret-id': secretId, 'secret-string': template } = parseArgs({ args: args.slice(3), options, strict: false }).values;
  if (typeof secretId !== 'string' || secretId === '' || typeof template !== 'string')
    return { problem: `--secret-id or --secret-string missing: ${command}` };
  if (!/<[^>]+>/.test(template)) return { problem: `--secret-string has no <placeholder> for the value: ${command}` };
  return { secretId, secretString: template.replace(/<[^>]+>/, value) };
}

function outputKeyOfSecret(context: ScenarioContext, secretId: string): string {
  const key = Object.entries(context.outputs).find(([name, value]) => name.endsWith('SecretArn') && value === secretId)?.[0];
  if (!key) throw new Error(`the put command names ${secretId}, which no *SecretArn output has`);
  return key;
}

/** Shell-like split: spaces, single and double quotes (what the documented commands use). */
function splitArgs(line: string): string[] {
  const args: string[] = [];
  const pattern = /'([^']*)'|"((?:\\.|[^"\\])*)"|(\S+)/g;
  for (const match of line.matchAll(pattern)) args.push(match[1] ?? match[2]?.replace(/\\(.)/g, '$1') ?? match[3]!);
  return args;
}
