/**
 * The rehearsal resolves a template's intrinsics as CloudFormation would, and refuses what it cannot
 * resolve, naming the intrinsic and the logical id.
 */
import { describe, expect, it } from 'vitest';
import { resolveIntrinsics, type ResolveContext } from '../../local/rehearse/intrinsics';

const ctx: ResolveContext = {
  region: 'eu-west-1',
  accountId: '123456789012',
  partition: 'aws',
  stackName: 'VisibilitySlackBridge-dev',
  urlSuffix: 'amazonaws.com',
  resources: {
    TableCD117FA1: { ref: 'bridge-table', attributes: { Arn: 'arn:aws:dynamodb:eu-west-1:123456789012:table/bridge-table' } },
    DigestQueue: {
      ref: 'http://127.0.0.1:9324/123456789012/digest',
      attributes: { Arn: 'arn:aws:sqs:eu-west-1:123456789012:digest', QueueName: 'digest' },
    },
    Api: { ref: 'abc123', attributes: {} },
  },
};

describe('resolveIntrinsics', () => {
  it('resolves Ref to logical ids and every pseudo parameter', () => {
    expect(
      resolveIntrinsics(
        [
          { Ref: 'TableCD117FA1' },
          { Ref: 'AWS::Region' },
          { Ref: 'AWS::AccountId' },
          { Ref: 'AWS::Partition' },
          { Ref: 'AWS::URLSuffix' },
          { Ref: 'AWS::StackName' },
        ],
        ctx,
      ),
    ).toEqual(['bridge-table', 'eu-west-1', '123456789012', 'aws', 'amazonaws.com', 'VisibilitySlackBridge-dev']);
  });

  it('drops properties and list elements that are Ref AWS::NoValue', () => {
    expect(resolveIntrinsics({ A: 'kept', B: { Ref: 'AWS::NoValue' }, C: ['x', { Ref: 'AWS::NoValue' }, 'y'] }, ctx)).toEqual({
      A: 'kept',
      C: ['x', 'y'],
    });
  });

  it('resolves Fn::GetAtt in its array and "A.B" string forms', () => {
    expect(resolveIntrinsics({ 'Fn::GetAtt': ['DigestQueue', 'Arn'] }, ctx)).toBe('arn:aws:sqs:eu-west-1:123456789012:digest');
    expect(resolveIntrinsics({ 'Fn::GetAtt': 'DigestQueue.QueueName' }, ctx)).toBe('digest');
  });

  it('joins, with nested intrinsics in the list', () => {
    const value = {
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':dynamodb:', { Ref: 'AWS::Region' }, ':x:table/', { Ref: 'TableCD117FA1' }]],
    };
    expect(resolveIntrinsics(value, ctx)).toBe('arn:aws:dynamodb:eu-west-1:x:table/bridge-table');
  });

  it('substitutes pseudo parameters, logical ids, attributes and variables, and keeps ${!Literal}', () => {
    expect(resolveIntrinsics({ 'Fn::Sub': 'https://${Api}.execute-api.${AWS::Region}.${AWS::URLSuffix}/${!Stage}' }, ctx)).toBe(
      'https://abc123.execute-api.eu-west-1.amazonaws.com/${Stage}',
    );
    expect(
      resolveIntrinsics({ 'Fn::Sub': ['${Q}/${DigestQueue.QueueName} in ${Name}', { Q: { Ref: 'DigestQueue' }, Name: 'x' }] }, ctx),
    ).toBe('http://127.0.0.1:9324/123456789012/digest/digest in x');
  });

  it('selects from a split, as CDK writes an ARN part', () => {
    const value = { 'Fn::Select': [5, { 'Fn::Split': [':', { 'Fn::GetAtt': ['TableCD117FA1', 'Arn'] }] }] };
    expect(resolveIntrinsics(value, ctx)).toBe('table/bridge-table');
    expect(resolveIntrinsics({ 'Fn::Select': ['1', ['a', 'b']] }, ctx)).toBe('b');
  });

  it('recurses through objects and arrays and leaves plain values alone', () => {
    const statement = {
      Effect: 'Allow',
      Action: ['sqs:SendMessage'],
      Resource: [{ 'Fn::GetAtt': ['DigestQueue', 'Arn'] }],
      Count: 3,
      Flag: true,
      Nothing: null,
    };
    expect(resolveIntrinsics(statement, ctx)).toEqual({
      Effect: 'Allow',
      Action: ['sqs:SendMessage'],
      Resource: ['arn:aws:sqs:eu-west-1:123456789012:digest'],
      Count: 3,
      Flag: true,
      Nothing: null,
    });
  });

  it('refuses what it cannot resolve, naming the intrinsic and the logical id or attribute', () => {
    expect(() => resolveIntrinsics({ Ref: 'Missing' }, ctx)).toThrow('Ref Missing: no local value for logical id Missing');
    expect(() => resolveIntrinsics({ Ref: 'AWS::NotificationARNs' }, ctx)).toThrow(
      'Ref AWS::NotificationARNs: unsupported pseudo parameter',
    );
    expect(() => resolveIntrinsics({ 'Fn::GetAtt': ['Missing', 'Arn'] }, ctx)).toThrow(
      'Fn::GetAtt Missing.Arn: no local value for logical id Missing',
    );
    expect(() => resolveIntrinsics({ 'Fn::GetAtt': ['DigestQueue', 'QueueUrl'] }, ctx)).toThrow(
      'Fn::GetAtt DigestQueue.QueueUrl: no local value for attribute QueueUrl of DigestQueue (known: Arn, QueueName)',
    );
    expect(() => resolveIntrinsics({ 'Fn::Sub': '${Nope}' }, ctx)).toThrow(
      'Fn::Sub ${Nope}: no variable, pseudo parameter or local value for logical id Nope',
    );
    expect(() => resolveIntrinsics({ 'Fn::Sub': '${Api.Endpoint}' }, ctx)).toThrow(
      'Fn::Sub Api.Endpoint: no local value for attribute Endpoint of Api',
    );
    expect(() => resolveIntrinsics({ 'Fn::If': ['IsProd', 'a', 'b'] }, ctx)).toThrow('unsupported intrinsic Fn::If');
    expect(() => resolveIntrinsics({ 'Fn::GetAZs': '' }, ctx)).toThrow('unsupported intrinsic Fn::GetAZs');
    expect(() => resolveIntrinsics({ 'Fn::Select': [2, ['a', 'b']] }, ctx)).toThrow('Fn::Select: index 2 is outside the list of 2');
    expect(() => resolveIntrinsics({ 'Fn::Join': [',', { Ref: 'TableCD117FA1' }] }, ctx)).toThrow(
      'Fn::Join: the values must resolve to a list',
    );
  });
});
