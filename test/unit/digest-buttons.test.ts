/** The channel part of a rendered digest: its buttons and the note of who changed the channel's settings. */
import { describe, expect, it } from 'vitest';
import type { ActionsBlock, ContextBlock } from '@slack/web-api';
import { renderDigest, type DigestBlock, type DigestInput } from '../../shared/digest/render';
import { decodeActionValue, encodeActionValue } from '../../shared/slack-app/interactions';
import { actionValueCodec } from '../../shared/buttons/value';
import { findBlockKitViolations } from '../../shared/slack-text';
import { DIGEST_BLOCK_IDS, settingsButtons } from '../../shared/digest/render/sections/footer';

const TEMPLATE = 'https://app.example.com/p/{project_id}/runs/{run_id}';
const CHANGED_AT = Date.UTC(2026, 10, 18, 9, 30);

function input(options: DigestInput['options']): DigestInput {
  return {
    project: { id: 'proj-1', name: 'Northwind', industry: null },
    run: { eventId: 'evt-1', runId: 'run-1', answers: 40, createdAt: '2026-11-20T10:00:00Z' },
    overview: { metrics: [{ label: 'Visibility', value: 41, caption: null }], engines: [], alerts: [] },
    gaps: [],
    previous: null,
    reasoning: new Map(),
    options,
  };
}

const BUTTONS = actionValueCodec(['digest-buttons-action-signing-key-0123456789']);
const TARGET = { channel: 'C0ALPHA', projectId: 'proj-1', projectName: 'Northwind' };
const CHANNEL = { ...TARGET, mode: 'full' as const, actionValue: encodeActionValue(TARGET, BUTTONS) };

function actions(blocks: DigestBlock[]): ActionsBlock['elements'] {
  return blocks.filter((b): b is ActionsBlock => b.type === 'actions').flatMap((b) => b.elements);
}

function contextTexts(blocks: DigestBlock[]): string[] {
  return blocks.filter((b): b is ContextBlock => b.type === 'context').flatMap((b) => b.elements.map((e) => ('text' in e ? e.text : '')));
}

describe('digest buttons', () => {
  it('puts Open dashboard, Mute 7 days and Only changes in one actions block, naming project and channel', () => {
    const { main } = renderDigest(input({ dashboardUrlTemplate: TEMPLATE, channel: CHANNEL }));
    const elements = actions(main.blocks);
    expect(elements.map((e) => ('action_id' in e ? e.action_id : ''))).toEqual(['open_dashboard', 'mute_7d', 'only_changes']);
    for (const button of elements.slice(1)) {
      expect(decodeActionValue('value' in button ? button.value : undefined, BUTTONS)).toEqual({
        projectId: 'proj-1',
        projectName: 'Northwind',
        channel: 'C0ALPHA',
      });
    }
    // findBlockKitViolations checks link buttons only; a value button's limit is 2,000 characters.
    for (const button of elements.slice(1)) expect('value' in button && button.value.length).toBeLessThanOrEqual(2000);
    expect(findBlockKitViolations({ ...main, blocks: main.blocks.filter((b) => b.type !== 'actions') })).toEqual([]);
    expect(main.blocks.slice(-2)).toMatchSnapshot();
  });

  it('shows Full digests instead of Only changes in a channel in that mode, and who set it, as a mention', () => {
    const change = { what: 'mode changes', by: 'U0BO', atMs: CHANGED_AT };
    const { main } = renderDigest(input({ channel: { ...CHANNEL, mode: 'changes', change } }));
    const elements = actions(main.blocks);
    expect(elements.map((e) => ('action_id' in e ? e.action_id : ''))).toEqual(['mute_7d', 'full_digests']);
    expect(elements.map((e) => ('text' in e && e.text ? e.text.text : ''))).toEqual(['Mute 7 days', 'Full digests']);
    expect(contextTexts(main.blocks)).toContain(
      'Set to only changes by <@U0BO> on <!date^1794994200^{date_short_pretty}|2026-11-18T09:30:00Z>',
    );
  });

  it('names each last change in words: never "Unmuted set by"', () => {
    const noteFor = (what: string) => {
      const { main } = renderDigest(input({ channel: { ...CHANNEL, change: { what, by: 'U0BO', atMs: CHANGED_AT } } }));
      return contextTexts(main.blocks).find((t) => t.includes('<@U0BO>'));
    };
    expect(noteFor('unmuted')).toMatch(/^Unmuted by <@U0BO> on <!date\^/);
    expect(noteFor('muted for 7d')).toMatch(/^Muted for 7d by <@U0BO> on /);
    expect(noteFor('mode full')).toMatch(/^Set to full digests by <@U0BO> on /);
    // The note carries the id a click replaces it by, so a click never adds a second note.
    const { main } = renderDigest(input({ channel: { ...CHANNEL, change: { what: 'unmuted', by: 'U0BO', atMs: CHANGED_AT } } }));
    expect(main.blocks.filter((b) => b.block_id === DIGEST_BLOCK_IDS.settingsNote)).toHaveLength(1);
  });

  it('asks Slack to confirm "Mute 7 days" and not the mode buttons', () => {
    const [mute, mode] = settingsButtons({ muted: false, mode: 'full' }, 'v');
    expect(mute).toMatchObject({ action_id: 'mute_7d', confirm: { confirm: { text: 'Mute 7 days' }, deny: { text: 'Cancel' } } });
    expect(mode).toMatchObject({ action_id: 'only_changes' });
    expect(mode).not.toHaveProperty('confirm');
    const [unmute, full] = settingsButtons({ muted: true, mode: 'changes' }, 'v');
    expect(unmute).toEqual({ type: 'button', action_id: 'unmute', text: { type: 'plain_text', text: 'Unmute' }, value: 'v' });
    expect(full).toMatchObject({ action_id: 'full_digests', value: 'v' });
  });

  it('shows no note for a value that is not a Slack user id', () => {
    const change = { what: 'muted for 7d', by: '<!channel>', atMs: CHANGED_AT };
    const { main } = renderDigest(input({ channel: { ...CHANNEL, change } }));
    expect(contextTexts(main.blocks).join(' ')).not.toContain('set by');
  });

  it('renders only the dashboard link when the channel is not known, as before', () => {
    const { main } = renderDigest(input({ dashboardUrlTemplate: TEMPLATE }));
    expect(actions(main.blocks).map((e) => ('action_id' in e ? e.action_id : ''))).toEqual(['open_dashboard']);
  });
});
