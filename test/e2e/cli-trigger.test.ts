// `npx bridge trigger` on the local stack is the service finishing a run: the simulator advances the
// project (its scripted runs, in the gallery) and delivers run.completed, so the gallery's digest
// cases, the README's 🔴 example among them, come from the command the README gives.
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackOf, startCliStack, type CliStack } from './helpers';

const GALLERY = resolve(import.meta.dirname, '../../local/simulator/fixtures/gallery.json');

let cli: CliStack;

beforeAll(async () => {
  cli = await startCliStack('trigger', { fixture: GALLERY });
}, 90_000);

afterAll(() => cli?.close());

/** The headline (first line) of each digest posted for `name`, oldest first. */
function headlines(name: string): string[] {
  return slackOf(cli.stack)
    .messages()
    .filter((message) => message.thread_ts === undefined && (message.text ?? '').includes(name))
    .map((message) => (message.text ?? '').split('\n')[0] ?? '');
}

describe('trigger on the local stack', { timeout: 180_000 }, () => {
  it('lists the gallery cases in its help', async () => {
    const help = await cli.bridge(['trigger', '--help']);
    expect(help.out).toContain('gallery-big-drop (2 scripted runs)');
    expect(help.out).toContain('gallery-rival-switch (3 scripted runs)');
  });

  it("the simulator finishes the project's runs: the second of gallery-big-drop is the README's 🔴 digest", async () => {
    const first = await cli.bridge(['trigger', 'run.completed', '--project', 'gallery-big-drop']);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toMatch(/^the simulator finished run 1 of gallery-big-drop \(\d[\d,]* answers\) and delivered run\.completed /);
    expect(first.out).toMatch(/\n2\d\d {2}delivered after 1 attempt\(s\)\n/);
    await cli.stack.waitForIdle();
    const second = await cli.bridge(['trigger', 'run.completed', '--project', 'gallery-big-drop']);
    expect(second.out).toMatch(/finished run 2 of gallery-big-drop \(1240 answers\)/);
    await cli.stack.waitForIdle();
    expect(headlines('Northwind Outdoor').at(-1)).toContain('🔴 Northwind Outdoor — Visibility score −10.2 pts');
  });

  it('an unknown project is a usage error naming the projects, with a suggestion', async () => {
    const typo = await cli.bridge(['trigger', 'run.completed', '--project', 'gallery-big-dorp']);
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('the simulator has no project "gallery-big-dorp": use one of gallery-big-drop,');
    expect(typo.err).toContain('(did you mean gallery-big-drop?)');
  });

  it('--override sends the built-in fixture, signed by the CLI', async () => {
    const sent = await cli.bridge(['trigger', 'run.completed', '--override', 'answers=12', '--project', 'gallery-quiet']);
    expect(sent.code, sent.err).toBe(0);
    expect(sent.out).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/webhook {2}run\.completed {2}delivery /);
  });
});
