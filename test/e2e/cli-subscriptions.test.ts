// `npx bridge subscriptions add` subscribes as `/visibility subscribe` does: the project by name or id
// among the service's (no match: suggestions), the channel by id and, on the local stack, one its Slack
// has; the default mode is the Slack app's. The subscribed channel then gets the project's digests.
// `remove` finds the project by name or id among the channel's own subscriptions.
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackOf, startCliStack, type CliStack } from './helpers';

const GALLERY = resolve(import.meta.dirname, '../../local/simulator/fixtures/gallery.json');
const DEMO_CHANNEL = 'C0LOCALDEMO';

let cli: CliStack;

beforeAll(async () => {
  cli = await startCliStack('subscriptions', { fixture: GALLERY });
}, 90_000);

afterAll(() => cli?.close());

describe('subscriptions add on the local stack', { timeout: 180_000 }, () => {
  it("finds the project by name, as /visibility subscribe does, in the Slack app's default mode; the channel gets its digests", async () => {
    const added = await cli.bridge(['subscriptions', 'add', '--project', 'ledgerly', '--channel', DEMO_CHANNEL]);
    expect(added.code, added.err).toBe(0);
    expect(added.out).toBe(`✓ subscribed ${DEMO_CHANNEL} to Ledgerly (gallery-improvement), mode changes\n`);
    expect((await cli.bridge(['subscriptions', 'list', '--channel', DEMO_CHANNEL])).out).toContain(
      'Ledgerly (gallery-improvement)  mode changes',
    );
    expect((await cli.bridge(['trigger', 'run.completed', '--project', 'gallery-improvement'])).code).toBe(0);
    await cli.stack.waitForIdle();
    expect(
      slackOf(cli.stack)
        .messages(DEMO_CHANNEL)
        .some((message) => (message.text ?? '').includes('Ledgerly')),
    ).toBe(true);
  });

  it('no project matching is an error with the nearest names', async () => {
    const typo = await cli.bridge(['subscriptions', 'add', '--project', 'Ledgerlyy', '--channel', DEMO_CHANNEL]);
    expect(typo.code).toBe(1);
    expect(typo.err).toContain('error: no project matches "Ledgerlyy"; did you mean Ledgerly (gallery-improvement)?');
  });

  it('a channel the local Slack does not have is refused; a name is refused for its id', async () => {
    const missing = await cli.bridge(['subscriptions', 'add', '--project', 'Ledgerly', '--channel', 'C0X']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('error: the local Slack has no channel C0X');
    const named = await cli.bridge(['subscriptions', 'add', '--project', 'Ledgerly', '--channel', 'visibility-demo']);
    expect(named.code).toBe(2);
    expect(named.err).toContain("--channel takes the channel's id");
  });

  it("remove finds the project by name among the channel's own subscriptions; a second remove changes nothing and says so", async () => {
    const channel = 'C0LOCALDIGEST';
    expect((await cli.bridge(['subscriptions', 'add', '--project', 'gallery-improvement', '--channel', channel])).code).toBe(0);
    const removed = await cli.bridge(['subscriptions', 'remove', '--project', 'ledger', '--channel', channel]);
    expect(removed.code, removed.err).toBe(0);
    expect(removed.out).toBe(`✓ unsubscribed ${channel} from Ledgerly (gallery-improvement)\n`);
    expect((await cli.bridge(['subscriptions', 'list', '--channel', channel])).out).toBe('no subscriptions\n');
    const again = await cli.bridge(['subscriptions', 'remove', '--project', 'Ledgerly', '--channel', channel]);
    expect(again.code).toBe(0);
    expect(again.out).toBe(`${channel} was not subscribed to "Ledgerly" (it has none); nothing changed\n`);
  });
});
