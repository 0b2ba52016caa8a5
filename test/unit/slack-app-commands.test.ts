import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  COMMAND_VERBS,
  COMMANDS,
  MAX_MUTE_MS,
  parseCommandText,
  parseMuteDuration,
  parseSlashCommandForm,
  suggestVerb,
  usageHint,
  usageOf,
} from '../../shared/slack-app/commands';
import { parseDeferredSlackCommand } from '../../shared/slack-app/service';
import { matchProject } from '../../shared/slack-app/project-match';

describe('slash command form', () => {
  it('reads every field Slack sends', () => {
    const body = new URLSearchParams({
      command: '/visibility',
      text: 'subscribe Northwind Outdoor',
      channel_id: 'C123',
      user_id: 'U9',
      user_name: 'ana',
      response_url: 'https://hooks.slack.com/commands/T1/1/x',
      trigger_id: 't.1',
      team_id: 'T1',
    }).toString();
    expect(parseSlashCommandForm(body)).toEqual({
      ok: true,
      request: {
        command: '/visibility',
        text: 'subscribe Northwind Outdoor',
        channelId: 'C123',
        userId: 'U9',
        userName: 'ana',
        responseUrl: 'https://hooks.slack.com/commands/T1/1/x',
        triggerId: 't.1',
        teamId: 'T1',
      },
    });
  });

  it('says which required fields are missing', () => {
    expect(parseSlashCommandForm('command=%2Fvisibility&text=list')).toEqual({
      ok: false,
      problem: 'slash command body lacks channel_id, user_id, response_url',
    });
  });
});

describe('command text', () => {
  it.each([
    ['', { kind: 'help' }],
    ['help', { kind: 'help' }],
    ['  LIST ', { kind: 'list' }],
    ['projects', { kind: 'projects' }],
    ['subscribe Northwind Outdoor', { kind: 'subscribe', project: 'Northwind Outdoor' }],
    ['subscribe “Northwind Outdoor”', { kind: 'subscribe', project: 'Northwind Outdoor' }],
    ['unsubscribe p_123', { kind: 'unsubscribe', project: 'p_123' }],
    ['status Ledgerly', { kind: 'status', project: 'Ledgerly' }],
    ['mute Northwind Outdoor 2h', { kind: 'mute', project: 'Northwind Outdoor', durationMs: 7_200_000, durationLabel: '2h' }],
    ['mute Voltway 1w', { kind: 'mute', project: 'Voltway', durationMs: 604_800_000, durationLabel: '1w' }],
    ['unmute Voltway', { kind: 'unmute', project: 'Voltway' }],
    ['mode Voltway CHANGES', { kind: 'mode', project: 'Voltway', mode: 'changes' }],
    ['mode Brightsmile Dental full', { kind: 'mode', project: 'Brightsmile Dental', mode: 'full' }],
  ])('parses %j', (text, expected) => {
    expect(parseCommandText(text)).toEqual(expected);
  });

  it.each([
    ['subscribe', 'subscribe', 'name the project'],
    ['mute Voltway', 'mute', 'how long'],
    ['mute Voltway forever', 'mute', 'is not a duration'],
    ['mute Voltway 100d', 'mute', 'at most 90d'],
    ['mode Voltway quiet', 'mode', '`changes`'],
    ['status ""', 'status', 'name the project'],
  ])('explains what is wrong with %j', (text, verb, problem) => {
    const command = parseCommandText(text);
    expect(command).toMatchObject({ kind: 'invalid', verb });
    expect(command.kind === 'invalid' && command.problem).toContain(problem);
  });

  it('suggests the closest verb for a typo', () => {
    expect(parseCommandText('subscibe Voltway')).toEqual({ kind: 'unknown', verb: 'subscibe', suggestion: 'subscribe' });
    expect(parseCommandText('lst')).toEqual({ kind: 'unknown', verb: 'lst', suggestion: 'list' });
    expect(parseCommandText('deploy now')).toEqual({ kind: 'unknown', verb: 'deploy', suggestion: undefined });
    expect(suggestVerb('UNMUTTE')).toBe('unmute');
  });

  it('never throws, and only help/list/projects come without a project', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        const command = parseCommandText(text);
        if ('project' in command) expect(command.project.trim()).not.toBe('');
      }),
    );
  });

  it('reads back any project name with any verb that takes one', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 .&-]{0,30}[A-Za-z0-9]$/).map((s) => s.replace(/\s+/g, ' '));
    fc.assert(
      fc.property(fc.constantFrom('subscribe', 'unsubscribe', 'status', 'unmute'), name, (verb, project) => {
        expect(parseCommandText(`${verb} ${project}`)).toEqual({ kind: verb, project });
      }),
    );
  });

  it('lists every verb once', () => {
    expect(new Set(COMMAND_VERBS).size).toBe(COMMAND_VERBS.length);
  });
});

describe('durations', () => {
  it('accepts units and their words, bounded', () => {
    expect(parseMuteDuration('30m')).toEqual({ ok: true, ms: 1_800_000, label: '30m' });
    expect(parseMuteDuration('3 days')).toEqual({ ok: true, ms: 259_200_000, label: '3d' });
    expect(parseMuteDuration('90d')).toEqual({ ok: true, ms: MAX_MUTE_MS, label: '90d' });
    expect(parseMuteDuration('0m').ok).toBe(false);
    expect(parseMuteDuration('13w').ok).toBe(false);
    expect(parseMuteDuration('7').ok).toBe(false);
    expect(parseMuteDuration('7y').ok).toBe(false);
  });

  it.each([
    ['7d', 7 * 86_400_000, '7d'],
    ['7 days', 7 * 86_400_000, '7d'],
    ['1 week', 7 * 86_400_000, '1w'],
    ['2 weeks', 14 * 86_400_000, '2w'],
    ['12h', 12 * 3600_000, '12h'],
    ['30 minutes', 1_800_000, '30m'],
  ])('`mute Northwind Outdoor %s` mutes the project named before it', (typed, durationMs, durationLabel) => {
    expect(parseCommandText(`mute Northwind Outdoor ${typed}`)).toEqual({
      kind: 'mute',
      project: 'Northwind Outdoor',
      durationMs,
      durationLabel,
    });
  });

  it('says which forms a duration takes when it reads none', () => {
    const bad = parseCommandText('mute Northwind 7 fortnights');
    expect(bad).toMatchObject({ kind: 'invalid', verb: 'mute' });
    expect(bad.kind === 'invalid' && bad.problem).toBe(
      '"fortnights" is not a duration: write a whole number and a unit, e.g. 30m, 12h, 7d, 7 days, 1 week or 2 weeks',
    );
  });
});

describe('project matching', () => {
  const projects = [
    { id: 'p1', name: 'Northwind Outdoor' },
    { id: 'p2', name: 'Northwind Kids' },
    { id: 'p3', name: 'Ledgerly' },
    { id: 'p4', name: 'ledgerly' },
    { id: 'p5', name: 'Voltway' },
  ];

  it('matches an id first, then the whole name, then a part of it', () => {
    expect(matchProject('p2', projects)).toEqual({ status: 'found', project: projects[1] });
    expect(matchProject('VOLTWAY', projects)).toEqual({ status: 'found', project: projects[4] });
    expect(matchProject('kids', projects)).toEqual({ status: 'found', project: projects[1] });
  });

  it('lists every candidate when several match', () => {
    expect(matchProject('northwind', projects)).toEqual({ status: 'ambiguous', candidates: [projects[0], projects[1]] });
    expect(matchProject('Ledgerly', projects)).toEqual({ status: 'ambiguous', candidates: [projects[2], projects[3]] });
  });

  it('suggests close names when nothing matches', () => {
    expect(matchProject('Voltwya', projects)).toEqual({ status: 'not_found', suggestions: [projects[4]] });
    expect(matchProject('Acme', projects)).toEqual({ status: 'not_found', suggestions: [] });
  });
});

describe('the command table', () => {
  it('generates help, usage and the manifest usage_hint from its entries', () => {
    expect(COMMAND_VERBS).toEqual(Object.keys(COMMANDS));
    expect(usageOf('mute')).toBe('mute <project> <duration: 30m, 12h, 7d, 7 days, 1 week>');
    expect(usageOf('list')).toBe('list');
    expect(usageHint()).toBe('subscribe <project name or id> | list | status <project> | help');
  });

  it('queues a deferred command whole and reads back exactly what was queued', () => {
    const context = { channel: 'C1', responseUrl: 'https://hooks.slack.com/x', actor: { userId: 'U1', userName: 'ana' } };
    for (const text of ['subscribe Northwind Outdoor', 'status p_123', 'projects']) {
      const command = parseCommandText(text);
      const queued = { kind: 'slack_command', command, context, receivedAtMs: 5 };
      expect(parseDeferredSlackCommand(JSON.parse(JSON.stringify(queued)))).toEqual(queued);
    }
  });

  it('refuses a queued command with a field its verb does not parse back', () => {
    const context = { channel: 'C1', responseUrl: 'u', actor: { userId: 'U1' } };
    const body = (command: unknown) => ({ kind: 'slack_command', command, context, receivedAtMs: 1 });
    expect(parseDeferredSlackCommand(body({ kind: 'status', project: 'p', extra: 'x' }))).toBeNull();
    expect(parseDeferredSlackCommand(body({ kind: 'status', project: 7 }))).toBeNull();
    expect(parseDeferredSlackCommand(body({ kind: 'status', project: ' p' }))).toBeNull();
    // Inline verbs are never queued.
    expect(parseDeferredSlackCommand(body({ kind: 'mute', project: 'p', durationMs: 60_000, durationLabel: '1m' }))).toBeNull();
  });
});
