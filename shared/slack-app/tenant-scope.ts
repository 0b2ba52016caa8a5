/**
 * What a Slack team's answers reach: the projects of its tenants only (docs/AGENCIES.md, "What one tenant
 * cannot learn about another"). A team's tenants are the stack's own when the stage serves the team (its
 * `slackTeamIds`, or its Grid org), and every active connection linked to the team or its org. The Slack
 * function decides them once per request, and a deferred command or Home publish carries them on its commands
 * queue message (only the Slack function writes that queue); each answer then runs over a view that joins those tenants' stores and
 * read APIs and routes every change of a project to the tenant that owns it, so nothing of another tenant is
 * read, named or written. A team with no tenant sees empty answers ("no project matches").
 */
import { connectionIdProblem } from '../connections/model';
import type { ConnectionRecord, ConnectionStore } from '../connections/ports';
import type { ChannelRouting } from '../digest/deps';
import type { AuditEntry, DigestStore, SubscriptionStore, Subscription } from '../ports';
import { AUDIT_KEPT } from '../ports';
import { isRecord } from '../util';
import type { Project } from '../read-api-types';
import { STACK_TENANT, tenantLabel, type Tenant } from '../tenancy';
import type {
  ChannelAccess,
  DeferredDeps,
  InlineDeps,
  ProjectDirectory,
  SlackTeam,
  StatusSource,
  TeamTenants,
  TenantReach,
  TenantReaches,
} from './ports';
import { enginesFromSnapshots } from './channel-settings';
import { foreignReason, type WorkspaceAllowList } from './workspace-gate';

/** The tenants a team reaches: the stack's own when the stage serves it, then each active connection linked to it or its org. */
export function tenantsOfTeam(team: SlackTeam, allow: WorkspaceAllowList, connections: readonly ConnectionRecord[]): Tenant[] {
  const served = foreignReason({ teamIds: [team.teamId], enterpriseId: team.enterpriseId, appId: allow.appId }, allow) === null;
  const linked = connections
    .map((record) => record.connection)
    .filter((c) => c.status === 'active' && c.slackTeamIds.some((id) => id === team.teamId || id === team.enterpriseId))
    .map((c): Tenant => ({ kind: 'connection', connectionId: c.id }))
    .sort((a, b) => tenantLabel(a).localeCompare(tenantLabel(b)));
  return served ? [STACK_TENANT, ...linked] : linked;
}

/**
 * The Slack function's tenants of a team (the connections read per request: a link takes effect at once) and
 * their stores; undefined on a stage without connections, whose answers are not scoped.
 */
export function teamTenants(
  allow: WorkspaceAllowList,
  connections: Pick<ConnectionStore, 'list'>,
  reachOf: (tenant: Tenant) => TenantReach,
): TeamTenants {
  return {
    of: async (team) => {
      const records = await connections.list();
      // No connections (a single-workspace stage): every answer is the stack's, exactly as before tenants.
      return records.length === 0 ? undefined : tenantsOfTeam(team, allow, records);
    },
    reach: (tenant) => Promise.resolve(reachOf(tenant)),
  };
}

/** The tenants a queue message carries (as JSON of `Tenant`s); undefined when malformed. */
export function parseTenants(value: unknown): Tenant[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const tenants = value.map((item): Tenant | undefined => {
    if (!isRecord(item)) return undefined;
    if (item['kind'] === 'stack') return STACK_TENANT;
    const id = item['connectionId'];
    return item['kind'] === 'connection' && typeof id === 'string' && connectionIdProblem(id) === undefined
      ? { kind: 'connection', connectionId: id }
      : undefined;
  });
  return tenants.every((t): t is Tenant => t !== undefined) ? tenants : undefined;
}

/** What a request's answer reads and changes: the reached tenants' stores joined, each change routed to its project's tenant. */
interface TenantView {
  store: SubscriptionStore;
  directory: ProjectDirectory;
  status: StatusSource;
  snapshots: Pick<DigestStore, 'getSnapshot'>;
  /** The routes of a project's tenant, once the view knows whose it is. */
  routingOf: (projectId: string) => ChannelRouting | undefined;
  /** Whether a project's tenant's bot can post in a channel, once the view knows whose it is. */
  channelsOf: (projectId: string) => ChannelAccess | undefined;
}

/** `deps` with its stores replaced by the view over `tenants` (those still reachable). */
export async function scopedInlineDeps<D extends InlineDeps>(deps: D, tenants: readonly Tenant[], reaches: TenantReaches): Promise<D> {
  const view = tenantView(await reachAll(tenants, reaches));
  return { ...deps, store: view.store, engines: enginesFromSnapshots(view.snapshots) };
}

export async function scopedDeferredDeps<D extends DeferredDeps>(deps: D, tenants: readonly Tenant[], reaches: TenantReaches): Promise<D> {
  const view = tenantView(await reachAll(tenants, reaches));
  return {
    ...deps,
    store: view.store,
    engines: enginesFromSnapshots(view.snapshots),
    directory: view.directory,
    status: view.status,
    snapshots: view.snapshots,
    routingOf: view.routingOf,
    channelsOf: view.channelsOf,
  };
}

async function reachAll(tenants: readonly Tenant[], reaches: TenantReaches): Promise<TenantReach[]> {
  const found = await Promise.all(tenants.map((tenant) => reaches.reach(tenant)));
  return found.filter((reach): reach is TenantReach => reach !== undefined);
}

/**
 * The view over `reached`. A project belongs to the first tenant that lists it (its read API, its
 * subscriptions in the channel, or its snapshot): ids are the service's, so two tenants of one team
 * sharing one is unlikely; then the first one's project is the one this team reaches.
 */
export function tenantView(reached: readonly TenantReach[]): TenantView {
  const owners = new Map<string, TenantReach>();
  const own = (projectId: string, reach: TenantReach) => {
    if (!owners.has(projectId)) owners.set(projectId, reach);
  };
  const ownerOf = async (projectId: string): Promise<TenantReach | undefined> => {
    const known = owners.get(projectId);
    if (known !== undefined) return known;
    for (const reach of reached) {
      const holds =
        (await reach.store.forProject(projectId)).length > 0 || ((await reach.snapshots?.getSnapshot(projectId)) ?? null) !== null;
      if (holds) {
        own(projectId, reach);
        return reach;
      }
    }
    return undefined;
  };
  const owner = async (projectId: string): Promise<TenantReach> => {
    const reach = await ownerOf(projectId);
    if (reach === undefined) throw new ProjectNotReached(projectId);
    return reach;
  };
  const readApiOf = async (projectId: string) => {
    const api = (await owner(projectId)).readApi;
    if (api === undefined) throw new Error('a read of the service reached a tenant view without read APIs (the Slack function has none)');
    return api;
  };
  const store: SubscriptionStore = {
    subscribe: async (input) => (await owner(input.projectId)).store.subscribe(input),
    unsubscribe: async (projectId, channel) => (await ownerOf(projectId))?.store.unsubscribe(projectId, channel) ?? false,
    change: async (projectId, channel, ...rest) => (await ownerOf(projectId))?.store.change(projectId, channel, ...rest) ?? null,
    setFilter: async (projectId, channel, ...rest) => (await ownerOf(projectId))?.store.setFilter(projectId, channel, ...rest) ?? null,
    markBroken: async (projectId, channel, ...rest) => (await ownerOf(projectId))?.store.markBroken(projectId, channel, ...rest) ?? null,
    forProject: async (projectId) => (await ownerOf(projectId))?.store.forProject(projectId) ?? [],
    forChannel: async (channel) => {
      const lists = await Promise.all(reached.map(async (reach) => ({ reach, subscriptions: await reach.store.forChannel(channel) })));
      for (const { reach, subscriptions } of lists) for (const s of subscriptions) own(s.projectId, reach);
      return firstOwned(
        lists.flatMap(({ reach, subscriptions }) => subscriptions.map((s) => ({ reach, s }))),
        owners,
      );
    },
    listAll: async () => (await Promise.all(reached.map((reach) => reach.store.listAll()))).flat(),
    recordChange: async (channel, entry) => {
      // A change of a channel's own setting (quiet hours: no project) is kept by every tenant the channel reaches.
      const reach = isProjectId(entry) ? await ownerOf(entry.projectId) : undefined;
      const targets = reach === undefined ? reached : [reach];
      await Promise.all(targets.map((target) => target.store.recordChange(channel, entry)));
    },
    recentChanges: async (channel) => newestFirst((await Promise.all(reached.map((reach) => reach.store.recentChanges(channel)))).flat()),
  };
  const directory: ProjectDirectory = {
    listProjects: async () => {
      const lists = await Promise.all(
        reached.map(async (reach) => ({ reach, projects: reach.readApi === undefined ? [] : await reach.readApi.listProjects() })),
      );
      const all: Project[] = [];
      for (const { reach, projects } of lists)
        for (const project of projects) {
          own(project.id, reach);
          if (owners.get(project.id) === reach) all.push(project);
        }
      return all;
    },
  };
  const status: StatusSource = {
    getVisibility: async (projectId) => (await readApiOf(projectId)).getVisibility(projectId),
    getGapsWithSkipped: async (projectId) => (await readApiOf(projectId)).getGapsWithSkipped(projectId),
  };
  const snapshots = {
    getSnapshot: async (projectId: string) => (await ownerOf(projectId))?.snapshots?.getSnapshot(projectId) ?? null,
  };
  return {
    store,
    directory,
    status,
    snapshots,
    routingOf: (projectId) => owners.get(projectId)?.routes,
    channelsOf: (projectId) => owners.get(projectId)?.channels,
  };
}

/** A project no tenant of the team holds: the answer is "no project matches", never another tenant's. */
export class ProjectNotReached extends Error {
  override name = 'ProjectNotReached';
  constructor(projectId: string) {
    super(`project ${projectId.slice(0, 60)} is not one of the team's tenants'`);
  }
}

function isProjectId(entry: AuditEntry): boolean {
  return entry.projectId !== '*';
}

function firstOwned(listed: readonly { reach: TenantReach; s: Subscription }[], owners: ReadonlyMap<string, TenantReach>): Subscription[] {
  return listed.filter(({ reach, s }) => owners.get(s.projectId) === reach).map(({ s }) => s);
}

/** The tenants' histories as one, newest first; a channel's own change (kept by each of its tenants) shown once. */
function newestFirst(entries: AuditEntry[]): AuditEntry[] {
  const seen = new Set<string>();
  const unique = entries.filter((e) => {
    const id = JSON.stringify([e.who, e.whenMs, e.what, e.projectId]);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  return unique.sort((a, b) => b.whenMs - a.whenMs).slice(0, AUDIT_KEPT);
}
