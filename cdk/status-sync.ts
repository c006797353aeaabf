/**
 * Status sync (DESIGN §4 step 4): EventBridge delivers each terminal "Step Functions
 * Execution Status Change" of the tool state machines to a Lambda that writes the
 * outcome to the operation record. Failed deliveries and failed invocations land in
 * one dead-letter queue; a status read reconciles whatever is still missing.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../lambdas/aws/operations-table.ts';
import { BundledFunction } from './bundled-function.ts';
import type { OperationsTable } from './operations-table.ts';
import type { ToolStateMachine } from './tool-state-machine.ts';

/** The statuses that end an execution; the record only ever changes to these. */
export const TERMINAL_EXECUTION_STATUSES = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'];

/** ARNs per rule: an event pattern is limited to 2,048 characters and an ARN takes about 100. */
export const STATE_MACHINES_PER_RULE = 12;

export interface StatusSyncProps {
  /** The status-sync handler module. */
  readonly entry: string;
  readonly operations: OperationsTable;
  /** The server's limits (keepAlive bounds), as the MCP Lambda gets them. */
  readonly limitsEnvironment: Record<string, string>;
  /** STANDARD tool state machines (Step Functions emits no status events for EXPRESS). */
  readonly stateMachines: readonly ToolStateMachine[];
  readonly logRetention: RetentionDays;
  readonly tracing: boolean;
}

export class StatusSync extends Construct {
  public readonly function: BundledFunction;
  /** One rule per {@link STATE_MACHINES_PER_RULE} state machines. */
  public readonly rules: readonly Rule[];
  public readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: StatusSyncProps) {
    super(scope, id);
    if (props.stateMachines.length === 0) throw new Error('StatusSync needs at least one STANDARD state machine');

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is the dead-letter queue of the status-change rule and the status-sync function.',
    });

    this.function = new BundledFunction(this, 'Handler', {
      entry: props.entry,
      description: 'async-mcp status sync: writes terminal execution states to the operations table',
      memorySize: 256,
      timeout: Duration.seconds(30),
      environment: { [ENV.tableName]: props.operations.tableName, ...props.limitsEnvironment },
      logRetention: props.logRetention,
      tracing: props.tracing,
      onFailure: new SqsDestination(this.deadLetterQueue),
    });
    props.operations.grantStatusUpdates(this.function.function);
    for (const machine of props.stateMachines) machine.grantDescribeExecution(this.function.function);

    const rules: Rule[] = [];
    for (let start = 0; start < props.stateMachines.length; start += STATE_MACHINES_PER_RULE) {
      const machines = props.stateMachines.slice(start, start + STATE_MACHINES_PER_RULE);
      const rule = new Rule(this, rules.length === 0 ? 'Rule' : `Rule${rules.length + 1}`, {
        description: 'async-mcp: terminal status changes of the tool state machines',
        eventPattern: {
          source: ['aws.states'],
          detailType: ['Step Functions Execution Status Change'],
          detail: {
            stateMachineArn: machines.map((machine) => machine.stateMachine.stateMachineArn),
            status: TERMINAL_EXECUTION_STATUSES,
          },
        },
      });
      rule.addTarget(
        new LambdaFunction(this.function.function, {
          deadLetterQueue: this.deadLetterQueue,
          retryAttempts: 10,
          maxEventAge: Duration.hours(6),
        }),
      );
      rules.push(rule);
    }
    this.rules = rules;
  }
}
