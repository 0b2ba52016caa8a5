// The runbook parser against the real docs/DEPLOY.md (what the rehearsal runs) and against the
// mistakes that would make it drop or merge a step without a word.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runbookSteps, shellCommands, stripShellComment } from '../../local/rehearse/runbook';

const DEPLOY_MD = readFileSync(new URL('../../docs/DEPLOY.md', import.meta.url), 'utf8');
const STACK = 'VisibilitySlackBridge-<stage>';

describe('the runbook in docs/DEPLOY.md', () => {
  const steps = runbookSteps(DEPLOY_MD);
  const titled = (word: RegExp) => steps.find((s) => word.test(s.title));
  const allCommands = steps.flatMap((s) => s.commands);

  it('is numbered 1..N, each step with a title', () => {
    expect(steps.length).toBeGreaterThanOrEqual(10);
    expect(steps.map((s) => s.step)).toEqual(steps.map((_, i) => i + 1));
    for (const step of steps) expect(step.title).not.toBe('');
  });

  it('walks a first deploy in order: prerequisites, stage file, bootstrap, deploy, outputs, secrets, smoke, alarms', () => {
    const order = [
      /prerequisites/i,
      /stage file/i,
      /bootstrap/i,
      /^deploy/i,
      /outputs/i,
      /read-API key/i,
      /Slack app/i,
      /webhook/i,
      /end to end/i,
      /e-mail/i,
    ];
    const positions = order.map((title) => titled(title)?.step);
    expect(positions.every((p) => p !== undefined)).toBe(true);
    expect([...positions].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(positions);
  });

  it('holds the commands a new operator needs, with the placeholders the rehearsal substitutes', () => {
    expect(allCommands).toContain('cp -n config/example.json config/<stage>.json');
    expect(allCommands).toContain('npx cdk bootstrap aws://<account>/<region> -c stage=<stage>');
    expect(allCommands).toContain('npx cdk deploy -c stage=<stage>');
    expect(allCommands).toContain(`aws cloudformation describe-stacks --stack-name ${STACK} --query 'Stacks[0].Outputs' --output table`);
    expect(allCommands).toContain(`npx bridge smoke --stack ${STACK} --project <project>`);
    expect(titled(/upgrade/i)?.commands).toContain('npx cdk diff -c stage=<stage>');
    expect(titled(/tear down/i)?.commands).toContain('npx cdk destroy -c stage=<stage>');
  });

  it('puts the webhook signing secret only after the webhook is registered, and every other secret before it', () => {
    const webhook = titled(/webhook/i);
    expect(webhook?.commands).toEqual([`npx bridge secrets signing add --stack ${STACK}`]);
    const secretSteps = steps.filter((s) => s.commands.some((c) => c.startsWith('npx bridge secrets set')));
    expect(secretSteps.length).toBeGreaterThan(0);
    for (const step of secretSteps) expect(step.step).toBeLessThan(webhook?.step ?? 0);
    const secretsSet = allCommands.filter((c) => c.startsWith('npx bridge secrets set')).map((c) => c.split(' ')[4]);
    expect(secretsSet.sort()).toEqual(['read-api-key', 'slack-signing-secret', 'slack-token']);
  });

  it('never puts a secret value on a command line', () => {
    for (const command of allCommands) {
      expect(command).not.toMatch(/--value(?!-stdin)|--secret-string|--secret\b/);
    }
  });

  it('drops comments: no command keeps a trailing # remark', () => {
    expect(allCommands.filter((c) => /\s#/.test(c))).toEqual([]);
    expect(steps[0]?.commands).toContain('node --version');
  });
});

describe('runbookSteps', () => {
  it('joins continuations, drops comments and ignores blocks outside steps or not marked sh', () => {
    const md = [
      '# Title',
      '```sh',
      'echo outside-a-step',
      '```',
      '### Step 1 — First',
      '```sh',
      '# a whole-line comment',
      'npx cdk deploy \\',
      '  -c stage=<stage>   # trailing',
      '',
      'echo \'a # in quotes\' "and # here"',
      '```',
      '```json',
      '{"not": "a command"}',
      '```',
      '### Step 2 — Second',
      '````sh',
      'echo ```',
      '````',
      '## Reference',
      '```sh',
      'echo after-the-steps',
      '```',
    ].join('\n');
    expect(runbookSteps(md)).toEqual([
      { step: 1, title: 'First', commands: ['npx cdk deploy -c stage=<stage>', 'echo \'a # in quotes\' "and # here"'] },
      { step: 2, title: 'Second', commands: ['echo ```'] },
    ]);
  });

  it('refuses a step out of order, a heading that is nearly a step, and an unclosed block', () => {
    expect(() => runbookSteps('### Step 1 — A\n### Step 3 — C\n')).toThrow('line 2: "Step 3" where step 2 was expected');
    expect(() => runbookSteps('### Step 1 - A\n')).toThrow('line 1: "### Step 1 - A" is not a step heading');
    expect(() => runbookSteps('### Step 1 — A\n```sh\nls\n')).toThrow('line 2: the code block opened here is never closed');
  });

  it('keeps a # that does not start a word, and escaped backslashes at the end of a line', () => {
    expect(stripShellComment('curl https://h/#frag # note')).toBe('curl https://h/#frag');
    expect(stripShellComment('echo \\# not a comment')).toBe('echo \\# not a comment');
    expect(shellCommands(['echo a\\\\', 'echo b'])).toEqual(['echo a\\\\', 'echo b']);
  });
});
