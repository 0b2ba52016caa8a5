/**
 * The Events API's uninstall entries (shared/slack-app/events.ts) parsed from Slack's envelopes and
 * dispatched by answerEvent to the uninstall purge, with the installations ports' in-memory doubles:
 * the envelope names the team (or the org, for an org-wide install), a bot token revoked purges like an
 * uninstall, a user token does not, and a stage that keeps no installations ignores both.
 */
import { describe, expect, it } from 'vitest';
import { parseEventEnvelope } from '../../shared/slack-app/events';
import type { ReplayGuard } from '../../shared/slack-app/ports';
import { answerEvent, type EventDeps } from '../../shared/slack-app/slack-events';
import { RecordingCommandQueue } from '../support/command-queue';
import { installationOf, MemoryInstallationStore, MemoryTeamData } from '../support/installations';
import { RecordingObserver } from '../support/recording-observer';

const SIGNED = { mac: 'unused', timestampSeconds: 0 };

/** Each event id acted on once, as the table's guard does. */
function memoryReplays(): ReplayGuard {
  const seen = new Set<string>();
  return {
    firstSeen: ({ mac }) => {
      const first = !seen.has(mac);
      seen.add(mac);
      return Promise.resolve(first);
    },
  };
}

function world(keepsInstallations = true) {
  const store = new MemoryInstallationStore();
  const teamData = new MemoryTeamData({ T0GONE: { channels: ['C1'], routes: ['C1'] }, T0STAYS: { channels: ['C9'], routes: [] } });
  const log = new RecordingObserver();
  const deps: EventDeps = {
    postedLedger: undefined,
    installations: keepsInstallations ? { store, teamData } : undefined,
    replays: memoryReplays(),
    queue: new RecordingCommandQueue(),
    clock: { now: () => 0 },
    log,
  };
  return { store, teamData, log, deps };
}

function envelope(eventId: string, event: Record<string, unknown>, ids: Record<string, unknown> = { team_id: 'T0GONE' }) {
  const parsed = parseEventEnvelope(JSON.stringify({ type: 'event_callback', api_app_id: 'A0APP', event_id: eventId, event, ...ids }));
  if (!parsed.ok || parsed.envelope.kind === 'url_verification') throw new Error(`not an event: ${JSON.stringify(parsed)}`);
  return parsed.envelope;
}

const removed = (log: RecordingObserver) => log.entries.filter((e) => e.message.startsWith('Slack app removed'));

describe('uninstall events through the Events API table', () => {
  it('app_uninstalled purges the team it names, tokens_revoked after it finds nothing left; ops hears it once', async () => {
    const { store, teamData, log, deps } = world();
    await store.save(installationOf({ teamId: 'T0GONE' }));
    await store.save(installationOf({ teamId: 'T0STAYS' }));
    expect(await answerEvent(envelope('Ev1', { type: 'app_uninstalled' }), SIGNED, deps)).toBe('acted');
    const revoked = envelope('Ev2', { type: 'tokens_revoked', tokens: { oauth: [], bot: ['U0BOT'] } });
    expect(await answerEvent(revoked, SIGNED, deps)).toBe('acted');
    expect(await store.get('T0GONE')).toBeUndefined();
    expect(teamData.channels.has('T0GONE')).toBe(false);
    expect(await store.get('T0STAYS')).toBeDefined();
    expect(removed(log)).toHaveLength(1);
  });

  it('a bot token revoked alone purges; a user token alone does not', async () => {
    const { store, deps } = world();
    await store.save(installationOf({ teamId: 'T0GONE' }));
    expect(await answerEvent(envelope('Ev3', { type: 'tokens_revoked', tokens: { oauth: ['U1'] } }), SIGNED, deps)).toBe('ignored');
    expect(await store.get('T0GONE')).toBeDefined();
    expect(await answerEvent(envelope('Ev4', { type: 'tokens_revoked', tokens: { bot: ['U0BOT'] } }), SIGNED, deps)).toBe('acted');
    expect(await store.get('T0GONE')).toBeUndefined();
  });

  it("an org-wide install's uninstall removes the org's installation", async () => {
    const { store, deps } = world();
    await store.save(installationOf({ enterpriseId: 'E0ORG', isEnterpriseInstall: true }));
    const org = { team_id: 'T0GONE', enterprise_id: 'E0ORG', is_enterprise_install: true };
    expect(await answerEvent(envelope('Ev5', { type: 'app_uninstalled' }, org), SIGNED, deps)).toBe('acted');
    expect(await store.get('E0ORG')).toBeUndefined();
  });

  it('a stage that keeps no installations ignores them', async () => {
    const { teamData, deps } = world(false);
    expect(await answerEvent(envelope('Ev6', { type: 'app_uninstalled' }), SIGNED, deps)).toBe('ignored');
    expect(teamData.channels.has('T0GONE')).toBe(true);
  });

  it('refuses an uninstall that names no team (400: nothing to purge by)', () => {
    const parsed = parseEventEnvelope(JSON.stringify({ type: 'event_callback', event_id: 'Ev7', event: { type: 'app_uninstalled' } }));
    expect(parsed).toEqual({ ok: false, problem: 'app_uninstalled event lacks the team (or org) it is about' });
  });
});
