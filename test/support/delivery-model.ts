/**
 * The reference model of per-channel delivery and the commands of the model-based test: random sequences
 * of `/visibility` commands, button clicks, runs, quiet-hours sweeps and clock jumps in a home channel and
 * two others, each checked after every step against what docs/SLACK-APP.md and issue #27 say should reach
 * each channel:
 * - the home channel gets every run, unless its own members muted the project there (its own subscription);
 * - another channel gets a run while it is subscribed and not muted; a filter naming the project's engines
 *   never leaves nothing (every run moves every engine), a filter naming no engine of the project is
 *   refused, and so is a quiet window leaving less than 10 minutes a day;
 * - a run arriving inside the channel's quiet window is held, and posted by the first sweep at or after the
 *   end of that window (`catchUpAfter ≤ now`), whether or not the channel is quiet again; a sweep may post
 *   it earlier only while the channel is not quiet (e.g. after `quiet off`); a held run of a channel that
 *   opted out since may be posted once or not at all;
 * - never twice, never to a channel that opted out when the run came.
 * Quiet windows are in UTC, so the model's own minute arithmetic needs no time-zone library.
 */
import type fc from 'fast-check';
import type { DeliveryWorld, SettingsButton } from './delivery-world';
import { ENGINES, PROJECT_NAME } from './delivery-world';

export const CHANNEL_KEYS = ['home', 'b', 'c'] as const;
export type ChannelKey = (typeof CHANNEL_KEYS)[number];

const MINUTE_MS = 60_000;
const DAY_MINUTES = 24 * 60;
/** Two sweep periods: a window leaving less open each day is refused. */
const MIN_OPEN_MINUTES = 10;
const BUTTON_MUTE_MS = 7 * DAY_MINUTES * MINUTE_MS;

interface ChannelState {
  /** Subscribed to the project (the home channel: has a subscription of its own there). */
  subscribed: boolean;
  mutedUntilMs: number | undefined;
  quiet: { start: number; end: number } | undefined;
  /** A digest with settings buttons was posted here. */
  hasDigest: boolean;
}

type Expectation =
  /** Posted exactly once. */
  | { kind: 'posted' }
  /** Never posted here. */
  | { kind: 'none' }
  /** Held for the catch-up: not posted until a sweep may post it. */
  | { kind: 'held'; catchUpAfterMs: number; mayPost: boolean }
  /** Once or never. */
  | { kind: 'optional' };

interface RunState {
  eventId: string;
  label: string;
  expected: Record<ChannelKey, Expectation>;
}

export interface DeliveryModel {
  now: number;
  channels: Record<ChannelKey, ChannelState>;
  runs: RunState[];
  /** The steps so far, each with the model's clock when it ended: a failure lists them. */
  steps: string[];
}

export interface DeliveryReal {
  world: DeliveryWorld;
  channels: Record<ChannelKey, string>;
}

export function initialModel(now: number): DeliveryModel {
  const channel = (): ChannelState => ({ subscribed: false, mutedUntilMs: undefined, quiet: undefined, hasDigest: false });
  return { now, channels: { home: channel(), b: channel(), c: channel() }, runs: [], steps: [] };
}

// --- The model's rules --------------------------------------------------------------------------

function quietAt(quiet: ChannelState['quiet'], atMs: number): boolean {
  if (quiet === undefined) return false;
  const minute = Math.floor((((atMs % 86_400_000) + 86_400_000) % 86_400_000) / MINUTE_MS);
  return quiet.start < quiet.end ? minute >= quiet.start && minute < quiet.end : minute >= quiet.start || minute < quiet.end;
}

/** The first minute at or after `atMs` outside the window. */
function windowEndsAt(quiet: ChannelState['quiet'], atMs: number): number {
  let t = atMs;
  while (quietAt(quiet, t)) t = (Math.floor(t / MINUTE_MS) + 1) * MINUTE_MS;
  return t;
}

function openMinutes(start: number, end: number): number {
  return start < end ? DAY_MINUTES - (end - start) : start - end;
}

function muted(state: ChannelState, atMs: number): boolean {
  return state.mutedUntilMs !== undefined && state.mutedUntilMs > atMs;
}

/** Whether the channel should hear of a run now (before quiet hours). */
function receives(key: ChannelKey, state: ChannelState, atMs: number): boolean {
  if (key === 'home') return !(state.subscribed && muted(state, atMs));
  return state.subscribed && !muted(state, atMs);
}

// --- Checking -----------------------------------------------------------------------------------

/** Compares what reached each channel with the model; throws naming the run, the channel and both sides. */
export async function checkDeliveries(model: DeliveryModel, real: DeliveryReal): Promise<void> {
  for (const key of CHANNEL_KEYS) {
    const counts = await real.world.deliveries(real.channels[key]);
    const known = new Set(model.runs.map((r) => r.eventId));
    for (const [eventId, count] of counts)
      if (!known.has(eventId)) throw new Error(`${key}: a message brought ${eventId} (×${count}), a run this sequence never made`);
    for (const run of model.runs) {
      const count = counts.get(run.eventId) ?? 0;
      const expected = run.expected[key];
      const fail = (what: string) => {
        throw new Error(
          `${run.label} in ${key} (${real.channels[key]}): ${what}; posted ${count}×, expected ${JSON.stringify(expected)}\n` +
            `after these steps (the clock when each ended):\n${model.steps.map((step, i) => `  ${i + 1}. ${step}`).join('\n')}`,
        );
      };
      if (count > 1) fail('posted more than once');
      if (expected.kind === 'posted' && count !== 1) fail('not posted');
      if (expected.kind === 'none' && count !== 0) fail('posted to a channel that should not get it');
      if (expected.kind === 'held') {
        if (count === 1 && !expected.mayPost) fail('posted while held: its window has not ended and the channel is quiet');
        if (count === 1) run.expected[key] = { kind: 'posted' };
      }
    }
  }
}

// --- Commands -----------------------------------------------------------------------------------

type Command = fc.AsyncCommand<DeliveryModel, DeliveryReal>;

abstract class Step implements Command {
  check(_model: Readonly<DeliveryModel>): boolean {
    return true;
  }
  async run(model: DeliveryModel, real: DeliveryReal): Promise<void> {
    await this.act(model, real);
    model.steps.push(`${new Date(model.now).toISOString().slice(0, 16)}Z  ${this.toString()}`);
    await checkDeliveries(model, real);
  }
  abstract act(model: DeliveryModel, real: DeliveryReal): Promise<void>;
  abstract toString(): string;
}

/** A `/visibility` command typed in a channel; `expect` moves the model as the intended behaviour says. */
class SlashCommand extends Step {
  constructor(
    readonly key: ChannelKey,
    readonly text: string,
    private readonly expect: (state: ChannelState, model: DeliveryModel) => void,
    private readonly afterDigest = false,
  ) {
    super();
  }
  override check(model: Readonly<DeliveryModel>): boolean {
    // A filter is checked against the project's engines: asked once a run was digested (routed somewhere: its snapshot is kept).
    return !this.afterDigest || model.runs.some((run) => CHANNEL_KEYS.some((key) => run.expected[key].kind !== 'none'));
  }
  async act(model: DeliveryModel, real: DeliveryReal): Promise<void> {
    await real.world.command(real.channels[this.key], this.text);
    this.expect(model.channels[this.key], model);
  }
  toString(): string {
    return `${this.key}: /visibility ${this.text}`;
  }
}

const subscribed = (f: (state: ChannelState, model: DeliveryModel) => void) => (state: ChannelState, model: DeliveryModel) => {
  if (state.subscribed) f(state, model);
};

const MUTE_DURATIONS: readonly [string, number][] = [
  ['30m', 30],
  ['2h', 120],
  ['12h', 720],
  ['7d', 7 * DAY_MINUTES],
  ['1w', 7 * DAY_MINUTES],
  ['7 days', 7 * DAY_MINUTES],
  ['1 week', 7 * DAY_MINUTES],
];

function subscribeCommand(key: ChannelKey): Command {
  return new SlashCommand(key, `subscribe ${PROJECT_NAME}`, (state) => {
    if (state.subscribed) return;
    state.subscribed = true;
    state.mutedUntilMs = undefined;
  });
}

function unsubscribeCommand(key: ChannelKey): Command {
  return new SlashCommand(
    key,
    `unsubscribe ${PROJECT_NAME}`,
    subscribed((state) => {
      state.subscribed = false;
      state.mutedUntilMs = undefined;
    }),
  );
}

function muteCommand(key: ChannelKey, duration: [string, number]): Command {
  return new SlashCommand(
    key,
    `mute ${PROJECT_NAME} ${duration[0]}`,
    subscribed((state, model) => {
      state.mutedUntilMs = model.now + duration[1] * MINUTE_MS;
    }),
  );
}

function unmuteCommand(key: ChannelKey): Command {
  return new SlashCommand(
    key,
    `unmute ${PROJECT_NAME}`,
    subscribed((state) => {
      state.mutedUntilMs = undefined;
    }),
  );
}

/** The mode changes a digest's form, never whether it is posted. */
function modeCommand(key: ChannelKey, mode: 'full' | 'changes'): Command {
  return new SlashCommand(key, `mode ${PROJECT_NAME} ${mode}`, () => undefined);
}

/** Every filter here keeps something of every run (or is refused): none changes what is posted. */
const FILTERS = [`engines=${ENGINES[0]}`, `engines=${ENGINES[1]},${ENGINES[0]}`, 'alerts>=warning', 'off', 'engines=ChatGTP'];

function filterCommand(key: ChannelKey, filter: string): Command {
  return new SlashCommand(key, `filter ${PROJECT_NAME} ${filter}`, () => undefined, true);
}

const clock = (minute: number) => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

function quietCommand(key: ChannelKey, window: { start: number; end: number } | null): Command {
  const text = window === null ? 'quiet off' : `quiet ${clock(window.start)}-${clock(window.end)} UTC`;
  return new SlashCommand(key, text, (state) => {
    if (window === null) state.quiet = undefined;
    else if (openMinutes(window.start, window.end) >= MIN_OPEN_MINUTES) state.quiet = window;
  });
}

class ClickButton extends Step {
  constructor(
    readonly key: ChannelKey,
    readonly button: SettingsButton,
  ) {
    super();
  }
  override check(model: Readonly<DeliveryModel>): boolean {
    return model.channels[this.key].hasDigest;
  }
  async act(model: DeliveryModel, real: DeliveryReal): Promise<void> {
    if (!(await real.world.click(real.channels[this.key], this.button))) throw new Error(`${this.key}: no digest with buttons to click`);
    // A click on a digest of a channel not subscribed subscribes it with the setting.
    const state = model.channels[this.key];
    if (!state.subscribed) {
      state.subscribed = true;
      state.mutedUntilMs = undefined;
    }
    if (this.button === 'mute') state.mutedUntilMs = model.now + BUTTON_MUTE_MS;
  }
  toString(): string {
    return `${this.key}: click ${this.button === 'mute' ? '"Mute 7 days"' : 'the mode button'} on the newest digest`;
  }
}

class Run extends Step {
  async act(model: DeliveryModel, real: DeliveryReal): Promise<void> {
    // Runs come in order, a minute apart at least (two at the same instant: the second is superseded).
    model.now += MINUTE_MS;
    real.world.now = model.now;
    const eventId = await real.world.run();
    const label = `run ${model.runs.length + 1} (${new Date(model.now).toISOString()})`;
    const expected = {} as Record<ChannelKey, Expectation>;
    for (const key of CHANNEL_KEYS) {
      const state = model.channels[key];
      if (!receives(key, state, model.now)) expected[key] = { kind: 'none' };
      else if (quietAt(state.quiet, model.now))
        expected[key] = { kind: 'held', catchUpAfterMs: windowEndsAt(state.quiet, model.now), mayPost: false };
      else {
        expected[key] = { kind: 'posted' };
        state.hasDigest = true;
      }
    }
    model.runs.push({ eventId, label, expected });
  }
  toString(): string {
    return 'run';
  }
}

/** What a sweep at `model.now` must and may post: a held run whose window has ended is due, another may go while the channel is not quiet. */
function swept(model: DeliveryModel): void {
  for (const run of model.runs)
    for (const key of CHANNEL_KEYS) {
      const expected = run.expected[key];
      if (expected.kind !== 'held') continue;
      const state = model.channels[key];
      if (expected.catchUpAfterMs <= model.now)
        run.expected[key] = receives(key, state, model.now) ? { kind: 'posted' } : { kind: 'optional' };
      else expected.mayPost = !quietAt(state.quiet, model.now);
    }
}

/** One sweep now: as after a gap in the schedule (a clock jump without sweeps). */
class Sweep extends Step {
  async act(model: DeliveryModel, real: DeliveryReal): Promise<void> {
    await real.world.sweep();
    swept(model);
  }
  toString(): string {
    return 'sweep';
  }
}

const SWEEP_PERIOD_MINUTES = 5;

/** Time passes as in production: a sweep every 5 minutes, each checked. */
class Wait extends Step {
  constructor(readonly minutes: number) {
    super();
  }
  override async run(model: DeliveryModel, real: DeliveryReal): Promise<void> {
    for (let waited = SWEEP_PERIOD_MINUTES; waited <= this.minutes; waited += SWEEP_PERIOD_MINUTES) {
      model.now += SWEEP_PERIOD_MINUTES * MINUTE_MS;
      real.world.now = model.now;
      await real.world.sweep();
      swept(model);
      const step = waited < this.minutes ? `the sweep ${waited}m into "${this.toString()}"` : this.toString();
      model.steps.push(`${new Date(model.now).toISOString().slice(0, 16)}Z  ${step}`);
      await checkDeliveries(model, real);
      if (waited < this.minutes) model.steps.pop();
    }
  }
  act(): Promise<void> {
    return Promise.resolve();
  }
  toString(): string {
    return `wait ${this.minutes % 60 === 0 ? `${this.minutes / 60}h` : `${this.minutes}m`} (a sweep every 5m)`;
  }
}

class ClockJump extends Step {
  constructor(readonly minutes: number) {
    super();
  }
  act(model: DeliveryModel, real: DeliveryReal): Promise<void> {
    model.now += this.minutes * MINUTE_MS;
    real.world.now = model.now;
    return Promise.resolve();
  }
  toString(): string {
    return this.minutes % DAY_MINUTES === 0
      ? `clock +${this.minutes / DAY_MINUTES}d`
      : this.minutes % 60 === 0
        ? `clock +${this.minutes / 60}h`
        : `clock +${this.minutes}m`;
  }
}

// --- Generators ---------------------------------------------------------------------------------

/** The commands of a sequence; `fc` is passed in so this module stays free of a runtime import the support files don't need. */
export function deliveryCommands(fcApi: typeof fc, maxCommands: number) {
  const key = fcApi.constantFrom<ChannelKey>(...CHANNEL_KEYS);
  const hour = fcApi.integer({ min: 0, max: 23 });
  const window = fcApi.oneof(
    fcApi
      .tuple(hour, hour)
      .filter(([a, b]) => a !== b)
      .map(([a, b]) => ({ start: a * 60, end: b * 60 })),
    // Leave one or two minutes a day open: refused.
    fcApi.constantFrom({ start: 0, end: 23 * 60 + 59 }, { start: 9 * 60, end: 8 * 60 + 58 }),
  );
  return fcApi.commands(
    [
      key.map(subscribeCommand),
      key.map(unsubscribeCommand),
      fcApi.tuple(key, fcApi.constantFrom(...MUTE_DURATIONS)).map(([k, d]) => muteCommand(k, d)),
      key.map(unmuteCommand),
      fcApi.tuple(key, fcApi.constantFrom('full' as const, 'changes' as const)).map(([k, m]) => modeCommand(k, m)),
      fcApi.tuple(key, fcApi.constantFrom(...FILTERS)).map(([k, f]) => filterCommand(k, f)),
      fcApi.tuple(key, fcApi.option(window, { freq: 4 })).map(([k, w]) => quietCommand(k, w)),
      fcApi.tuple(key, fcApi.constantFrom<SettingsButton>('mute', 'mode')).map(([k, b]) => new ClickButton(k, b)),
      fcApi.constant(new Run()),
      fcApi.constant(new Run()),
      fcApi.constant(new Run()),
      fcApi.constant(new Sweep()),
      fcApi.constant(new Sweep()),
      fcApi.constantFrom(5, 45, 3 * 60, 8 * 60, DAY_MINUTES, 8 * DAY_MINUTES).map((m) => new ClockJump(m)),
      fcApi.constantFrom(30, 3 * 60).map((m) => new Wait(m)),
    ],
    { maxCommands, size: 'max' },
  );
}

/**
 * Sequences every run tries first (fast-check `examples`): shapes random sequences reach too rarely to
 * catch a regression every time.
 */
export function regressionExamples(): [Iterable<Command>][] {
  return [
    // Runs held in two windows a day apart; a sweep while quiet posts the first (due) and keeps the second.
    [[quietCommand('home', { start: 0, end: 21 * 60 }), new Run(), new ClockJump(DAY_MINUTES), new Run(), new Sweep()]],
    // A filter naming no engine of the project is refused: it would leave the channel nothing.
    [[new Run(), subscribeCommand('c'), filterCommand('c', 'engines=ChatGTP'), new Run()]],
  ];
}

/** `FC_SEED` and `FC_PATH` (from a failure's report) replay that failure. */
export function replayParameters(): { seed?: number; path?: string } {
  const seed = process.env['FC_SEED'];
  const path = process.env['FC_PATH'];
  return { ...(seed === undefined ? {} : { seed: Number(seed) }), ...(path === undefined ? {} : { path }) };
}
