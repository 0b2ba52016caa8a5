import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ACTION_IDS } from '../../shared/buttons/ids';
import { decodeActionValue, encodeActionValue as encodeWith, parseInteractionForm as parseWith } from '../../shared/slack-app/interactions';
import { actionValueCodec, type ActionTarget } from '../../shared/buttons/value';

const codec = actionValueCodec(['interactions-test-action-signing-key-0123456789']);
const encodeActionValue = (t: ActionTarget) => encodeWith(t, codec);
const parseInteractionForm = (body: string) => parseWith(body, codec);

const target = { projectId: 'p1', projectName: 'Northwind Outdoor', channel: 'C123' };

function form(payload: unknown): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

function click(actionId: string, value: string | undefined, channel = 'C123') {
  return {
    type: 'block_actions',
    user: { id: 'U9', username: 'ana' },
    channel: { id: channel },
    response_url: 'https://hooks.slack.com/actions/T1/2/y',
    actions: [{ action_id: actionId, type: 'button', ...(value === undefined ? {} : { value }) }],
    message: { ts: '1.2', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'digest' } }] },
  };
}

describe('interaction payloads', () => {
  it('parses "Mute 7 days" with the project and channel from its value', () => {
    const parsed = parseInteractionForm(form(click(ACTION_IDS.mute7d, encodeActionValue(target))));
    expect(parsed).toEqual({
      ok: true,
      interaction: {
        actor: { userId: 'U9', userName: 'ana' },
        responseUrl: 'https://hooks.slack.com/actions/T1/2/y',
        action: { kind: 'mute_7d', ...target },
        messageBlocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'digest' } }],
      },
    });
  });

  it('parses "Only changes" and acknowledges the dashboard link without a value', () => {
    const changes = parseInteractionForm(form(click(ACTION_IDS.onlyChanges, encodeActionValue(target))));
    expect(changes.ok && changes.interaction.action).toEqual({ kind: 'only_changes', ...target });
    const link = parseInteractionForm(form(click(ACTION_IDS.openDashboard, undefined)));
    expect(link.ok && link.interaction.action).toEqual({ kind: 'open_dashboard' });
  });

  it('parses the toggled buttons, "Unmute" and "Full digests", and refuses them unsigned or in another channel', () => {
    for (const [id, kind] of [
      [ACTION_IDS.unmute, 'unmute'],
      [ACTION_IDS.fullDigests, 'full_digests'],
    ] as const) {
      const parsed = parseInteractionForm(form(click(id, encodeActionValue(target))));
      expect(parsed.ok && parsed.interaction.action).toEqual({ kind, ...target });
      const unsigned = parseInteractionForm(form(click(id, JSON.stringify({ k: 'digest', p: 'p1', n: 'x', c: 'C123' }))));
      expect(!unsigned.ok && unsigned.refusal).toMatchObject({ reason: 'unsigned', actionId: id });
      const elsewhere = parseInteractionForm(form(click(id, encodeActionValue(target), 'C999')));
      expect(!elsewhere.ok && elsewhere.refusal?.reason).toBe('other_channel');
    }
  });

  it('applies a click on a digest routed to a channel by name to the channel clicked in, by its id', () => {
    const named = { ...target, channel: '#digests' };
    const parsed = parseInteractionForm(form(click(ACTION_IDS.mute7d, encodeActionValue(named), 'C0DIGESTS')));
    expect(parsed.ok && parsed.interaction.action).toEqual({ kind: 'mute_7d', ...target, channel: 'C0DIGESTS' });
    // Without the channel clicked in, nothing says where the click was: refused, never the value's channel.
    const noChannel = parseInteractionForm(form({ ...click(ACTION_IDS.mute7d, encodeActionValue(named)), channel: undefined }));
    expect(!noChannel.ok && noChannel.refusal?.reason).toBe('no_channel');
    const inDm = parseInteractionForm(form(click(ACTION_IDS.mute7d, encodeActionValue(named), 'D0DM')));
    expect(!inDm.ok && inDm.refusal?.reason).toBe('direct_message');
  });

  it('refuses a click in a DM even when the signed value names that DM', () => {
    for (const id of [ACTION_IDS.mute7d, ACTION_IDS.unmute, ACTION_IDS.onlyChanges, ACTION_IDS.fullDigests]) {
      const inDm = parseInteractionForm(form(click(id, encodeActionValue({ ...target, channel: 'D0DM' }), 'D0DM')));
      expect(!inDm.ok && inDm.refusal).toMatchObject({ reason: 'direct_message', actionId: id });
    }
  });

  it.each([
    ['no payload', 'foo=bar', 'no JSON `payload`'],
    ['a payload that is not JSON', 'payload=%7Bnope', 'no JSON `payload`'],
    ['another interaction type', form({ type: 'view_submission' }), 'is not handled'],
    ['no user', form({ ...click(ACTION_IDS.mute7d, encodeActionValue(target)), user: undefined }), 'lacks user.id'],
    ['an unknown action', form(click('delete_everything', 'x')), 'is not handled'],
    ['a value without project', form(click(ACTION_IDS.mute7d, '{"c":"C1"}')), 'refused: unsigned'],
    ['an unsigned value', form(click(ACTION_IDS.mute7d, JSON.stringify({ p: 'p1', n: 'N', c: 'C123' }))), 'refused: unsigned'],
    ['a click in another channel', form(click(ACTION_IDS.mute7d, encodeActionValue(target), 'C999')), 'refused: other_channel'],
    [
      'a click without a channel',
      form({ ...click(ACTION_IDS.mute7d, encodeActionValue(target)), channel: undefined }),
      'refused: no_channel',
    ],
  ])('refuses %s', (_, body, problem) => {
    const parsed = parseInteractionForm(body);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toContain(problem);
  });

  it('round-trips any target through a button value within 2000 characters', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 100 }),
        fc.string({ maxLength: 3000 }),
        fc.stringMatching(/^[CGD][A-Z0-9]{2,11}$/),
        (projectId, projectName, channel) => {
          const value = encodeActionValue({ projectId, projectName, channel });
          expect(value.length).toBeLessThanOrEqual(2000);
          const decoded = decodeActionValue(value, codec);
          expect(decoded).toMatchObject({ projectId, channel });
        },
      ),
    );
  });

  it('never throws on arbitrary bodies', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json().map((j) => form(JSON.parse(j))),
        ),
        (body) => {
          expect(typeof parseInteractionForm(body).ok).toBe('boolean');
        },
      ),
    );
  });
});
