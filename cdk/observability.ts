/**
 * The server's metrics as CloudWatch sees them: what the dashboard graphs and the alarms
 * watch. AWS metrics of the functions, queue, table and state machines, derived metrics
 * (table throttles, execution failure rate), and searches over the custom EMF metrics
 * the functions write (lambdas/observability), under the names every function is given.
 */
import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, Stats, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { IConstruct } from 'constructs';
import { METRICS_NAMESPACE } from '../lambdas/observability/emf-metrics.ts';
import type { MetricName } from '../lambdas/observability/metrics-recorder.ts';
import { SERVICE_NAME } from '../lambdas/observability/structured-logger.ts';

/** Given to every function, so its logs and metrics carry the names the dashboard searches for. */
export const POWERTOOLS_ENVIRONMENT = {
  POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
  POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
} as const;

/** The default period of graphs and alarms. */
export const METRIC_PERIOD = Duration.minutes(5);

/** What the dashboard and the alarms watch. */
export interface MonitoredResources {
  /** The MCP Lambda. */
  readonly mcpFunction: IFunction;
  /** Absent when every tool is EXPRESS. */
  readonly statusSync?: { readonly function: IFunction; readonly deadLetterQueue: IQueue };
  /** Worker name -> its Lambda. */
  readonly workerFunctions: ReadonlyMap<string, IFunction>;
  /** The operations table. */
  readonly table: ITable;
  /** Tool name -> the state machine deployed for it (existing machines are watched by their owners). */
  readonly stateMachines: ReadonlyMap<string, IStateMachine>;
  /** Tool name -> the durable function deployed for it. @default - none */
  readonly durableFunctions?: ReadonlyMap<string, DurableFunctionMetrics>;
}

/**
 * A durable tool function as its metrics name it: by its name, fixed at synth, so a graph or
 * an alarm in any stack names it without a reference across stacks.
 */
export interface DurableFunctionMetrics {
  readonly functionName: string;
  /** The function: what watches it lives in its stack. */
  readonly function: IConstruct;
}

/** The table operations the server's roles may call (operations-table.ts), each a `ThrottledRequests` series. */
export const TABLE_OPERATIONS = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query'] as const;

/**
 * Requests to the table DynamoDB throttled, summed over {@link TABLE_OPERATIONS}. Each
 * series exists only while throttling happens, so each is filled with 0: a plain sum would
 * have a value only when every operation was throttled at once.
 */
export function tableThrottledRequests(table: ITable, period: Duration = METRIC_PERIOD): IMetric {
  const usingMetrics = Object.fromEntries(
    TABLE_OPERATIONS.map((operation) => [
      operation.charAt(0).toLowerCase() + operation.slice(1),
      new Metric({
        namespace: 'AWS/DynamoDB',
        metricName: 'ThrottledRequests',
        dimensionsMap: { TableName: table.tableName, Operation: operation },
        statistic: Stats.SUM,
        period,
      }),
    ]),
  );
  return new MathExpression({
    expression: Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics,
    label: 'Throttled requests',
    period,
  });
}

/**
 * A state machine's executions that FAILED or TIMED_OUT, in percent of those started, per period. ABORTED is
 * a cancel, not a failure. A period with failures but no start (a long run that began
 * earlier) counts as 100%, so a slow tool's failures are not hidden; one with neither
 * has the value 0.
 */
export function executionFailureRate(stateMachine: IStateMachine, period: Duration, idSuffix = ''): IMetric {
  const options = { statistic: Stats.SUM, period };
  return failureRate(
    { started: stateMachine.metricStarted(options), failed: stateMachine.metricFailed(options), timedOut: stateMachine.metricTimedOut(options) },
    period,
    idSuffix,
  );
}

/** The AWS/Lambda metrics of a durable function's executions, by function name, as the console shows them. */
export const DURABLE_EXECUTION_METRICS = {
  started: 'DurableExecutionStarted',
  succeeded: 'DurableExecutionSucceeded',
  failed: 'DurableExecutionFailed',
  timedOut: 'DurableExecutionTimedOut',
  stopped: 'DurableExecutionStopped',
} as const;

/** One of a durable function's execution metrics (a sum per period, unless `options` say otherwise). */
export function durableExecutionMetric(
  functionName: string,
  metric: keyof typeof DURABLE_EXECUTION_METRICS,
  options: { period?: Duration; label?: string } = {},
): Metric {
  return new Metric({
    namespace: 'AWS/Lambda',
    metricName: DURABLE_EXECUTION_METRICS[metric],
    dimensionsMap: { FunctionName: functionName },
    statistic: Stats.SUM,
    period: options.period ?? METRIC_PERIOD,
    ...(options.label ? { label: options.label } : {}),
  });
}

/** The same rate for a durable function's executions; a stop (DurableExecutionStopped) is a cancel. */
export function durableExecutionFailureRate(functionName: string, period: Duration, idSuffix = ''): IMetric {
  const metric = (name: keyof typeof DURABLE_EXECUTION_METRICS) => durableExecutionMetric(functionName, name, { period });
  return failureRate({ started: metric('started'), failed: metric('failed'), timedOut: metric('timedOut') }, period, idSuffix);
}

function failureRate(metrics: { started: IMetric; failed: IMetric; timedOut: IMetric }, period: Duration, idSuffix: string): IMetric {
  // Ids are unique within an alarm, which may watch several tools.
  const [started, failed, timedOut] = [`started${idSuffix}`, `failed${idSuffix}`, `timedOut${idSuffix}`] as const;
  const bad = `FILL(${failed}, 0) + FILL(${timedOut}, 0)`;
  return new MathExpression({
    expression: `IF(FILL(${started}, 0) > 0, 100 * (${bad}) / FILL(${started}, 0), IF(${bad} > 0, 100, 0))`,
    usingMetrics: { [started]: metrics.started, [failed]: metrics.failed, [timedOut]: metrics.timedOut },
    label: 'Failed or timed out, % of started',
    period,
  });
}

/**
 * Every series of a custom metric, one per value of its dimensions (`tool`, `dialect`):
 * a SEARCH over the dimension set Powertools writes (`service` plus `dimensions`), each
 * series labelled with its dimension values (CloudWatch dynamic labels).
 */
export function customMetricSearch(name: MetricName, dimensions: readonly string[], statistic: string, label: string, period = METRIC_PERIOD): IMetric {
  const schema = [METRICS_NAMESPACE, 'service', ...dimensions].join(',');
  return new MathExpression({
    expression: `SEARCH('{${schema}} MetricName="${name}" service="${SERVICE_NAME}"', '${statistic}', ${period.toSeconds()})`,
    usingMetrics: {},
    label: [label, ...dimensions.map((dimension) => `\${PROP('Dim.${dimension}')}`)].join(' '),
    period,
  });
}

/** A custom metric whose only dimension is `service`. */
export function customMetric(name: MetricName, statistic: string, label: string, period = METRIC_PERIOD): Metric {
  return new Metric({ namespace: METRICS_NAMESPACE, metricName: name, dimensionsMap: { service: SERVICE_NAME }, statistic, label, period });
}
