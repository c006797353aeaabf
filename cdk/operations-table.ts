/**
 * The operations table (DESIGN §4): one item per operation, TTL on `expiresAt`,
 * the owner+time index for listings. Access is granted per role, never `Scan`.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { OPERATIONS_TABLE } from '../lambdas/aws/operations-table.ts';

export interface OperationsTableProps {
  /**
   * What happens to the table when it leaves the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * What the MCP Lambda does to records: conditional puts and updates, reads, index
 * queries; deletes of superseded request aliases and of emptied active-slot items.
 */
const RECORD_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query'];

/**
 * What status-sync does: read a record, write its terminal state (conditionally), and
 * give its active slot back (an update, and a conditional delete of an emptied item).
 */
const STATUS_ACTIONS = ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];

/**
 * What the built-in workers (request_input, report_progress) do: read a record, or the
 * execution pointer item that names it, and update the record conditionally.
 */
const BUILT_IN_WORKER_ACTIONS = ['dynamodb:GetItem', 'dynamodb:UpdateItem'];

export class OperationsTable extends Construct {
  public readonly table: Table;

  constructor(scope: Construct, id: string, props: OperationsTableProps = {}) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: OPERATIONS_TABLE.partitionKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: OPERATIONS_TABLE.ttlAttribute,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: OPERATIONS_TABLE.ownerIndex.name,
      partitionKey: { name: OPERATIONS_TABLE.ownerIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: OPERATIONS_TABLE.ownerIndex.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
  }

  /** The table's name, for the `OPERATIONS_TABLE_NAME` environment variable. */
  public get tableName(): string {
    return this.table.tableName;
  }

  /** Read and write operation records and query the owner index (no Scan, no delete). */
  public grantRecordAccess(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: RECORD_ACTIONS,
      // The index by its exact ARN rather than Table.grant's `index/*`.
      resourceArns: [this.table.tableArn, `${this.table.tableArn}/index/${OPERATIONS_TABLE.ownerIndex.name}`],
    });
  }

  /** Read records and execution pointers, and update records (the built-in workers). */
  public grantBuiltInWorkerAccess(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({ grantee, actions: BUILT_IN_WORKER_ACTIONS, resourceArns: [this.table.tableArn] });
  }

  /** Read a record and update its status (status-sync). */
  public grantStatusUpdates(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({ grantee, actions: STATUS_ACTIONS, resourceArns: [this.table.tableArn] });
  }
}
