/**
 * Status sync (DESIGN §4 step 4): EventBridge delivers each RUNNING and terminal
 * "Step Functions Execution Status Change" of the tool state machines to a Lambda that
 * writes it to the operation record. RUNNING gives the record its execution ARN without
 * a DescribeExecution (about 15/s per account) on a later poll. The rule matches the
 * deployed machines by their ARN prefix (`statusChangePrefixPattern`), so one rule covers any
 * number of tools and the tools removed since, whose runs still end; existing machines a tool
 * names are matched exactly (`statusChangePattern`, the one the local event bus applies). The
 * durable tool functions' "Durable Execution Status Change" events come by a rule of their own,
 * by the functions' ARN prefix (`durableStatusChangePattern`). Failed deliveries and failed invocations land in one dead-letter queue; a
 * status read reconciles whatever is still missing. Its messages hold whole events (tool
 * inputs and outputs), so they are kept only as long as asked.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Rule, type EventPattern, type IEventBus } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { ENV } from '../lambdas/handlers/environment.ts';
import { durableStatusChangePattern, type DurableStatusChangePattern } from '../lambdas/aws/durable-status-events.ts';
import { statusChangePattern, statusChangePrefixPattern, type StatusChangePattern } from '../lambdas/aws/status-events.ts';
import { DURABLE_FUNCTION_ARN_PREFIX_ENV } from '../lambdas/tools/durable-function-names.ts';
import { BundledFunction } from './bundled-function.ts';
import type { OperationsTable } from './operations-table.ts';
import type { FunctionTracing } from './server-tracing.ts';
import type { ToolMachine } from './tool-state-machine.ts';

/** EventBridge's limit on the length of an event pattern. */
export const EVENT_PATTERN_MAX_CHARS = 2048;

/**
 * ARNs per rule, so a rule's pattern stays within {@link EVENT_PATTERN_MAX_CHARS}: a
 * state machine ARN takes up to about 145 characters (80 of them the name). The first rule
 * gives one of them to the prefix of the deployed machines.
 */
export const STATE_MACHINES_PER_RULE = 12;

export interface StatusSyncProps {
  /** The status-sync handler module. */
  readonly entry: string;
  readonly operations: OperationsTable;
  /** The server's limits (keepAlive bounds, active operations), as the MCP Lambda gets them. */
  readonly limitsEnvironment: Record<string, string>;
  /**
   * `arn:…:stateMachine:<prefix>`: every machine the server deploys is named `<prefix><tool>`, so
   * one prefix match covers them all, those of tools removed since included.
   */
  readonly deployedArnPrefix: string;
  /** Existing STANDARD state machines tools name (`stateMachineArn`), matched and granted one by one. */
  readonly existingStateMachines: readonly ToolMachine[];
  /**
   * `arn:…:function:<prefix>`: every durable tool function is named `<prefix><tool>`. Set in the
   * environment always; with `durableTools`, one more rule matches their executions' status changes.
   */
  readonly durableArnPrefix: string;
  /** Whether the server deploys durable tool functions. */
  readonly durableTools: boolean;
  /** Grants describe and stop on the executions of the deployed machines (and durable functions). */
  readonly grantDeployedExecutionControl: (grantee: IGrantable) => void;
  readonly logRetention: RetentionDays;
  readonly tracing: FunctionTracing;
  /**
   * Concurrent executions reserved for (and capping) the status-sync Lambda.
   * @default - none: it shares the account's unreserved concurrency
   */
  readonly reservedConcurrentExecutions?: number;
  /** How long the dead-letter queue keeps a message: from 1 minute to 14 days (SQS's bounds). */
  readonly deadLetterRetention: Duration;
  /** The bus the function puts `Operation Status Changed` events on (lambdas/aws/operation-events.ts); it may put on no other. */
  readonly eventBus: IEventBus;
}

export class StatusSync extends Construct {
  public readonly function: BundledFunction;
  /** The deployed machines' prefix and the first existing machines, then one rule per {@link STATE_MACHINES_PER_RULE} more. */
  public readonly rules: readonly Rule[];
  /** The durable tool functions' executions, by their ARN prefix; absent without durable tools. */
  public readonly durableRule?: Rule;
  public readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: StatusSyncProps) {
    super(scope, id);
    const retention = props.deadLetterRetention.toSeconds();
    if (!Number.isInteger(retention) || retention < 60 || retention > 14 * 24 * 3600) {
      throw new Error(`deadLetterRetention must be a whole number of seconds from 1 minute to 14 days, got ${props.deadLetterRetention.toHumanString()}`);
    }

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: props.deadLetterRetention,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is the dead-letter queue of the status-change rule and the status-sync function.',
    });

    this.function = new BundledFunction(this, 'Handler', {
      entry: props.entry,
      description: 'async-mcp status sync: writes RUNNING and terminal execution states to the operations table',
      memorySize: 256,
      timeout: Duration.seconds(30),
      environment: {
        [ENV.tableName]: props.operations.tableName,
        [ENV.eventBusName]: props.eventBus.eventBusArn,
        [DURABLE_FUNCTION_ARN_PREFIX_ENV]: props.durableArnPrefix,
        ...props.limitsEnvironment,
      },
      logRetention: props.logRetention,
      tracing: props.tracing,
      onFailure: new SqsDestination(this.deadLetterQueue),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    });
    props.operations.grantStatusUpdates(this.function.function);
    // events:PutEvents on this bus's ARN only.
    props.eventBus.grantPutEventsTo(this.function.function);
    // Stop as well as describe: a RUNNING event for an operation canceled while it was
    // starting stops that execution, so the cancel leaves no orphan.
    props.grantDeployedExecutionControl(this.function.function);
    for (const machine of props.existingStateMachines) machine.grantExecutionControl(this.function.function);

    const existingArns = props.existingStateMachines.map((machine) => machine.stateMachineArn);
    const patterns = [statusChangePrefixPattern(props.deployedArnPrefix, existingArns.slice(0, STATE_MACHINES_PER_RULE - 1))];
    for (let start = STATE_MACHINES_PER_RULE - 1; start < existingArns.length; start += STATE_MACHINES_PER_RULE) {
      patterns.push(statusChangePattern(existingArns.slice(start, start + STATE_MACHINES_PER_RULE)));
    }
    const rules: Rule[] = [];
    for (const pattern of patterns) {
      const id = rules.length === 0 ? 'Rule' : `Rule${rules.length + 1}`;
      rules.push(this.ruleToFunction(id, 'async-mcp: RUNNING and terminal status changes of the tool state machines', pattern));
    }
    this.rules = rules;
    if (props.durableTools) {
      this.durableRule = this.ruleToFunction(
        'DurableRule',
        'async-mcp: RUNNING and terminal status changes of the durable tool functions',
        durableStatusChangePattern(props.durableArnPrefix),
      );
    }
  }

  /** A rule delivering `pattern` to the function, retried and dead-lettered as every status change is. */
  private ruleToFunction(id: string, description: string, pattern: StatusChangePattern | DurableStatusChangePattern): Rule {
    const rule = new Rule(this, id, { description, eventPattern: cdkEventPattern(pattern) });
    rule.addTarget(
      new LambdaFunction(this.function.function, {
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 10,
        maxEventAge: Duration.hours(6),
      }),
    );
    return rule;
  }
}

/** The EventBridge JSON pattern in CDK's spelling (`detailType` renders as `detail-type`). */
function cdkEventPattern(pattern: StatusChangePattern | DurableStatusChangePattern): EventPattern {
  return { source: pattern.source, detailType: pattern['detail-type'], detail: pattern.detail as EventPattern['detail'] };
}
