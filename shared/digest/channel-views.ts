/**
 * One run's digest model, built once, and each channel's view of it. A channel without a filter reads
 * the run's model as it is: its buttons, mode and "about" note change no figure, so only the options
 * differ. A filtered channel's model is built once from its filtered input (./channel-filter.ts). The
 * gate (./channel-gate.ts), a held digest's headline and the rendered message all read these models.
 */
import type { ChannelFilter } from '../ports';
import { filterDigestInput, isEmptyFilter } from './channel-filter';
import type { ChannelTarget } from './fan-out';
import { buildModel, type DigestInput } from './render';
import type { DigestModel, DigestOptions } from './render/model';

/** What a channel sets on its digest that no figure depends on. */
export type ChannelOptions = Pick<DigestOptions, 'mode' | 'aboutShown' | 'channel'>;

export interface RunViews {
  /** The run's model, no channel's filter applied. */
  run: DigestModel;
  /** The run as the channel's filter lets it through (the run's model when it has none). */
  filtered(target: ChannelTarget): DigestModel;
  /** The channel's digest: its filter applied and its options set. */
  modelFor(target: ChannelTarget): DigestModel;
}

/** The channel's filter, from its subscription (configuration-routed channels have none). */
export function filterOf(target: ChannelTarget): ChannelFilter | undefined {
  return target.subscription?.filter;
}

export function runViews(input: DigestInput, optionsFor: (target: ChannelTarget) => ChannelOptions): RunViews {
  const run = buildModel(input);
  const byChannel = new Map<string, DigestModel>();
  const filtered = (target: ChannelTarget): DigestModel => {
    const filter = filterOf(target);
    if (isEmptyFilter(filter)) return run;
    const known = byChannel.get(target.channel);
    if (known !== undefined) return known;
    const model = buildModel(filterDigestInput(input, filter));
    byChannel.set(target.channel, model);
    return model;
  };
  const modelFor = (target: ChannelTarget): DigestModel => {
    const model = filtered(target);
    return { ...model, input: { ...model.input, options: { ...model.input.options, ...optionsFor(target) } } };
  };
  return { run, filtered, modelFor };
}
