/**
 * Each registry refuses a missing entry at compile time: a table with one entry left out is not of the
 * registry's type (`@ts-expect-error`, checked by `tsc`, which fails if the line compiles), and the same
 * table with the entry put back is. A new event type, slash command or metric is thus a build error
 * until every table has its entry.
 */
import { describe, expect, it } from 'vitest';
import { SEND_DATA } from '../../cli/commands/send';
import { SIMULATED_EVENTS } from '../../local/simulator/webhooks';
import { METRIC_REGISTRY } from '../../shared/contracts';
import { METRIC_KINDS } from '../../shared/digest/noise';
import { EVENT_TYPES } from '../../shared/events';
import { COMMANDS } from '../../shared/slack-app/commands';
import { SLACK_EVENTS } from '../../shared/slack-app/events';

/** Compiles only when `table` is a whole `T`. */
function whole<T>(table: T): T {
  return table;
}

describe('registries refuse a missing entry', () => {
  it('EVENT_TYPES (shared/events.ts): every handled event type', () => {
    const { 'run.completed': entry, ...rest } = EVENT_TYPES;
    // @ts-expect-error 'run.completed' is missing
    whole<typeof EVENT_TYPES>(rest);
    expect(whole<typeof EVENT_TYPES>({ ...rest, 'run.completed': entry })).toEqual(EVENT_TYPES);
  });

  it('COMMANDS (shared/slack-app/commands.ts): every slash command verb', () => {
    const { subscribe, ...rest } = COMMANDS;
    // @ts-expect-error 'subscribe' is missing
    whole<typeof COMMANDS>(rest);
    expect(whole<typeof COMMANDS>({ ...rest, subscribe })).toEqual(COMMANDS);
  });

  it('SLACK_EVENTS (shared/slack-app/events.ts): every handled Slack event type', () => {
    const { app_home_opened, ...rest } = SLACK_EVENTS;
    // @ts-expect-error 'app_home_opened' is missing
    whole<typeof SLACK_EVENTS>(rest);
    expect(whole<typeof SLACK_EVENTS>({ ...rest, app_home_opened })).toEqual(SLACK_EVENTS);
  });

  it('METRIC_REGISTRY (shared/contracts.ts): every metric', () => {
    const { DeliveryAccepted, ...rest } = METRIC_REGISTRY;
    // @ts-expect-error 'DeliveryAccepted' is missing
    whole<typeof METRIC_REGISTRY>(rest);
    expect(whole<typeof METRIC_REGISTRY>({ ...rest, DeliveryAccepted })).toEqual(METRIC_REGISTRY);
  });

  it('METRIC_KINDS (shared/digest/noise.ts): every metric kind', () => {
    const { share, ...rest } = METRIC_KINDS;
    // @ts-expect-error 'share' is missing
    whole<typeof METRIC_KINDS>(rest);
    expect(whole<typeof METRIC_KINDS>({ ...rest, share })).toEqual(METRIC_KINDS);
  });

  it('SEND_DATA (cli/commands/send.ts): every handled event type', () => {
    const { 'run.completed': entry, ...rest } = SEND_DATA;
    // @ts-expect-error 'run.completed' is missing
    whole<typeof SEND_DATA>(rest);
    expect(whole<typeof SEND_DATA>({ ...rest, 'run.completed': entry })).toEqual(SEND_DATA);
  });

  it('SIMULATED_EVENTS (local/simulator/webhooks.ts): every handled event type', () => {
    const { 'run.completed': entry, ...rest } = SIMULATED_EVENTS;
    // @ts-expect-error 'run.completed' is missing
    whole<typeof SIMULATED_EVENTS>(rest);
    expect(whole<typeof SIMULATED_EVENTS>({ ...rest, 'run.completed': entry })).toEqual(SIMULATED_EVENTS);
  });
});
