/**
 * freshBotToken (shared/installations/token-lease.ts) with in-memory doubles: what the lease holder and
 * its waiters do when a refresh fails, when the installation changes meanwhile, and when the holder is slow.
 * The race against real peers (dynalite, the local Slack server's single-use refresh tokens) is in
 * test/integration/slack-oauth.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { NeedsOperatorFix, Unavailable } from '../../shared/errors';
import type { BotToken, Installation } from '../../shared/installations/model';
import type { RefreshLease, TokenRefresher } from '../../shared/installations/ports';
import { freshBotToken, type TokenLeaseDeps } from '../../shared/installations/token-lease';
import { MemoryInstallationStore } from '../support/installations';

const HOUR = 3600_000;
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

class MemoryLease implements RefreshLease {
  holder: string | undefined;
  taken = 0;
  take(): Promise<string | undefined> {
    if (this.holder !== undefined) return Promise.resolve(undefined);
    this.taken++;
    this.holder = `h${this.taken}`;
    return Promise.resolve(this.holder);
  }
  release(_id: string, holder: string): Promise<void> {
    if (this.holder === holder) this.holder = undefined;
    return Promise.resolve();
  }
}

function installation(bot: BotToken): Installation {
  return { teamId: 'T1', isEnterpriseInstall: false, botUserId: 'U', botId: 'B', scopes: [], bot, installedBy: 'U1', installedAtMs: 0 };
}

function setup(refresh: TokenRefresher['refresh']) {
  let now = 0;
  const store = new MemoryInstallationStore();
  const lease = new MemoryLease();
  const deps: TokenLeaseDeps = {
    store,
    lease,
    refresher: { refresh },
    clock: { now: () => now },
    sleep: (ms) => {
      now += ms;
      return new Promise((resolve) => setImmediate(resolve));
    },
    log: quiet,
    options: { refreshMarginMs: 2 * HOUR, pollMs: 100, maxWaitMs: 1_000 },
  };
  return { store, lease, deps };
}

describe('freshBotToken', () => {
  it('releases the lease when Slack refuses the refresh, so a later attempt can try again', async () => {
    const { store, lease, deps } = setup(() =>
      Promise.reject(new NeedsOperatorFix('Slack refused the bot token refresh: invalid_grant', 'reinstall')),
    );
    await store.save(installation({ token: 'xoxe.xoxb-old', refreshToken: 'r1', expiresAtMs: HOUR }));
    await expect(freshBotToken({ teamId: 'T1' }, deps)).rejects.toBeInstanceOf(NeedsOperatorFix);
    expect(lease.holder).toBeUndefined();
  });

  it('drops a refreshed token when the installation was replaced meanwhile (a reinstall), and says to retry', async () => {
    const { store, deps } = setup(async () => {
      await store.save(installation({ token: 'xoxe.xoxb-reinstalled', refreshToken: 'r9', expiresAtMs: 12 * HOUR }));
      return { token: 'xoxe.xoxb-new', refreshToken: 'r2', expiresAtMs: 12 * HOUR };
    });
    await store.save(installation({ token: 'xoxe.xoxb-old', refreshToken: 'r1', expiresAtMs: HOUR }));
    await expect(freshBotToken({ teamId: 'T1' }, deps)).rejects.toBeInstanceOf(Unavailable);
    expect((await store.get('T1'))?.bot.token).toBe('xoxe.xoxb-reinstalled');
  });

  it('a waiter gives up (Unavailable, retried) when the holder does not finish within its wait', async () => {
    const { store, lease, deps } = setup(() => Promise.reject(new Error('never called')));
    await store.save(installation({ token: 'xoxe.xoxb-old', refreshToken: 'r1', expiresAtMs: HOUR }));
    lease.holder = 'someone-else';
    await expect(freshBotToken({ teamId: 'T1' }, deps)).rejects.toBeInstanceOf(Unavailable);
  });

  it('a waiter takes the token the holder stored, without refreshing', async () => {
    let calls = 0;
    const { store, lease, deps } = setup(() => {
      calls++;
      return Promise.resolve({ token: 'unused', refreshToken: 'r', expiresAtMs: 0 });
    });
    await store.save(installation({ token: 'xoxe.xoxb-old', refreshToken: 'r1', expiresAtMs: HOUR }));
    lease.holder = 'someone-else';
    const waiting = freshBotToken({ teamId: 'T1' }, deps);
    await store.replaceBotToken('T1', 'r1', { token: 'xoxe.xoxb-theirs', refreshToken: 'r2', expiresAtMs: 12 * HOUR });
    expect(await waiting).toBe('xoxe.xoxb-theirs');
    expect(calls).toBe(0);
  });

  it('says to install the app when the workspace has no installation', async () => {
    const { deps } = setup(() => Promise.reject(new Error('never called')));
    await expect(freshBotToken({ teamId: 'T404' }, deps)).rejects.toThrow(/not installed in the workspace T404/);
  });
});
