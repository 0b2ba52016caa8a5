/** Which tenants a Slack team reaches, and the tenants a queue message carries (shared/slack-app/tenant-scope.ts). */
import { describe, expect, it } from 'vitest';
import type { Connection } from '../../shared/connections/model';
import { QUEUE_MESSAGE_KINDS } from '../../shared/contracts';
import { parseHomeRequest } from '../../shared/slack-app/home/publish';
import { parseDeferredSlackCommand } from '../../shared/slack-app/service';
import { parseTenants, tenantsOfTeam } from '../../shared/slack-app/tenant-scope';
import type { WorkspaceAllowList } from '../../shared/slack-app/workspace-gate';
import { STACK_TENANT } from '../../shared/tenancy';

const ALLOW: WorkspaceAllowList = { teamIds: ['T0STAGE'], enterpriseId: undefined, appId: 'A0APP' };

function record(id: string, slackTeamIds: string[], status: Connection['status'] = 'active') {
  const connection: Connection = {
    id,
    baseUrl: 'https://api.example.com',
    secretName: `s/${id}`,
    routes: { defaultChannel: 'C0DEF', byProject: {} },
    slackTeamIds,
    status,
    createdAtMs: 0,
  };
  return { connection, cadence: { runTimesMs: [], silenceToldAfterMs: undefined } };
}

const CONNECTIONS = [
  record('acme', ['T0ACME']),
  record('beta', ['T0BETA', 'T0ACME']),
  record('grid', ['E0ORG']),
  record('gone', ['T0ACME'], 'removed'),
];

describe('tenantsOfTeam', () => {
  it('the stage’s own team reaches the stack’s tenant only', () => {
    expect(tenantsOfTeam({ teamId: 'T0STAGE' }, ALLOW, CONNECTIONS)).toEqual([STACK_TENANT]);
  });

  it('a team reaches every active connection linked to it, never a removed one, never the stack’s', () => {
    expect(tenantsOfTeam({ teamId: 'T0ACME' }, ALLOW, CONNECTIONS)).toEqual([
      { kind: 'connection', connectionId: 'acme' },
      { kind: 'connection', connectionId: 'beta' },
    ]);
  });

  it('a connection linked to an org reaches each of its teams', () => {
    expect(tenantsOfTeam({ teamId: 'T0ANY', enterpriseId: 'E0ORG' }, ALLOW, CONNECTIONS)).toEqual([
      { kind: 'connection', connectionId: 'grid' },
    ]);
  });

  it('a team nobody serves reaches nothing', () => {
    expect(tenantsOfTeam({ teamId: 'T0OTHER' }, ALLOW, CONNECTIONS)).toEqual([]);
    expect(tenantsOfTeam({ teamId: '' }, ALLOW, CONNECTIONS)).toEqual([]);
  });

  it('an org-wide stage serves every team of its org', () => {
    const org: WorkspaceAllowList = { teamIds: [], enterpriseId: 'E0STAGE', appId: 'A0APP' };
    expect(tenantsOfTeam({ teamId: 'T0ANY', enterpriseId: 'E0STAGE' }, org, [])).toEqual([STACK_TENANT]);
    expect(tenantsOfTeam({ teamId: 'T0ANY', enterpriseId: 'E0ELSE' }, org, [])).toEqual([]);
  });
});

describe('tenants on queue messages', () => {
  const tenants = [STACK_TENANT, { kind: 'connection', connectionId: 'acme' }];

  it('round-trip through JSON; anything else is malformed', () => {
    expect(parseTenants(JSON.parse(JSON.stringify(tenants)))).toEqual(tenants);
    expect(parseTenants([])).toEqual([]);
    for (const bad of ['stack', [{ kind: 'connection' }], [{ kind: 'connection', connectionId: 'Not An Id' }], [{ kind: 'other' }], [null]])
      expect(parseTenants(bad)).toBeUndefined();
  });

  it('a deferred command keeps its tenants, and one with malformed tenants is refused', () => {
    const body = {
      kind: QUEUE_MESSAGE_KINDS.slackCommand,
      command: { kind: 'projects' },
      context: { channel: 'C1', actor: { userId: 'U1' }, responseUrl: 'https://hooks.slack.com/x', tenants },
      receivedAtMs: 1,
    };
    expect(parseDeferredSlackCommand(JSON.parse(JSON.stringify(body)))?.context.tenants).toEqual(tenants);
    expect(parseDeferredSlackCommand({ ...body, context: { ...body.context, tenants: [{ kind: 'x' }] } })).toBeNull();
    const { tenants: _none, ...unscoped } = body.context;
    expect(parseDeferredSlackCommand({ ...body, context: unscoped })?.context.tenants).toBeUndefined();
  });

  it('a Home publish keeps its tenants, and one with malformed tenants is refused', () => {
    const body = { kind: QUEUE_MESSAGE_KINDS.slackHome, userId: 'U1', page: 0, receivedAtMs: 1, tenants };
    expect(parseHomeRequest(JSON.parse(JSON.stringify(body)))?.tenants).toEqual(tenants);
    expect(parseHomeRequest({ ...body, tenants: 'stack' })).toBeNull();
  });
});
