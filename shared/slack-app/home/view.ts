/**
 * The App Home view of the portfolio (pure): a header, the page's projects worst first — each its
 * mark and headline as its digest gave them, its headline metric and this week's change (the weekly
 * verdict's, with whether it is beyond normal variation), its top rival, when it last ran, and where
 * its digests go — then Previous / Next. Slack takes at most 100 blocks a view, so the portfolio is
 * paged (`HOME_PROJECTS_PER_PAGE`). "Open latest digest" links to the stored message (or the home
 * channel); "Subscribe a channel" appears only for a user the `slackAccess` policy lets change.
 * Every service text goes through the one sanitizer; every figure is the verdict model's, formatted.
 */
import { readMetric } from '../../digest/noise';
import { inline, LEN, plural } from '../../digest/render/format';
import { deltaText, valueText } from '../../digest/render/units';
import { isChannelId } from '../../routing';
import { SLACK_LIMITS, truncateText } from '../../slack-text';
import { slackDate } from '../replies';
import { storedHeadline } from '../status';
import { HOME_ACTION_IDS, HOME_PROJECT_BLOCK_PREFIX, pageMetadata } from './actions';
import type { PortfolioChannel, PortfolioEntry } from './portfolio';
import type { HomeView } from './ports';

/** Slack's limit of blocks in a Home view. */
export const HOME_VIEW_MAX_BLOCKS = 100;
/** Blocks per project (its section, channels, buttons, divider): 20 of them and the page's 6 own blocks stay under 100. */
export const HOME_PROJECTS_PER_PAGE = 20;
const RIVAL_CHARS = 40;
const CHANNELS_SHOWN = 8;

export interface HomeViewOptions {
  /** 0-based; a page past the last shows the last. */
  page: number;
  /** The `slackAccess` policy lets this user change subscriptions: the view has "Subscribe a channel". */
  canChange: boolean;
  /** The answer to a subscribe from the tab (safe mrkdwn, the reply `/visibility subscribe` gives). */
  notice?: string | undefined;
  nowMs: number;
}

export function pageCount(projects: number): number {
  return Math.max(1, Math.ceil(projects / HOME_PROJECTS_PER_PAGE));
}

export function renderHomeView(entries: readonly PortfolioEntry[], options: HomeViewOptions): HomeView {
  const pages = pageCount(entries.length);
  const page = Math.min(Math.max(0, Math.floor(options.page)), pages - 1);
  const shown = entries.slice(page * HOME_PROJECTS_PER_PAGE, (page + 1) * HOME_PROJECTS_PER_PAGE);
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: 'AI visibility — every project', emoji: true } },
    context(summary(entries, page, pages, options.nowMs)),
    ...(options.notice === undefined ? [] : [section(truncateText(options.notice, SLACK_LIMITS.sectionText))]),
    { type: 'divider' },
    ...(entries.length === 0 ? [section('No project yet: the read key sees none.')] : []),
    ...shown.flatMap((entry) => projectBlocks(entry, options.canChange)),
    ...pageButtons(page, pages),
  ];
  return { type: 'home', blocks, private_metadata: pageMetadata(page) };
}

/** "12 projects · 3 🔴 · 1 🟡 · page 1 of 2 · as of <date>". */
function summary(entries: readonly PortfolioEntry[], page: number, pages: number, nowMs: number): string {
  const marks = new Map<string, number>();
  for (const e of entries) if (e.latest !== null) marks.set(e.latest.mark, (marks.get(e.latest.mark) ?? 0) + 1);
  const counts = [...marks].map(([mark, n]) => `${n} ${mark}`);
  const paging = pages > 1 ? [`page ${page + 1} of ${pages}`] : [];
  return [plural(entries.length, 'project', 'projects'), ...counts, ...paging, `worst first · as of ${slackDate(nowMs)}`].join(' · ');
}

function projectBlocks(entry: PortfolioEntry, canChange: boolean): unknown[] {
  const actions = projectActions(entry, canChange);
  return [
    section(truncateText(projectText(entry), SLACK_LIMITS.sectionText)),
    context(channelsText(entry.channels)),
    ...(actions === null ? [] : [actions]),
    { type: 'divider' },
  ];
}

/** "🔴 *Voltway* — Visibility score −10.2 pts" / figures line / rival and last run. */
function projectText(entry: PortfolioEntry): string {
  const name = `*${inline(entry.project.name, LEN.projectName) || inline(entry.project.id, LEN.id)}*`;
  const verdict =
    entry.latest === null ? `${name} — no digest yet` : `${entry.latest.mark} ${name} — ${storedHeadline(entry.latest.headline)}`;
  const facts = [figureText(entry), rivalText(entry), lastRunText(entry)].filter((t) => t !== '');
  return [verdict, facts.join(' · ')].filter((t) => t !== '').join('\n');
}

/** "Visibility score 42 % (−3.8 pts this week)" or "… (+0.4 pts this week, within normal variation)". */
function figureText(entry: PortfolioEntry): string {
  const change = entry.headline;
  if (change !== null) {
    const delta = deltaText(change.reading, change.delta);
    const noise = change.significant ? '' : ', within normal variation';
    const week = delta === null ? '' : ` (${delta} this week${noise})`;
    return `${inline(change.label, LEN.label)} ${valueText(change.reading, change.to, change.to)}${week}`;
  }
  if (entry.latestValue === null) return '';
  const { label, value } = entry.latestValue;
  return `${inline(label, LEN.label)} ${valueText(readMetric(label, [value]), value, value)} (${weekWords(entry)})`;
}

function weekWords(entry: PortfolioEntry): string {
  if (entry.week === 'first') return 'first week: nothing to compare yet';
  if (entry.week === 'no-runs') return 'no runs this week';
  if (entry.week === 'no-data') return 'no data this week';
  return 'this week not compared';
}

function rivalText(entry: PortfolioEntry): string {
  const rival = entry.topRival;
  return rival === null ? '' : `top rival ${inline(rival.name, RIVAL_CHARS)} (${plural(rival.prompts, 'prompt', 'prompts')})`;
}

function lastRunText(entry: PortfolioEntry): string {
  const atMs = entry.lastRunAt === undefined ? Number.NaN : Date.parse(entry.lastRunAt);
  return Number.isFinite(atMs) ? `last ran ${slackDate(atMs)}` : 'never ran';
}

const STATE_WORDS: { readonly [S in PortfolioChannel['state']]: string } = {
  delivered: '',
  muted: ' (muted)',
  quiet: ' (quiet hours now)',
  broken: ' (broken: the bot can’t post there)',
};

/** "Digests go to #ops (home) · #alerts (muted) · …", or that none does. */
function channelsText(channels: readonly PortfolioChannel[]): string {
  if (channels.length === 0) return 'Digests go nowhere: no home channel and no subscription';
  const shown = channels.slice(0, CHANNELS_SHOWN).map((c) => `${channelRef(c.channel)}${c.home ? ' (home)' : ''}${STATE_WORDS[c.state]}`);
  const more = channels.length > CHANNELS_SHOWN ? ` · +${channels.length - CHANNELS_SHOWN} more` : '';
  return `Digests go to ${shown.join(' · ')}${more}`;
}

function channelRef(channel: string): string {
  return isChannelId(channel) ? `<#${channel}>` : inline(channel, LEN.id);
}

/** "Open latest digest" (the stored message, else the home channel) and, for who may change, "Subscribe a channel". */
function projectActions(entry: PortfolioEntry, canChange: boolean): unknown {
  const url = digestUrl(entry);
  const blockId = `${HOME_PROJECT_BLOCK_PREFIX}${entry.project.id}`;
  const elements: unknown[] = [
    ...(url === null ? [] : [{ type: 'button', action_id: HOME_ACTION_IDS.openDigest, text: plain('Open latest digest'), url }]),
    // The select's block names the project: a block id past Slack's limit can't, so that project gets no select.
    ...(canChange && blockId.length <= SLACK_LIMITS.blockId
      ? [
          {
            type: 'conversations_select',
            action_id: HOME_ACTION_IDS.subscribe,
            placeholder: plain('Subscribe a channel'),
            filter: { include: ['public', 'private'], exclude_bot_users: true, exclude_external_shared_channels: true },
          },
        ]
      : []),
  ];
  return elements.length === 0 ? null : { type: 'actions', block_id: blockId.slice(0, SLACK_LIMITS.blockId), elements };
}

function digestUrl(entry: PortfolioEntry): string | null {
  const digest = entry.latestDigest;
  if (digest !== null && isChannelId(digest.channel) && /^\d+\.\d+$/.test(digest.ts))
    return `https://slack.com/archives/${digest.channel}/p${digest.ts.replace('.', '')}`;
  const home = entry.channels.find((c) => c.home && isChannelId(c.channel));
  return home === undefined ? null : `https://slack.com/app_redirect?channel=${home.channel}`;
}

function pageButtons(page: number, pages: number): unknown[] {
  if (pages <= 1) return [];
  const button = (actionId: string, text: string, to: number) => ({
    type: 'button',
    action_id: actionId,
    text: plain(text),
    value: String(to),
  });
  const elements = [
    ...(page > 0 ? [button(HOME_ACTION_IDS.previous, '← Previous', page - 1)] : []),
    ...(page < pages - 1 ? [button(HOME_ACTION_IDS.next, 'Next →', page + 1)] : []),
  ];
  return [{ type: 'actions', block_id: 'home_pages', elements }, context(`Page ${page + 1} of ${pages}`)];
}

function section(text: string) {
  return { type: 'section', text: { type: 'mrkdwn', text, verbatim: true } };
}

function context(text: string) {
  return { type: 'context', elements: [{ type: 'mrkdwn', text, verbatim: true }] };
}

function plain(text: string) {
  return { type: 'plain_text', text, emoji: true };
}
