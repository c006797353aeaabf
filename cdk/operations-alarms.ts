/**
 * The alarms an operator of the server needs, each saying what it means and what to do:
 * status changes in the dead-letter queue, status-sync errors, the execution failure rate
 * of each tool's state machine or durable function, Lambda throttles and DynamoDB throttles. With a topic,
 * each notifies it on ALARM and on OK; without one, they only show in CloudWatch.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, Stats, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { durableExecutionFailureRate, executionFailureRate, METRIC_PERIOD, tableThrottledRequests, type MonitoredResources } from './observability.ts';

/** The default of {@link OperationsAlarmsProps.executionFailureRatePercent}. */
export const DEFAULT_EXECUTION_FAILURE_RATE_PERCENT = 10;
/** The window of the failure rate: long enough that one failure among a few runs is a rate, not noise. */
export const EXECUTION_FAILURE_RATE_PERIOD = Duration.minutes(15);
/**
 * Up to this many deployed state machines, each gets its own failure-rate alarm. Beyond it,
 * one alarm watches {@link MACHINES_PER_GROUPED_ALARM} machines of one stack (the highest of
 * their rates): fewer alarms to pay for, and fewer resources in each nested tool stack.
 */
export const MAX_ALARMS_PER_MACHINE = 30;
/** An alarm's expression may use at most 10 metrics; each machine's rate takes 3. */
export const MACHINES_PER_GROUPED_ALARM = 3;

/**
 * The shape every alarm of the server has: it fires when one period's value is above
 * `threshold`, and no data counts as OK (these metrics exist only while something happens).
 */
export function alarmAbove(scope: Construct, id: string, metric: IMetric, threshold: number, description: string): Alarm {
  return new Alarm(scope, id, {
    metric,
    threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    alarmDescription: description,
  });
}

export interface OperationsAlarmsProps extends MonitoredResources {
  /**
   * Notified when an alarm goes to ALARM and back to OK.
   * @default - no actions
   */
  readonly alarmTopic?: ITopic;
  /**
   * The share of a tool's executions that may fail or time out in 15 minutes, in percent,
   * before its alarm fires.
   * @default 10
   */
  readonly executionFailureRatePercent?: number;
}

export class OperationsAlarms extends Construct {
  /** Every alarm below. */
  public readonly all: readonly Alarm[];
  /** Status changes status-sync could not apply; absent without status sync. */
  public readonly deadLetterQueueDepth?: Alarm;
  /** Status-sync invocations that threw; absent without status sync. */
  public readonly statusSyncErrors?: Alarm;
  /** Tool name -> the failure-rate alarm watching its state machine or durable function (shared by a group beyond {@link MAX_ALARMS_PER_MACHINE}). */
  public readonly executionFailureRate: ReadonlyMap<string, Alarm>;
  /** Function label (`Mcp`, `StatusSync`, `Worker <name>`) -> its throttle alarm. */
  public readonly throttles: ReadonlyMap<string, Alarm>;
  /** Requests to the operations table that DynamoDB throttled. */
  public readonly tableThrottles: Alarm;

  private readonly scopes = new Map<string, Construct>();

  constructor(scope: Construct, id: string, props: OperationsAlarmsProps) {
    super(scope, id);
    const ratePercent = props.executionFailureRatePercent ?? DEFAULT_EXECUTION_FAILURE_RATE_PERCENT;
    if (!(ratePercent > 0 && ratePercent <= 100)) throw new Error(`executionFailureRatePercent must be above 0 and at most 100, got ${ratePercent}`);
    const all: Alarm[] = [];
    const alarm = (parent: Construct, alarmId: string, metric: IMetric, threshold: number, description: string): Alarm => {
      const created = alarmAbove(parent, alarmId, metric, threshold, description);
      all.push(created);
      return created;
    };
    const sum = { statistic: Stats.SUM, period: METRIC_PERIOD };

    if (props.statusSync) {
      const { function: statusSync, deadLetterQueue } = props.statusSync;
      this.deadLetterQueueDepth = alarm(
        this,
        'DeadLetterQueueDepth',
        deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: METRIC_PERIOD }),
        0,
        'async-mcp: the status-sync dead-letter queue holds status changes that could not be applied to operation records ' +
          '(EventBridge could not deliver them, or status-sync failed on them after its retries). Records stay correct meanwhile: ' +
          'a status read of a stale record reconciles it with DescribeExecution. To do: find the cause in the status-sync logs and fix it; ' +
          "then replay each message's event (the body, or its requestPayload) to the status-sync function, which is idempotent, and delete the message. " +
          'The stack outputs StatusSyncDeadLetterQueueUrl and StatusSyncFunctionName name both.',
      );
      this.statusSyncErrors = alarm(
        this,
        'StatusSyncErrors',
        statusSync.metricErrors(sum),
        0,
        'async-mcp: status-sync threw while applying an execution status change to its record (5-minute sum above 0). ' +
          'EventBridge retries; what still fails goes to the dead-letter queue, and status reads reconcile meanwhile, ' +
          'at the cost of DescribeExecution calls. To do: read the status-sync log group for the error (each line carries the request id).',
      );
    }

    // Tool and function names as construct ids, under their own scopes, so they cannot collide.
    // An alarm lives in the stack of what it watches (a nested tool or worker stack), so
    // it grows that stack, not this one.
    const ratesScope = new Construct(this, 'ExecutionFailureRate');
    const rates = new Map<string, Alarm>();
    // State machines and durable functions alike: each alarm lives in the stack of the tools it watches.
    const watched: WatchedTool[] = [
      ...[...props.stateMachines].map(
        ([tool, machine]): WatchedTool => ({
          tool,
          durable: false,
          stack: Stack.of(machine),
          rate: (suffix) => executionFailureRate(machine, EXECUTION_FAILURE_RATE_PERIOD, suffix),
        }),
      ),
      ...[...(props.durableFunctions ?? [])].map(
        ([tool, fn]): WatchedTool => ({
          tool,
          durable: true,
          stack: Stack.of(fn.function),
          rate: (suffix) => durableExecutionFailureRate(fn.functionName, EXECUTION_FAILURE_RATE_PERIOD, suffix),
        }),
      ),
    ].sort((a, b) => a.tool.localeCompare(b.tool));
    const groupSize = watched.length > MAX_ALARMS_PER_MACHINE ? MACHINES_PER_GROUPED_ALARM : 1;
    const byStack = new Map<Stack, WatchedTool[]>();
    for (const entry of watched) byStack.set(entry.stack, [...(byStack.get(entry.stack) ?? []), entry]);
    for (const [stack, stackTools] of byStack) {
      const scope = this.scopeIn(stack, 'ExecutionFailureRate', ratesScope);
      for (let start = 0; start < stackTools.length; start += groupSize) {
        const group = stackTools.slice(start, start + groupSize);
        const tools = group.map(({ tool }) => tool);
        const [only] = group;
        const metric =
          group.length === 1 && only
            ? only.rate('')
            : new MathExpression({
                expression: `MAX([${group.map((_, i) => `rate${i}`).join(', ')}])`,
                usingMetrics: Object.fromEntries(group.map((entry, i) => [`rate${i}`, entry.rate(`${i}`)])),
                label: 'Highest failure rate, %',
                period: EXECUTION_FAILURE_RATE_PERIOD,
              });
        const which = tools.length === 1 ? `tool "${tools[0]}"` : `one of the tools ${tools.map((tool) => `"${tool}"`).join(', ')}`;
        const created = alarm(
          scope,
          tools.join('+'),
          metric,
          ratePercent,
          `async-mcp: more than ${ratePercent}% of the executions of ${which} failed or timed out in 15 minutes ` +
            `(cancels, ${group.some((entry) => entry.durable) ? 'ABORTED or STOPPED' : 'ABORTED'}, do not count). Clients see these as tool errors (isError). ` +
            whereToLook(group),
        );
        for (const tool of tools) rates.set(tool, created);
      }
    }
    this.executionFailureRate = rates;

    const functions: Array<[string, IFunction]> = [
      ['Mcp', props.mcpFunction],
      ...(props.statusSync ? [['StatusSync', props.statusSync.function] as [string, IFunction]] : []),
      ...[...props.workerFunctions].sort(([a], [b]) => a.localeCompare(b)).map(([name, fn]): [string, IFunction] => [`Worker ${name}`, fn]),
    ];
    const throttlesScope = new Construct(this, 'Throttles');
    const throttles = new Map<string, Alarm>();
    for (const [label, fn] of functions) {
      throttles.set(
        label,
        alarm(
          this.scopeIn(Stack.of(fn), 'Throttles', throttlesScope),
          label,
          fn.metricThrottles(sum),
          0,
          `async-mcp: Lambda throttled the ${label} function (5-minute sum above 0): it reached its reserved concurrency or the account's limit. ` +
            (label === 'Mcp'
              ? 'Clients got HTTP 429 and retry. '
              : label === 'StatusSync'
                ? 'Events are retried, then go to the dead-letter queue. '
                : 'The Task state retries per its Retry policy, else the execution fails. ') +
            "To do: compare ConcurrentExecutions with the reservation (the *ReservedConcurrency settings) and the account's quota; raise one, or lower the load.",
        ),
      );
    }
    this.throttles = throttles;

    this.tableThrottles = alarm(
      this,
      'TableThrottles',
      tableThrottledRequests(props.table),
      0,
      'async-mcp: DynamoDB throttled requests to the operations table (5-minute sum above 0). The table is on-demand, so this is a hot ' +
        "partition or the table's or account's throughput quota. Clients see errors or slow calls. To do: look at the ThrottledRequests " +
        'metric by operation and the consumed capacity on the dashboard, and ask for a higher quota if the load is real.',
    );

    this.all = all;
    if (props.alarmTopic) {
      const action = new SnsAction(props.alarmTopic);
      for (const each of all) {
        each.addAlarmAction(action);
        each.addOkAction(action);
      }
    }
  }

  /** `here` when `stack` is this construct's own, else one `id` scope per other stack. */
  private scopeIn(stack: Stack, id: string, here: Construct): Construct {
    if (stack === Stack.of(this)) return here;
    const key = `${stack.node.path}/${id}`;
    let scope = this.scopes.get(key);
    if (!scope) {
      scope = new Construct(stack, `Alarms${id}`);
      this.scopes.set(key, scope);
    }
    return scope;
  }
}

/** A tool whose executions' failure rate is watched: a state machine's or a durable function's. */
interface WatchedTool {
  readonly tool: string;
  readonly durable: boolean;
  readonly stack: Stack;
  /** The rate, its metric ids ending in `suffix` (unique within one alarm). */
  readonly rate: (suffix: string) => IMetric;
}

/** The alarm's advice: where the failed executions of `group` can be read. */
function whereToLook(group: readonly WatchedTool[]): string {
  const machines =
    "open the failed executions in the Step Functions console, or the state machine's log group, and fix the worker, the definition or the service it calls";
  const durable =
    "open the failed durable executions in the Lambda console (the function's durable executions), or its log group, and fix durable.ts or the service it calls";
  const kinds = [...(group.some((entry) => !entry.durable) ? [machines] : []), ...(group.some((entry) => entry.durable) ? [durable] : [])];
  return `To do: ${kinds.join('; for a durable function, ')}.`;
}
