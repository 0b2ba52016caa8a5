/**
 * The weekly report (pure): a main message that reads in ten seconds, and its details for the thread.
 *
 * Main: the portfolio first ("3 of 10 projects worse, 1 better, 6 steady — biggest move Voltway
 * −3.8 pts"), then one line per project (its mark, the week's significant change in words with its
 * unit and better/worse, its top rival), then one closing line. Its fallback `text` names the movers.
 * Thread: per project, what moved and what stayed within normal variation (with the thresholds),
 * gaps opened and closed, rivals and engines. Every claim comes from `weeklyVerdict` (./verdict.ts)
 * through `ProjectWeek.outcome` and `changes`; nothing here decides significance. Every text from the
 * service or the store goes through the one sanitizer (via the digest's formatting helpers), and every
 * message stays inside Block Kit's limits at any number of projects.
 */
import type { SlackMessage, SnapshotGap } from '../ports';
import { fillUrlTemplate, mrkdwnLink } from '../digest/links';
import { changeTone } from '../digest/metric-direction';
import { formatNumber, inline, LEN, plural, projectName, slackDate } from '../digest/render/format';
import { deltaText, valueText } from '../digest/render/units';
import { SLACK_LIMITS, truncateText } from '../slack-text';
import type { ProjectWeek, RivalMove, WeekOutcome, WeekWindow } from './content';
import type { BaselineGap } from './ports';
import type { WeeklyVerdict } from './verdict';
import { portfolioChart } from './portfolio-chart';

/** Characters of a project's line in the main message (its name is cut first). */
export const LINE_TEXT = 200;
/** Text kept for the main message's project lines: the rest of the projects are counted in one line. */
export const LINES_BUDGET = 8000;
/** Characters of one project's details in the thread. */
export const DETAIL_TEXT = 1000;
/** Projects detailed per thread reply (a section and a divider each: well inside the block and text limits). */
export const DETAILS_PER_REPLY = 8;
/** Thread replies of details at most; projects beyond them are named in the last one. */
export const MAX_DETAIL_REPLIES = 3;
const NAME_IN_LINE = 40;
const LISTED = { noise: 4, gaps: 3, rivals: 4, engines: 6, movers: 4, othersNamed: 20 } as const;

/** Each outcome's mark, its words in a project's line, the portfolio's word and its place in the order. */
const OUTCOMES: { readonly [O in WeekOutcome]: { mark: string; portfolio: string; rank: number } } = {
  worse: { mark: '🔴', portfolio: 'worse', rank: 0 },
  mixed: { mark: '🟡', portfolio: 'mixed', rank: 1 },
  better: { mark: '🟢', portfolio: 'better', rank: 2 },
  steady: { mark: '⚪', portfolio: 'steady', rank: 3 },
  first: { mark: '🆕', portfolio: 'new', rank: 4 },
  'no-data': { mark: '⚠️', portfolio: 'without data', rank: 5 },
  'no-runs': { mark: '💤', portfolio: 'without runs', rank: 6 },
  never: { mark: '💤', portfolio: 'without runs', rank: 7 },
};

export interface WeeklyRenderOptions {
  dashboardUrlTemplate?: string | undefined;
  /** What the schedule is, e.g. "Monday 09:00 (Europe/Berlin)", for the closing line. */
  scheduleText: string;
}

/** The report: its main message and the thread replies that carry its details. */
export interface WeeklyReport {
  main: SlackMessage;
  thread: SlackMessage[];
}

function mrkdwn(text: string) {
  return { type: 'section', text: { type: 'mrkdwn', text, verbatim: true } };
}

function context(text: string) {
  return { type: 'context', elements: [{ type: 'mrkdwn', text, verbatim: true }] };
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString();
}

function listed(items: readonly string[], max: number): string {
  const shown = items.slice(0, max).join(' · ');
  return items.length > max ? `${shown} · +${formatNumber(items.length - max)} more` : shown;
}

/** How far beyond its threshold a change is: the order of a project's moves. */
function strength(change: WeeklyVerdict): number {
  return change.threshold > 0 ? Math.abs(change.delta) / change.threshold : Math.abs(change.delta);
}

function moves(week: ProjectWeek): WeeklyVerdict[] {
  return week.changes.filter((c) => c.significant).sort((a, b) => strength(b) - strength(a));
}

/** "Visibility score −3.8 pts, worse". */
function moveText(change: WeeklyVerdict): string {
  const tone = changeTone(change.label, change.delta);
  return `${inline(change.label, LEN.label)} ${deltaText(change.reading, change.delta) ?? ''}${tone === null || tone === 'same' ? '' : `, ${tone}`}`;
}

/** The week's change in words: the strongest move (mixed news: the strongest on each side). */
function headline(week: ProjectWeek): string {
  const all = moves(week);
  const worse = all.find((c) => changeTone(c.label, c.delta) === 'worse');
  const better = all.find((c) => changeTone(c.label, c.delta) === 'better');
  const shown = week.outcome === 'mixed' && worse !== undefined && better !== undefined ? [worse, better] : all.slice(0, 1);
  const rest = all.length - shown.length;
  return `${shown.map(moveText).join(' · ')}${rest > 0 ? ` · +${formatNumber(rest)} more` : ''}`;
}

function outcomeWords(week: ProjectWeek): string {
  switch (week.outcome) {
    case 'worse':
    case 'better':
    case 'mixed':
      return headline(week);
    case 'steady':
      return 'steady';
    case 'first':
      return 'first week of data: nothing to compare yet';
    case 'no-data':
      return `no data all week (${plural(week.runs, 'run', 'runs')}, 0 answers)`;
    case 'no-runs':
      return `no runs this week${week.lastRunAt === undefined ? '' : ` (last ${slackDate(week.lastRunAt)})`}`;
    case 'never':
      return 'no run digested yet';
  }
}

function projectLine(week: ProjectWeek): string {
  const name = `*${inline(projectName(week.projectName, week.projectId), NAME_IN_LINE)}*`;
  const rival =
    week.topRival === null ? '' : ` · top rival ${inline(week.topRival.name, 30)} (${plural(week.topRival.prompts, 'prompt', 'prompts')})`;
  return truncateText(`${OUTCOMES[week.outcome].mark} ${name} ${outcomeWords(week)}${rival}`, LINE_TEXT);
}

/** The project's largest move, comparable across projects: share moves in points first, then by strength. */
function biggestMove(weeks: readonly ProjectWeek[]): { week: ProjectWeek; change: WeeklyVerdict } | null {
  const size = (c: WeeklyVerdict): [number, number] =>
    c.reading.kind === 'share' ? [1, Math.abs(c.delta) * (c.reading.scale === 'fraction' ? 100 : 1)] : [0, strength(c)];
  let best: { week: ProjectWeek; change: WeeklyVerdict } | null = null;
  for (const week of weeks)
    for (const change of moves(week)) {
      if (best === null) {
        best = { week, change };
        continue;
      }
      const [kind, value] = size(change);
      const [bestKind, bestValue] = size(best.change);
      if (kind > bestKind || (kind === bestKind && value > bestValue)) best = { week, change };
    }
  return best;
}

/** "3 of 10 projects worse, 1 better, 6 steady — biggest move Voltway −3.8 pts". */
export function portfolioLine(weeks: readonly ProjectWeek[]): string {
  if (weeks.length === 0) return 'No project is subscribed here';
  const counts = new Map<string, number>();
  for (const week of [...weeks].sort((a, b) => OUTCOMES[a.outcome].rank - OUTCOMES[b.outcome].rank)) {
    const word = OUTCOMES[week.outcome].portfolio;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const parts = [...counts].map(([word, n], i) => {
    if (i > 0) return `${formatNumber(n)} ${word}`;
    if (n === weeks.length) return `${n === 1 ? 'The project' : `All ${formatNumber(n)} projects`} ${word}`;
    return `${formatNumber(n)} of ${plural(weeks.length, 'project', 'projects')} ${word}`;
  });
  const biggest = biggestMove(weeks);
  const move =
    biggest === null
      ? ''
      : ` — biggest move ${inline(projectName(biggest.week.projectName, biggest.week.projectId), NAME_IN_LINE)} ${deltaText(biggest.change.reading, biggest.change.delta) ?? ''}`;
  return `${parts.join(', ')}${move}`;
}

function ordered(weeks: readonly ProjectWeek[]): ProjectWeek[] {
  const top = (w: ProjectWeek) => moves(w)[0];
  return [...weeks].sort(
    (a, b) =>
      OUTCOMES[a.outcome].rank - OUTCOMES[b.outcome].rank ||
      (top(b) === undefined ? 0 : strength(top(b) as WeeklyVerdict)) - (top(a) === undefined ? 0 : strength(top(a) as WeeklyVerdict)) ||
      a.projectName.localeCompare(b.projectName),
  );
}

/** The project lines, as sections under Slack's text limits; projects past the budget are counted. */
function lineSections(weeks: readonly ProjectWeek[]): unknown[] {
  const sections: string[][] = [[]];
  let used = 0;
  let shown = 0;
  for (const week of weeks) {
    const line = projectLine(week);
    if (used + line.length + 1 > LINES_BUDGET) break;
    const current = sections.at(-1) as string[];
    if ([...current, line].join('\n').length > SLACK_LIMITS.sectionText) sections.push([line]);
    else current.push(line);
    used += line.length + 1;
    shown += 1;
  }
  const blocks: unknown[] = sections.filter((s) => s.length > 0).map((s) => mrkdwn(s.join('\n')));
  const rest = weeks.slice(shown);
  if (rest.length > 0)
    blocks.push(context(`+${plural(rest.length, 'more project', 'more projects')} (${portfolioLine(rest)}): details in the thread`));
  return blocks;
}

/** The fallback text (notifications, screen readers): the portfolio and the projects that moved. */
function fallback(weeks: readonly ProjectWeek[]): string {
  const movers = weeks.filter((w) => moves(w).length > 0);
  const named = movers.map((w) => {
    const [top] = moves(w);
    const name = projectName(w.projectName, w.projectId);
    return top === undefined ? name : `${name} ${deltaText(top.reading, top.delta) ?? ''}`.trim();
  });
  const who = named.length === 0 ? '' : `: ${listed(named, LISTED.movers)}`;
  return truncateText(`Weekly report — ${portfolioLine(weeks)}${who}`, SLACK_LIMITS.fallbackText);
}

// --- Thread: each project's details -----------------------------------------------------------

function gapText(gap: SnapshotGap | BaselineGap): string {
  const ref = gap.prompt_ref === null || gap.prompt_ref === '' ? '' : `#${inline(String(gap.prompt_ref), LEN.ref)} `;
  return `${ref}${inline(gap.prompt_text, 60)}`;
}

function gapsLines(week: ProjectWeek): string[] {
  const open = `${week.gapsTruncated ? 'at least ' : ''}${plural(week.gapsOpen, 'open gap', 'open gaps')}`;
  const changes = week.gapChanges;
  if (changes === null) return [`• Gaps: ${open}`];
  const head = `• Gaps: ${formatNumber(changes.opened.length)} opened, ${formatNumber(changes.closed.length)} closed · ${open}`;
  const lines = [changes.leftTop > 0 ? `${head} · ${plural(changes.leftTop, 'gap', 'gaps')} left the top of the list` : head];
  if (changes.opened.length > 0) lines.push(`   opened: ${listed(changes.opened.map(gapText), LISTED.gaps)}`);
  if (changes.closed.length > 0) lines.push(`   closed: ${listed(changes.closed.map(gapText), LISTED.gaps)}`);
  return lines;
}

function thresholdText(change: WeeklyVerdict): string {
  const scaled = change.threshold * (change.reading.scale === 'fraction' ? 100 : 1);
  const shown = formatNumber(Math.round(scaled * 10) / 10 || scaled);
  return `±${shown}${change.reading.kind === 'share' ? ' pts' : ''}`;
}

function changesLines(week: ProjectWeek): string[] {
  const lines = moves(week).map(
    (c) =>
      `• ${moveText(c)}: ${valueText(c.reading, c.to, c.to)}, was ${valueText(c.reading, c.from, c.from)} (normal variation ${thresholdText(c)})`,
  );
  const small = week.changes.filter((c) => !c.significant);
  if (small.length > 0)
    lines.push(
      `• Within normal variation: ${listed(
        small.map(
          (c) =>
            `${inline(c.label, LEN.label)} ${c.delta === 0 ? 'unchanged' : `${deltaText(c.reading, c.delta) ?? ''} (${thresholdText(c)})`}`,
        ),
        LISTED.noise,
      )}`,
    );
  return lines;
}

function rivalText(move: RivalMove): string {
  return `${inline(move.name, LEN.competitor)} ${formatNumber(move.to)} (${formatNumber(move.from)} a week before)`;
}

function rivalsLines(week: ProjectWeek): string[] {
  if (week.rivals.length === 0) return [];
  return [`• Prompts taken by rivals, last run: ${listed(week.rivals.map(rivalText), LISTED.rivals)}`];
}

function enginesLine(week: ProjectWeek): string[] {
  if (week.engines.length === 0) return [];
  const moved = [...week.engines].sort((a, b) => Math.abs(b.delta ?? 0) - Math.abs(a.delta ?? 0));
  const texts = moved.map((e) => {
    const delta = e.delta === null ? null : deltaText({ kind: 'other', scale: null }, e.delta);
    return `${inline(e.name, LEN.rowName)} ${formatNumber(Math.round(e.now * 100) / 100)}${delta === null ? '' : ` (${delta})`}`;
  });
  return [`• Engines, last run (change over the week): ${listed(texts, LISTED.engines)}`];
}

function detailText(week: ProjectWeek, options: WeeklyRenderOptions): string {
  const url = fillUrlTemplate(options.dashboardUrlTemplate, { project_id: week.projectId });
  const name = `${OUTCOMES[week.outcome].mark} *${mrkdwnLink(url, projectName(week.projectName, week.projectId))}*`;
  const last = week.lastRunAt === undefined ? '' : ` (last run ${slackDate(week.lastRunAt)})`;
  const lines = [
    `${name} — ${outcomeWords(week)} · ${plural(week.runs, 'run', 'runs')} this week${last}`,
    ...changesLines(week),
    ...(week.outcome === 'never' ? [] : gapsLines(week)),
    ...rivalsLines(week),
    ...enginesLine(week),
  ];
  return truncateText(lines.join('\n'), DETAIL_TEXT);
}

function detailReplies(weeks: readonly ProjectWeek[], options: WeeklyRenderOptions): SlackMessage[] {
  const detailed = weeks.slice(0, DETAILS_PER_REPLY * MAX_DETAIL_REPLIES);
  const replies: SlackMessage[] = [];
  for (let i = 0; i < detailed.length; i += DETAILS_PER_REPLY) {
    const chunk = detailed.slice(i, i + DETAILS_PER_REPLY);
    const blocks: unknown[] = [];
    chunk.forEach((week, k) => {
      if (k > 0) blocks.push({ type: 'divider' });
      blocks.push(mrkdwn(detailText(week, options)));
    });
    replies.push({
      text: `Weekly report details: ${listed(
        chunk.map((w) => projectName(w.projectName, w.projectId)),
        3,
      )}`,
      blocks,
    });
  }
  // Said once, not per project.
  const first = weeks.filter((w) => w.outcome !== 'never');
  const firsts = first.filter((w) => w.gapChanges === null).length;
  if (firsts > 0)
    replies[0]?.blocks.unshift(
      context(
        `First report here${firsts < first.length ? ` for ${plural(firsts, 'project', 'projects')}` : ''}: next week's lists the gaps opened and closed since this one.`,
      ),
    );
  const rest = weeks.slice(detailed.length);
  const last = replies.at(-1);
  if (rest.length > 0 && last !== undefined)
    last.blocks.push(
      context(
        `Not detailed here: ${listed(
          rest.map((w) => projectName(w.projectName, w.projectId)),
          LISTED.othersNamed,
        )} (the dashboard has them)`,
      ),
    );
  return replies;
}

/** The channel's report for the week ending `window.endMs`. */
export function renderWeeklyReport(weeks: readonly ProjectWeek[], window: WeekWindow, options: WeeklyRenderOptions): WeeklyReport {
  const sorted = ordered(weeks);
  const from = slackDate(isoDay(window.startMs));
  const to = slackDate(isoDay(window.endMs));
  const blocks: unknown[] = [mrkdwn(`*${portfolioLine(sorted)}*`)];
  if (weeks.length === 0) blocks.push(mrkdwn('`/visibility subscribe <project>` adds one.'));
  blocks.push(...lineSections(sorted));
  const thread = detailReplies(sorted, options);
  const details = thread.length > 0 ? ' · details and charts in the thread' : '';
  const chart = portfolioChart(weeks);
  if (chart !== null) blocks.push(chart.block);
  blocks.push(
    context(
      `📅 Weekly visibility report · ${from} → ${to}, each week's answers pooled${details} · every ${inline(options.scheduleText, 80)} · \`/visibility weekly off\` stops it here`,
    ),
  );
  if (chart === null) return { main: { text: fallback(sorted), blocks }, thread };
  // Refused by Slack: the chart's words in its place (the poster sends these once).
  const fallbackBlocks = blocks.map((b) => (b === chart.block ? context(`_Portfolio:_ ${chart.text}`) : b));
  return { main: { text: truncateText(`${fallback(sorted)}\n${chart.text}`, SLACK_LIMITS.fallbackText), blocks, fallbackBlocks }, thread };
}
