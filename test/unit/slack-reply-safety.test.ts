/**
 * Every reply, note and ephemeral answer of the Slack app, built by the real reply builders from
 * hostile service strings (issue 21): nothing can ping, link, hide, restyle or overflow.
 */
import { describe, expect, it } from 'vitest';
import type { Subscription } from '../../shared/ports';
import type { Project, VisibilityOverview } from '../../shared/read-api-types';
import { annotated, buttonChange } from '../../shared/slack-app/actions';
import type { SlackReply } from '../../shared/slack-app/ports';
import { matchProject } from '../../shared/slack-app/project-match';
import * as reply from '../../shared/slack-app/replies';
import { parseCommandText, usageOf } from '../../shared/slack-app/commands';
import { statusReply } from '../../shared/slack-app/status';
import type { Gap } from '../../shared/read-api-types';
import { SLACK_LIMITS } from '../../shared/slack-text';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const ACTOR = { userId: 'U0ANA', userName: 'ana' };

/** The names tried in issue 21, each with what it must not show. */
const INJECTION_NAMES = {
  pingAndDisguisedLink: 'Acme` <!channel> <https://evil.example/login|click to re-authenticate> `',
  bidi: 'Invoice \u202Egnp.exe\u202C',
  zeroWidth: 'Pay\u200Bpal\u200D \uFEFFSupport\u2060',
  formatting: '*bold* _italic_ ~struck~ `code`',
  bareUrl: 'Northwind https://evil.example/login',
  long: `${'<!here> '.repeat(500)}${'W'.repeat(2000)}`,
  mentionAndDate: '<@U0BOSS> <!subteam^S123> <!date^0^{date}|x> <#C0GENERAL>',
} as const;

const BIDI_OR_INVISIBLE = /[\u200B-\u200F\u2060\uFEFF\u202A-\u202E\u2066-\u2069]/;
/** Markup the bridge itself writes: a mention of a Slack user id and a Slack date. */
const BRIDGE_MARKUP = /<@[UW][A-Z0-9]+>|<#[CGD][A-Z0-9]+>|<!subteam\^S[A-Z0-9]+>|<!date\^\d+\^\{date_short_pretty\} \{time\}\|[\dTZ:-]+>/g;
/**
 * Code spans the bridge writes hold only its own words (commands, modes), never a service string; a
 * name the user typed only when it is plain (letters, digits, spaces, `.`, `_`, `-`), e.g. `/visibility subscribe Voltway`.
 */
const BRIDGE_CODE_SPAN =
  /^`(\/visibility(?: [a-z]+(?: <[a-z ]+>| [\p{L}\p{N}][\p{L}\p{N} ._-]*)?)?|full|changes|7d|\/invite|bridge doctor|(?:un)?subscribe|(?:un)?mute|mode|projects|list|(?:usergroups|channels|groups):read)`$/u;

function expectSafe(text: string, limit: number = SLACK_LIMITS.textObject): void {
  expect(text.length).toBeLessThanOrEqual(limit);
  expect(text).not.toMatch(BIDI_OR_INVISIBLE);
  for (const span of text.match(/`[^`]*`/g) ?? []) expect(span).toMatch(BRIDGE_CODE_SPAN);
  const serviceParts = text.replace(/`[^`]*`/g, '').replace(BRIDGE_MARKUP, '');
  expect(serviceParts).not.toContain('`');
  expect(serviceParts).not.toContain('<!');
  expect(serviceParts).not.toContain('<http');
  expect(serviceParts).not.toMatch(/[<>]/);
  for (const marked of ['*bold*', '_italic_', '~struck~']) expect(text).not.toContain(marked);
}

function expectSafeReply(answer: SlackReply): void {
  expectSafe(answer.text);
  for (const block of (answer.blocks ?? []) as { type: string; text?: { text: string }; elements?: { text: string }[] }[]) {
    if (block.type === 'context') for (const element of block.elements ?? []) expectSafe(element.text);
    if (block.type === 'section' && block.text) expectSafe(block.text.text);
  }
}

const cases = Object.entries(INJECTION_NAMES).map(([label, name]) => ({
  label,
  project: { id: `p-${label}`, name, industry: null } satisfies Project,
}));

function subscription(name: string, id: string, overrides: Partial<Subscription> = {}): Subscription {
  return {
    projectId: id,
    projectName: name,
    channel: 'C0DIGESTS',
    mode: 'full',
    createdBy: 'U0ANA',
    createdAtMs: NOW - 1000,
    changedBy: 'U0ANA',
    changedAtMs: NOW - 1000,
    lastChange: 'subscribed',
    ...overrides,
  };
}

function hostileOverview(name: string): VisibilityOverview {
  return {
    metrics: [
      { label: name, value: name, caption: name },
      { label: 'Score', value: 42, caption: null },
    ],
    engines: [
      [
        ['engine', name],
        [name, name],
      ],
    ],
    alerts: [
      [['message', name]],
      [
        ['severity', name],
        ['message', name],
        [name, name],
      ],
      [
        ['severity', 'critical'],
        ['message', name],
      ],
    ],
  };
}

function hostileGaps(name: string): Gap[] {
  return [
    {
      prompt_id: 'q1',
      prompt_ref: name,
      prompt_text: name,
      platforms_losing: [name, 'ChatGPT'],
      top_competitor: name,
      extra: [[name, name]],
    },
    { prompt_id: name, prompt_ref: 2, prompt_text: 'plain', platforms_losing: ['Gemini'], top_competitor: 'Rival', extra: [] },
  ];
}

/** A digest as Slack sends it back with a button click: its own blocks, the note is appended. */
const DIGEST_BLOCKS = [{ type: 'section', text: { type: 'mrkdwn', text: 'digest' } }];

describe.each(cases)('replies with the "$label" name', ({ project }) => {
  const sub = subscription(project.name, project.id);

  it('subscribe (new and already) names the project sanitized, outside code spans', () => {
    expectSafeReply(reply.subscribedReply(project, ACTOR, 'changes'));
    expectSafeReply(reply.subscribedReply(project, ACTOR, 'full'));
    expectSafeReply(reply.alreadySubscribedReply(project, sub, NOW));
  });

  it('mute, mode and unmute announcements', () => {
    for (const change of [
      { kind: 'mute', untilMs: NOW + 3_600_000, label: '1h' },
      { kind: 'mode', mode: 'changes' },
      { kind: 'mode', mode: 'full' },
      { kind: 'unmute' },
    ] as const) {
      expectSafeReply(reply.inChannel(reply.changeAnnouncement(sub, ACTOR, change)));
    }
    expectSafeReply(reply.inChannel(reply.changeAnnouncement(sub, ACTOR, { kind: 'mute', untilMs: NOW, label: project.name })));
  });

  it('every button note, on the digest and alone', () => {
    for (const kind of ['mute_7d', 'unmute', 'only_changes', 'full_digests'] as const) {
      const action = { kind, projectId: project.id, projectName: project.name, channel: 'C0DIGESTS' };
      const note = reply.buttonNote(sub, ACTOR, buttonChange(action, NOW));
      const onDigest = annotated(DIGEST_BLOCKS, note, { muted: kind === 'mute_7d', mode: 'full' });
      expectSafeReply(onDigest);
      expect(onDigest.blocks).toHaveLength(2);
      expectSafeReply(annotated([], note, { muted: false, mode: 'full' }));
    }
  });

  it('status, with the name in every field the read API sends', () => {
    const figures = { project, overview: hostileOverview(project.name), gaps: { gaps: hostileGaps(project.name), skipped: 0 } };
    const answer = statusReply(figures, { by: ACTOR.userId, atMs: NOW }, 'signed-value');
    expectSafeReply(answer);
    expectSafeReply(reply.asShared(answer, ACTOR));
    expect(JSON.stringify(answer.blocks)).toContain('Asked by <@U0ANA>');
  });

  it('"this channel isn\'t subscribed to it", naming what it is subscribed to', () => {
    expectSafeReply(reply.notSubscribedReply(project.name, 'C0DIGESTS', [sub], [project]));
    expectSafeReply(reply.notSubscribedReply(project.name, 'D0DM', [], []));
  });

  it('"no project here matches" for an unsubscribe, naming what the channel is subscribed to', () => {
    expectSafeReply(reply.notSubscribedReply(project.name, 'C0DIGESTS', [sub], [project], { unsubscribing: true }));
  });

  it('projects, list, ambiguous and not found', () => {
    const hostileId = { ...project, id: project.name };
    expectSafeReply(reply.projectsReply([project, hostileId], new Set([project.id]), 'signed-value'));
    const broken = subscription(project.name, 'p3', { broken: { code: project.name, atMs: NOW } });
    const changes = [{ who: project.name, whenMs: NOW, what: project.name, projectId: project.name, projectName: project.name }];
    const list = reply.listReply(
      [sub, subscription(project.name, 'p2', { lastChange: project.name, changedBy: project.name }), broken],
      changes,
      NOW,
      undefined,
    );
    expectSafeReply(list);
    expectSafeReply(reply.asShared(list, ACTOR));
    expectSafeReply(reply.ambiguousReply(project.name, [project, hostileId]));
    expectSafeReply(reply.notFoundReply(project.name, [project], 'service'));
    expectSafeReply(reply.notFoundReply(project.name, [project], 'channel'));
    expectSafeReply(reply.unknownReply(project.name, 'subscribe <project name or id>'));
  });

  it('refusals and "I can\'t post here" answers', () => {
    expectSafeReply(reply.refusalReply({ kind: 'wrong_channel', projectId: project.id, channels: ['C0HOME', project.name] }, project));
    expectSafeReply(reply.refusalReply({ kind: 'not_listed', userIds: ['U1', project.name] }));
    expectSafeReply(reply.refusalReply({ kind: 'not_in_group', groupId: project.name }));
    for (const reason of ['not_member', 'archived', 'not_found'] as const)
      expectSafeReply(reply.cannotPostReply({ canPost: false, reason, botUserId: project.name }, project.name, project));
    expectSafeReply(reply.postingUncheckedReply(project));
  });
});

describe('reply safety', () => {
  it('the disguised link and the ping become visible text, and the name is never in a code span', () => {
    const { project } = cases[0]!;
    const text = reply.subscribedReply(project, ACTOR, 'changes').text;
    expect(text).toContain('*Acmeˋ &lt;!channel&gt; &lt;https://evil.example/login|click to re-authenticate&gt; ˋ*');
  });

  it('the bidi name shows in sending order, so "gnp.exe" reads as it is', () => {
    expect(reply.name(cases[1]!.project)).toBe('*Invoice gnp.exe*');
  });

  it('a 6,000-character name is cut in every reply and both button notes (was a 12,136-character note)', () => {
    const long = cases.find((c) => c.label === 'long')!.project;
    expect(long.name).toHaveLength(6000);
    const sub = subscription(long.name, long.id);
    const note = reply.buttonNote(
      sub,
      ACTOR,
      buttonChange({ kind: 'mute_7d', projectId: long.id, projectName: long.name, channel: 'C' }, NOW),
    );
    expect(note.length).toBeLessThan(600);
    expect(reply.name(long).length).toBeLessThanOrEqual(reply.REPLY_LEN.projectName + 2);
    const many = Array.from({ length: 60 }, (_, i) => ({ ...long, id: `p${i}` }));
    expect(reply.projectsReply(many, new Set(), undefined).text.length).toBeLessThanOrEqual(SLACK_LIMITS.textObject);
  });

  it('a note longer than a text object is cut rather than refused', () => {
    const answer = annotated(DIGEST_BLOCKS, 'x'.repeat(12_136), { muted: true, mode: 'full' });
    expect(answer.text.length).toBeLessThanOrEqual(SLACK_LIMITS.textObject);
    const context = answer.blocks?.at(-1) as { elements: { text: string }[] };
    expect(context.elements[0]!.text.length).toBeLessThanOrEqual(SLACK_LIMITS.textObject);
  });

  it('only Slack user ids become mentions: anything else from the store is shown as text', () => {
    expect(reply.mention('U0ANA')).toBe('<@U0ANA>');
    expect(reply.mention('<!channel>')).toBe('&lt;!channel&gt;');
    expect(reply.mention('')).toBe('someone');
  });

  it('a name or id copied from a reply finds its project', () => {
    const projects = cases.map((c) => c.project);
    for (const project of projects.filter((p) => p.name.length < reply.REPLY_LEN.projectName)) {
      const shown = reply.name(project).slice(1, -1).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
      expect(matchProject(shown, projects)).toEqual({ status: 'found', project });
    }
    const underscored = { id: 'proj_1', name: 'Underscored' };
    expect(matchProject(reply.projectId(underscored.id), [underscored])).toEqual({ status: 'found', project: underscored });
    const lookalike = { id: 'projˍ1', name: 'Look-alike' };
    expect(matchProject('projˍ1', [underscored, lookalike])).toEqual({ status: 'found', project: lookalike });
    expect(matchProject('proj\u200B_1', [underscored, lookalike])).toEqual({ status: 'ambiguous', candidates: [underscored, lookalike] });
    expect(matchProject('x', [underscored, lookalike]).status).toBe('not_found');
  });
});

describe('usage errors quote what was typed, sanitized', () => {
  const HOSTILE = ['<!channel>', '<@U0BOSS>', '<!subteam^S123>', 'evil\u202Egnp.exe', '<https://evil.example|login>', '*bold*`x`'];
  const lines = HOSTILE.flatMap((word) => [
    `mute Northwind ${word}`,
    `quiet ${word}`,
    `quiet 22:00-07:00 ${word}`,
    `filter Northwind ${word}`,
    `filter Northwind engines=ChatGPT ${word}`,
    `weekly mon 09:00 ${word}`,
  ]);

  it.each(lines)('`%s` is answered without a ping, a link or a bidi control', (line) => {
    const command = parseCommandText(line);
    expect(command.kind).toBe('invalid');
    if (command.kind !== 'invalid') return;
    const { text } = reply.usageReply(command.verb, usageOf(command.verb), command.problem);
    const outsideCode = text.replace(/`[^`]*`/g, '');
    expect(text).not.toMatch(BIDI_OR_INVISIBLE);
    expect(outsideCode).not.toMatch(/<[!@#h]/);
    expect(outsideCode).not.toContain('*bold*');
    // Every quoted word is outside a code span (a code span would show a raw `<!channel>` as typed).
    for (const span of text.match(/`[^`]*`/g) ?? []) expect(span).not.toMatch(/<!|<@|\u202E/);
  });
});

describe('copy', () => {
  const northwind = { id: 'p1', name: 'Northwind' };

  it('the subscribe confirmation offers the mode the subscription is not in', () => {
    const changes = reply.subscribedReply(northwind, ACTOR, 'changes').text;
    expect(changes).toContain('A run where nothing moved gets one line');
    expect(changes).toContain('and `full` sends every digest whole');
    expect(changes).not.toContain('`changes`');
    const full = reply.subscribedReply(northwind, ACTOR, 'full').text;
    expect(full).toContain('and `changes` keeps quiet runs to one line');
    expect(full).not.toContain('`full`');
  });

  it('unsubscribe from no such project says no project here matches, lists the subscriptions, and never says "subscribe first"', () => {
    const text = reply.notSubscribedReply('Nope', 'C0DIGESTS', [subscription('Northwind', 'p1')], [], { unsubscribing: true }).text;
    expect(text).toBe(
      'No project subscribed in <#C0DIGESTS> matches "Nope". It is subscribed to *Northwind* (`/visibility list` shows their settings).',
    );
    expect(reply.notSubscribedReply('Nope', 'C0DIGESTS', [], [], { unsubscribing: true }).text).not.toContain('subscribe Nope');
  });
});
