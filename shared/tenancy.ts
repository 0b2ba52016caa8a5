/**
 * Whose data a thing is. A tenant is one service workspace: the stack's own (its stage file's read API,
 * key and channels) or a connection's (shared/connections). Every item of a connection's tenant is keyed
 * `t#<connection id>#<key>`, so an IAM condition on `dynamodb:LeadingKeys` can confine a set of
 * credentials to one tenant; the stack's own items keep the bare keys they always had, so a
 * single-workspace deploy's table is unchanged.
 */
import { TABLE } from './contracts';

export type Tenant = { kind: 'stack' } | { kind: 'connection'; connectionId: string };

export const STACK_TENANT: Tenant = { kind: 'stack' };

/**
 * The key prefixes a tenant's items have (docs/AGENCIES.md): a connection's are under `t#<connection id>#`. The
 * others (`quiet#`, `weeklyset#`, `pace#`, `team#`, `slackreq#`, `inst#`, `instlease#`, `conn#`) are a channel's,
 * a workspace's or the operator's, never a tenant's.
 */
export const TENANT_KEYED_PREFIXES: readonly string[] = [
  TABLE.prefixes.delivery,
  TABLE.prefixes.digest,
  TABLE.prefixes.snapshot,
  TABLE.prefixes.subscriptionsOfProject,
  TABLE.prefixes.subscriptionsOfChannel,
  TABLE.prefixes.channelPost,
  TABLE.prefixes.audit,
  TABLE.prefixes.weekly,
  TABLE.prefixes.held,
  TABLE.prefixes.posted,
];

/** The tenant of an event or request: a connection's when it names one, else the stack's own. */
export function tenantOf(connectionId: string | undefined): Tenant {
  return connectionId === undefined ? STACK_TENANT : { kind: 'connection', connectionId };
}

/** The item key `key` (e.g. `sub#proj_1`) as stored for `tenant`. */
export function tenantKey(tenant: Tenant, key: string): string {
  return tenant.kind === 'stack' ? key : `${tenantKeyPrefix(tenant.connectionId)}${key}`;
}

/** `t#<connection id>#`: every key of that connection's tenant starts with it. Connection ids hold no `#`. */
export function tenantKeyPrefix(connectionId: string): string {
  return `${TABLE.prefixes.tenant}${connectionId}#`;
}

/** Whose item a stored key is (the inverse of `tenantKey`), and the key within the tenant. */
export function tenantOfKey(storedKey: string): { tenant: Tenant; key: string } {
  if (!storedKey.startsWith(TABLE.prefixes.tenant)) return { tenant: STACK_TENANT, key: storedKey };
  const rest = storedKey.slice(TABLE.prefixes.tenant.length);
  const end = rest.indexOf('#');
  if (end <= 0) return { tenant: STACK_TENANT, key: storedKey };
  return { tenant: { kind: 'connection', connectionId: rest.slice(0, end) }, key: rest.slice(end + 1) };
}

/** The tenant's name in logs and metric dimensions: `stack`, or the connection id. */
export function tenantLabel(tenant: Tenant): string {
  return tenant.kind === 'stack' ? 'stack' : tenant.connectionId;
}

/** The tenant a label names (the inverse of `tenantLabel`): `stack`, or a connection id. */
export function tenantOfLabel(label: string): Tenant {
  return label === tenantLabel(STACK_TENANT) ? STACK_TENANT : { kind: 'connection', connectionId: label };
}

export function sameTenant(a: Tenant, b: Tenant): boolean {
  return tenantLabel(a) === tenantLabel(b);
}

/** The keys of the table that are no tenant's data: a channel's, a workspace's or the operator's (docs/AGENCIES.md). */
const SHARED_KEY_PREFIXES: readonly string[] = Object.values(TABLE.prefixes).filter(
  (prefix) => prefix !== TABLE.prefixes.tenant && !TENANT_KEYED_PREFIXES.includes(prefix),
);

/** The leading keys a tenant's credentials may touch, as IAM `StringLike` patterns. */
function tenantKeyPatterns(tenant: Tenant): string[] {
  const own = tenant.kind === 'stack' ? TENANT_KEYED_PREFIXES.map((prefix) => `${prefix}*`) : [`${tenantKeyPrefix(tenant.connectionId)}*`];
  return [...own, ...SHARED_KEY_PREFIXES.map((prefix) => `${prefix}*`)];
}

/**
 * The session policy that confines credentials to the items of `tenants` in the table (their union, for work
 * that serves several): each tenant's own keys (`t#<connection id>#*`, or the stack's bare ones) plus the
 * shared keys; any other leading key, such as another connection's `t#…`, is denied explicitly. A session
 * policy only narrows the role's grants, so every action outside DynamoDB is left as the role has it.
 */
export function tenantSessionPolicy(tenants: readonly Tenant[], tableArn: string): { Version: string; Statement: unknown[] } {
  const table = [tableArn, `${tableArn}/index/*`];
  const patterns = [...new Set(tenants.flatMap(tenantKeyPatterns))];
  return {
    Version: '2012-10-17',
    Statement: [
      { Sid: 'OutsideTheTable', Effect: 'Allow', NotAction: 'dynamodb:*', Resource: '*' },
      {
        Sid: 'TenantItems',
        Effect: 'Allow',
        Action: 'dynamodb:*',
        Resource: table,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': patterns } },
      },
      {
        Sid: 'NoOtherTenantItems',
        Effect: 'Deny',
        Action: 'dynamodb:*',
        Resource: table,
        Condition: { 'ForAnyValue:StringNotLike': { 'dynamodb:LeadingKeys': patterns } },
      },
    ],
  };
}
