/** One line of figures (the position now) and one of what moved only within its noise. */
import type { ContextBlock } from '@slack/web-api';
import { context } from '../blocks';
import { inline, LEN, plural } from '../format';
import type { DigestModel } from '../model';
import { withinNoise, withinNoiseText } from '../significance';
import { valueText } from '../units';
import { openGapsText, topRivalText } from './headline';

/** Metrics on the figures line (the first numeric ones in API order). */
const FIGURES_SHOWN = 3;
/** Within-noise moves named in the main message; the thread's engines reply has the rest. */
const NOISE_SHOWN = 3;

/** `Visibility score 50.5 % · Average position 3.6 · 12 open gaps · top rival TrailForge (5 prompts)`. */
export function figuresText(model: DigestModel, alertsWhere = 'in the thread'): string {
  const metrics = model.metrics
    .filter((m) => m.value !== null && !/\bgaps?\b/i.test(m.label.replace(/_/g, ' ')))
    .slice(0, FIGURES_SHOWN)
    .map((m) => `${inline(m.label, LEN.label) || '—'} ${valueText(m.reading, m.value, m.raw)}`);
  const rival = topRivalText(model);
  // Alerts are a standing state, not a change: the severe ones are counted here, all are in the thread.
  const severe = model.alerts.filter((a) => a.severity === 'critical' || a.severity === 'error').length;
  const alerts = severe > 0 ? [`🚨 ${plural(severe, 'critical alert', 'critical alerts')} (${alertsWhere})`] : [];
  return [...metrics, openGapsText(model), ...(rival !== null ? [rival] : []), ...alerts].join(' · ');
}

export function figuresLine(model: DigestModel, alertsWhere?: string): ContextBlock[] {
  return [context(figuresText(model, alertsWhere))];
}

/** `Within noise: Share of voice +4 pts (±18 pts at 25 answers) · …` — shown, never called a change. */
export function noiseLine(model: DigestModel): ContextBlock[] {
  const moves = withinNoise(model);
  if (moves.length === 0) return [];
  const shown = moves.slice(0, NOISE_SHOWN).map(withinNoiseText);
  const more = moves.length > NOISE_SHOWN ? ` · +${moves.length - NOISE_SHOWN} more in the thread` : '';
  return [context(`_Within noise:_ ${shown.join(' · ')}${more}`)];
}
