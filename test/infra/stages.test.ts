/**
 * Stages side by side and redeploys: the same files synthesize the same template (so `cdk diff`
 * is empty), and no physical name collides between two stages in one region or one stage in two.
 */
import { describe, expect, it } from 'vitest';
import { synthApp } from './helpers';

const ACCOUNT = '123456789012';
const template = (stage: string, region: string): Record<string, unknown> =>
  synthApp({}, { stage, env: { account: ACCOUNT, region } }).template.toJSON();

/** Properties that set a resource's physical name (account- or region-wide unique). */
const NAME_PROPERTIES = [
  'DashboardName',
  'AlarmName',
  'TableName',
  'QueueName',
  'FunctionName',
  'RoleName',
  'LogGroupName',
  'TopicName',
  'Name',
];

/** A name set by the template (not a reference to another resource, which names nothing). */
const isName = (value: unknown): boolean =>
  typeof value === 'string' || (typeof value === 'object' && value !== null && 'Fn::Join' in value);

/** Every physical name a template sets, with the region and account it will be created in. */
function physicalNames(json: Record<string, unknown>, scope: string): string[] {
  const resources = Object.values(json['Resources'] as Record<string, { Type: string; Properties?: Record<string, unknown> }>);
  return resources.flatMap((resource) =>
    NAME_PROPERTIES.filter((key) => isName(resource.Properties?.[key])).map(
      // Dashboards are global per account; everything else is regional.
      (key) =>
        `${resource.Type === 'AWS::CloudWatch::Dashboard' ? ACCOUNT : scope}:${resource.Type}:${JSON.stringify(resource.Properties?.[key])}`,
    ),
  );
}

function expectNoCollision(a: string[], b: string[]): void {
  expect(a.length).toBeGreaterThan(0);
  expect(a.filter((name) => b.includes(name))).toEqual([]);
}

describe('a redeploy with the same files', () => {
  it('synthesizes an identical template', () => {
    expect(JSON.stringify(template('dev', 'eu-west-1'))).toBe(JSON.stringify(template('dev', 'eu-west-1')));
  });
});

describe('physical names', () => {
  it('two stages in one account and region do not collide', () => {
    expectNoCollision(physicalNames(template('dev', 'eu-west-1'), 'eu-west-1'), physicalNames(template('dev2', 'eu-west-1'), 'eu-west-1'));
  });

  it('one stage in two regions does not collide (the dashboard name holds the region)', () => {
    expectNoCollision(physicalNames(template('dev', 'eu-west-1'), 'eu-west-1'), physicalNames(template('dev', 'us-east-1'), 'us-east-1'));
    const dashboards = ['eu-west-1', 'us-east-1'].map((region) =>
      physicalNames(template('dev', region), region).find((name) => name.includes('Dashboard')),
    );
    expect(dashboards).toEqual([
      `${ACCOUNT}:AWS::CloudWatch::Dashboard:"VisibilitySlackBridge-dev-eu-west-1"`,
      `${ACCOUNT}:AWS::CloudWatch::Dashboard:"VisibilitySlackBridge-dev-us-east-1"`,
    ]);
  });
});
