/** The one DynamoDB table: dedup records (ingest), digest claims and snapshots (digest). */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { TABLE } from '../shared/contracts';
import { TENANT_KEYED_PREFIXES } from '../shared/tenancy';
import type { BridgeConfig } from './config';

export class Store extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, config: BridgeConfig) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: config.tableDeletionProtection,
      removalPolicy: config.tableRemovalPolicy === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
  }

  /**
   * IAM condition: every item key a statement touches starts with one of these prefixes, or for a prefix of
   * a tenant's items, with it under any connection's tenant prefix (`t#*#<prefix>*`, shared/tenancy.ts).
   */
  static leadingKeys(...prefixes: string[]): Record<string, unknown> {
    const tenants = prefixes
      .filter((prefix) => TENANT_KEYED_PREFIXES.includes(prefix))
      .map((prefix) => `${TABLE.prefixes.tenant}*#${prefix}*`);
    return { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...prefixes.map((prefix) => `${prefix}*`), ...tenants] } };
  }
}
