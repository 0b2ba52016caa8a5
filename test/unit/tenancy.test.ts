import { describe, expect, it } from 'vitest';
import {
  STACK_TENANT,
  sameTenant,
  tenantKey,
  tenantLabel,
  tenantOf,
  tenantOfKey,
  tenantOfLabel,
  tenantSessionPolicy,
} from '../../shared/tenancy';

describe('tenant keys', () => {
  it('keeps the stack tenant’s keys bare, so a single-workspace table is unchanged', () => {
    expect(tenantKey(STACK_TENANT, 'sub#proj_1')).toBe('sub#proj_1');
    expect(tenantKey(tenantOf(undefined), 'digest#e1')).toBe('digest#e1');
  });

  it('prefixes every key of a connection’s tenant with it, and reads the tenant back', () => {
    const acme = tenantOf('acme-seo');
    expect(tenantKey(acme, 'sub#proj_1')).toBe('t#acme-seo#sub#proj_1');
    expect(tenantOfKey('t#acme-seo#sub#proj_1')).toEqual({ tenant: acme, key: 'sub#proj_1' });
    expect(tenantOfKey('sub#proj_1')).toEqual({ tenant: STACK_TENANT, key: 'sub#proj_1' });
    expect(tenantLabel(acme)).toBe('acme-seo');
    expect(tenantLabel(STACK_TENANT)).toBe('stack');
  });

  it('tells tenants apart, even when one id is a prefix of another', () => {
    expect(sameTenant(tenantOf('acme'), tenantOf('acme'))).toBe(true);
    expect(sameTenant(tenantOf('acme'), tenantOf('acme-seo'))).toBe(false);
    expect(sameTenant(tenantOf('acme'), STACK_TENANT)).toBe(false);
    expect(tenantKey(tenantOf('acme'), 'x').startsWith(tenantKey(tenantOf('acme-seo'), ''))).toBe(false);
  });
});

describe('tenantOfLabel', () => {
  it('reads back the tenant a label names', () => {
    expect(tenantOfLabel(tenantLabel(STACK_TENANT))).toEqual(STACK_TENANT);
    expect(tenantOfLabel(tenantLabel(tenantOf('acme-seo')))).toEqual(tenantOf('acme-seo'));
  });
});

describe('tenantSessionPolicy', () => {
  const patternsOf = (policy: ReturnType<typeof tenantSessionPolicy>, sid: string): unknown =>
    JSON.stringify((policy.Statement as { Sid: string; Condition?: unknown }[]).find((statement) => statement.Sid === sid)?.Condition);

  it("allows a connection its own t# keys and the keys that are no tenant's, and none of another connection", () => {
    const allowed = patternsOf(tenantSessionPolicy([tenantOf('acme-seo')], 'arn:t'), 'TenantItems');
    expect(allowed).toContain('"t#acme-seo#*"');
    for (const shared of ['quiet#*', 'weeklyset#*', 'pace#*', 'team#*', 'slackreq#*', 'inst#*', 'instlease#*', 'conn#*'])
      expect(allowed).toContain(`"${shared}"`);
    expect(allowed).not.toContain('"digest#*"');
    expect(allowed).not.toContain('"t#*"');
  });
});
