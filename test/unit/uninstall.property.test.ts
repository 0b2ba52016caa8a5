/**
 * app_uninstalled and tokens_revoked (shared/installations/uninstall.ts) in any order, repeated, with a
 * failed attempt retried: the team ends purged with its routes broken, ops hears it once, and the other
 * workspace keeps everything.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Installation } from '../../shared/installations/model';
import { onAppUninstalled, onTokensRevoked, UNINSTALLED_CODE, type UninstallDeps } from '../../shared/installations/uninstall';
import type { Log } from '../../shared/ports';
import { MemoryInstallationStore, MemoryTeamData } from '../support/installations';

function installation(teamId: string): Installation {
  return {
    teamId,
    isEnterpriseInstall: false,
    botUserId: `U${teamId}`,
    botId: `B${teamId}`,
    scopes: ['chat:write'],
    bot: { token: `xoxb-${teamId}`, refreshToken: `xoxe-${teamId}`, expiresAtMs: 1 },
    installedBy: 'U1',
    installedAtMs: 0,
  };
}

type SlackEvent = 'app_uninstalled' | 'tokens_revoked' | 'tokens_revoked_user_only';

function world() {
  const lines: { level: string; message: string }[] = [];
  const log: Log = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message) => lines.push({ level: 'warn', message }),
    error: (message) => lines.push({ level: 'error', message }),
  };
  const store = new MemoryInstallationStore();
  const teamData = new MemoryTeamData({
    T0GONE: { channels: ['C1', 'C2'], routes: ['C1', 'C3'] },
    T0STAYS: { channels: ['C9'], routes: ['C9'] },
  });
  const deps: UninstallDeps = { store, teamData, log };
  return { lines, store, teamData, deps };
}

async function deliver(event: SlackEvent, deps: UninstallDeps): Promise<void> {
  const ref = { teamId: 'T0GONE' };
  if (event === 'app_uninstalled') await onAppUninstalled(ref, deps);
  else await onTokensRevoked(ref, event === 'tokens_revoked' ? { bot: ['UT0GONE'] } : { oauth: ['U1'] }, deps);
}

describe('uninstall in any order', () => {
  it('purges the team once, whatever the order, repeats and a failed attempt Slack retries', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Every event once, in any order…
        fc.shuffledSubarray<SlackEvent>(['app_uninstalled', 'tokens_revoked', 'tokens_revoked_user_only'], { minLength: 3 }),
        // …then any of them again (Slack may deliver an event twice).
        fc.array(fc.constantFrom<SlackEvent>('app_uninstalled', 'tokens_revoked', 'tokens_revoked_user_only'), { maxLength: 3 }),
        fc.boolean(),
        async (order, repeats, firstAttemptFails) => {
          const events = [...order, ...repeats];
          const { lines, store, teamData, deps } = world();
          await store.save(installation('T0GONE'));
          await store.save(installation('T0STAYS'));
          teamData.failNext = firstAttemptFails;
          for (const event of events) {
            try {
              await deliver(event, deps);
            } catch {
              await deliver(event, deps); // Slack retries an event the app did not acknowledge.
            }
          }
          expect(await store.get('T0GONE')).toBeUndefined();
          expect(teamData.channels.has('T0GONE')).toBe(false);
          expect(teamData.routes.get('T0GONE')?.every((r) => r.broken === UNINSTALLED_CODE)).toBe(true);
          expect(lines.filter((l) => l.message.startsWith('Slack app removed'))).toHaveLength(1);
          // The other workspace keeps everything.
          expect(await store.get('T0STAYS')).toBeDefined();
          expect([...(teamData.channels.get('T0STAYS') ?? [])]).toEqual(['C9']);
          expect(teamData.routes.get('T0STAYS')).toEqual([{ channel: 'C9' }]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('leaves everything when only user tokens are revoked (they are not the bridge’s)', async () => {
    const { lines, store, teamData, deps } = world();
    await store.save(installation('T0GONE'));
    expect(await onTokensRevoked({ teamId: 'T0GONE' }, { oauth: ['U1'] }, deps)).toBe('ignored');
    expect(await store.get('T0GONE')).toBeDefined();
    expect(teamData.channels.get('T0GONE')?.size).toBe(2);
    expect(lines).toEqual([]);
  });

  it("a workspace of an org-wide install leaving keeps the org's installation", async () => {
    const { store, deps } = world();
    await store.save({ ...installation('unused'), teamId: undefined, enterpriseId: 'E0ORG', isEnterpriseInstall: true });
    expect(await onAppUninstalled({ teamId: 'T0GONE', enterpriseId: 'E0ORG' }, deps)).toBe('already_purged');
    expect(await store.get('E0ORG')).toBeDefined();
    expect(await onAppUninstalled({ teamId: 'T0GONE', enterpriseId: 'E0ORG', isEnterpriseInstall: true }, deps)).toBe('purged');
    expect(await store.get('E0ORG')).toBeUndefined();
  });
});
