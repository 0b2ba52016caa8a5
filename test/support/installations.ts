/** In-memory doubles of the installations ports (shared/installations/ports.ts), for unit and property tests. */
import type { BotToken, Installation } from '../../shared/installations/model';
import type { InstallationStore, TeamData } from '../../shared/installations/ports';

/** An installation of the app in a workspace, as the install flow stores it; `fields` say whose (its `teamId`) and what differs. */
export function installationOf(fields: Partial<Installation> = {}): Installation {
  return {
    isEnterpriseInstall: false,
    botUserId: 'U0BOT',
    botId: 'B0BOT',
    scopes: ['chat:write'],
    bot: { token: 'xoxb-1' },
    installedBy: 'U1',
    installedAtMs: 0,
    ...fields,
  };
}

export class MemoryInstallationStore implements InstallationStore {
  readonly items = new Map<string, Installation>();

  save(installation: Installation): Promise<void> {
    const id = installation.isEnterpriseInstall ? installation.enterpriseId : installation.teamId;
    if (id === undefined) return Promise.reject(new Error('no id'));
    this.items.set(id, structuredClone(installation));
    return Promise.resolve();
  }

  get(id: string): Promise<Installation | undefined> {
    const found = this.items.get(id);
    return Promise.resolve(found ? structuredClone(found) : undefined);
  }

  replaceBotToken(id: string, usedRefreshToken: string, next: BotToken): Promise<boolean> {
    const found = this.items.get(id);
    if (found?.bot.refreshToken !== usedRefreshToken) return Promise.resolve(false);
    found.bot = { ...next };
    return Promise.resolve(true);
  }

  delete(id: string): Promise<boolean> {
    return Promise.resolve(this.items.delete(id));
  }
}

/** Each team's channels with what is kept for them, and its routes; `failNext` makes the next purge throw (a DynamoDB outage). */
export class MemoryTeamData implements TeamData {
  readonly channels = new Map<string, Set<string>>();
  readonly routes = new Map<string, { channel: string; broken?: string | undefined }[]>();
  failNext = false;

  constructor(teams: Record<string, { channels: string[]; routes: string[] }>) {
    for (const [team, data] of Object.entries(teams)) {
      this.channels.set(team, new Set(data.channels));
      this.routes.set(
        team,
        data.routes.map((channel) => ({ channel })),
      );
    }
  }

  purge(teamId: string): Promise<string[]> {
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new Error('table unavailable'));
    }
    const channels = [...(this.channels.get(teamId) ?? [])];
    this.channels.delete(teamId);
    return Promise.resolve(channels);
  }

  markRoutesBroken(teamId: string, code: string): Promise<number> {
    let marked = 0;
    for (const route of this.routes.get(teamId) ?? []) {
      if (route.broken === undefined) marked++;
      route.broken = code;
    }
    return Promise.resolve(marked);
  }
}
