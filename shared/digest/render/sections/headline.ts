/**
 * The headline: status mark, project (linked), and what the run means in a few words — the causes of the
 * significant changes, the position on a baseline, or why there is nothing to compare. Also the
 * notification text.
 */
import { mrkdwnLink } from '../../links';
import { formatNumber, inline, LEN, plural } from '../format';
import { engineTotal, gapCountText, type DigestModel } from '../model';
import { assess, type StatusMark } from '../significance';
import { valueText } from '../units';

export type { StatusMark } from '../significance';

/** How many causes the headline names. */
const HEADLINE_CAUSES = 3;

/** "220 open gaps" from a gap-count metric when there is one (the whole count), else the gaps read ("50+"). */
export function openGapsText(model: DigestModel): string {
  const metric = model.metrics.find(
    (m) => m.reading.kind === 'count' && /\bopen gaps?\b/i.test(m.label.replace(/_/g, ' ')) && m.value !== null,
  );
  const count = metric?.value ?? null;
  return count !== null
    ? plural(count, 'open gap', 'open gaps')
    : `${gapCountText(model)} open ${model.gaps.length === 1 && !model.truncated ? 'gap' : 'gaps'}`;
}

/** "on all 5 engines" / "on 3 of 5 engines" / '' — where the project loses prompts. */
export function losingOnText(model: DigestModel): string {
  const losing = new Set(model.gaps.flatMap((g) => g.platforms_losing.map((p) => p.trim().toLowerCase()).filter((p) => p.length > 0))).size;
  const total = engineTotal(model);
  if (losing === 0 || total === 0) return '';
  return losing >= total ? ` on all ${formatNumber(total)} engines` : ` on ${formatNumber(losing)} of ${formatNumber(total)} engines`;
}

/** "top rival TrailForge (5 prompts)" or null. */
export function topRivalText(model: DigestModel): string | null {
  const top = model.rivals[0];
  if (top === undefined) return null;
  const of = model.truncated ? ` of the top ${formatNumber(model.gaps.length)}` : '';
  return `top rival ${inline(top.name, LEN.competitor)} (${plural(top.prompts, 'prompt', 'prompts')}${of})`;
}

/** The position in a few words: open gaps and where, the lead metric, the top rival. */
export function positionParts(model: DigestModel): string[] {
  const lead = model.metrics.find((m) => m.lead && m.value !== null);
  const rival = topRivalText(model);
  return [
    `${openGapsText(model)}${losingOnText(model)}`,
    ...(lead ? [`${inline(lead.label, LEN.label)} ${valueText(lead.reading, lead.value, lead.raw)}`] : []),
    ...(rival !== null ? [rival] : []),
  ];
}

/** Why a data-quality run is not judged: "only 3 answers — usually 1,240", "no answers in this run". */
function qualityPhrase(model: DigestModel): string | null {
  const quality = model.verdict.quality;
  if (quality.state === 'status') return `run status: ${inline(quality.status, LEN.status)} — not compared`;
  if (quality.state === 'no-answers')
    return `no answers in this run${quality.usual !== null ? ` — usually ${formatNumber(quality.usual)}` : ''}`;
  if (quality.state === 'few-answers')
    return `only ${plural(quality.answers, 'answer', 'answers')} — usually ${formatNumber(quality.usual)}; not compared`;
  return null;
}

function headlineParts(model: DigestModel): string[] {
  const quality = qualityPhrase(model);
  if (quality !== null) return [quality];
  if (model.diff.firstDigest) return [`baseline: ${positionParts(model).join(' · ')}`];
  const causes = assess(model)
    .changes.slice(0, HEADLINE_CAUSES)
    .map((c) => c.phrase);
  return causes.length > 0 ? causes : ['no change beyond normal variation since the last run'];
}

/** The mark: the verdict's (⚪ on a baseline, ⚠️ for a run too thin to judge). */
export function markOf(model: DigestModel): StatusMark {
  return assess(model).mark;
}

/** The headline line as mrkdwn (project bold, linked when there is a dashboard template). */
export function headlineText(model: DigestModel): string {
  return `${markOf(model)} *${mrkdwnLink(model.projectUrl, model.name)}* — ${headlineParts(model).join(' · ')}`;
}

/** What the headline says of the run, after the mark and the project (no markup). */
export function headlinePhrase(model: DigestModel): string {
  return headlineParts(model).join(' · ').replace(/\*/g, '');
}

/** The headline as the message's notification text (no markup). */
export function headlineFallback(model: DigestModel): string {
  return `${markOf(model)} ${model.name} — ${headlinePhrase(model)}`;
}
