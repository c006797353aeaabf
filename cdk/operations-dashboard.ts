/**
 * The stack's CloudWatch dashboard: alarm states first, then the MCP Lambda, the operations
 * the server ran (custom EMF metrics, by tool and dialect), status sync and its dead-letter
 * queue, the operations table, the workers, and each tool's state machine or durable function.
 */
import {
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  MathExpression,
  Stats,
  TextWidget,
  type IAlarm,
  type IMetric,
  type IWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { METRIC } from '../lambdas/observability/metrics-recorder.ts';
import { customMetric, customMetricSearch, durableExecutionMetric, METRIC_PERIOD, tableThrottledRequests, type MonitoredResources } from './observability.ts';

export interface OperationsDashboardProps extends MonitoredResources {
  /** Shown in the alarm status widget. */
  readonly alarms: readonly IAlarm[];
  /**
   * The dashboard's name.
   * @default - a name CloudFormation generates
   */
  readonly dashboardName?: string;
}

const WIDTH = 24;
/** CloudWatch's limits on one dashboard: widgets, and metrics across all widgets. */
export const MAX_WIDGETS = 500;
export const MAX_METRICS = 2500;
/** Alarms per alarm status widget (the console adds at most 100 to one). */
export const ALARMS_PER_WIDGET = 100;
const METRICS_PER_TOOL_GRAPH = 5;
/**
 * Tools graphed one by one, state machines first, then durable functions. Each graph takes
 * about 1.7 KB of the top-level template (five state machine ARNs), which must stay well below
 * 1 MB whatever the catalog; the executions of the others are in the Step Functions or Lambda
 * console, and their failure-rate alarms are above.
 */
export const MAX_TOOL_GRAPHS = 60;

/** Metrics a graph line costs: itself, and those a math expression uses. */
function metricCount(metric: IMetric): number {
  return 1 + (metric instanceof MathExpression ? Object.values(metric.usingMetrics).reduce((count, used) => count + metricCount(used), 0) : 0);
}

export class OperationsDashboard extends Construct {
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    this.dashboard = new Dashboard(this, 'Dashboard', props.dashboardName ? { dashboardName: props.dashboardName } : {});
    const sum = { statistic: Stats.SUM, period: METRIC_PERIOD };
    // What the dashboard holds so far, against CloudWatch's limits on one dashboard.
    const used = { widgets: 0, metrics: 0 };
    const graph = (title: string, left: IMetric[], width = 6, right?: IMetric[]) => {
      used.widgets += 1;
      used.metrics += [...left, ...(right ?? [])].reduce((count, metric) => count + metricCount(metric), 0);
      return new GraphWidget({ title, left, ...(right ? { right } : {}), width, height: 6 });
    };
    const heading = (markdown: string) => {
      used.widgets += 1;
      return new TextWidget({ markdown, width: WIDTH, height: 1 });
    };

    const rows: IWidget[][] = [];
    for (let start = 0; start < Math.max(props.alarms.length, 1); start += ALARMS_PER_WIDGET) {
      used.widgets += 1;
      const title = props.alarms.length > ALARMS_PER_WIDGET ? `Alarms (${start / ALARMS_PER_WIDGET + 1})` : 'Alarms';
      rows.push([new AlarmStatusWidget({ title, alarms: props.alarms.slice(start, start + ALARMS_PER_WIDGET), width: WIDTH, height: 4 })]);
    }

    const mcp = props.mcpFunction;
    rows.push([heading('### MCP Lambda')]);
    rows.push([
      graph('MCP requests', [mcp.metricInvocations(sum), mcp.metricErrors(sum), mcp.metricThrottles(sum)]),
      graph('MCP duration', [
        mcp.metricDuration({ statistic: Stats.p(50), period: METRIC_PERIOD }),
        mcp.metricDuration({ statistic: Stats.p(99), period: METRIC_PERIOD }),
      ]),
      graph('MCP concurrency', [mcp.metric('ConcurrentExecutions', { statistic: Stats.MAXIMUM, period: METRIC_PERIOD })]),
      graph('Status polls by dialect', [customMetricSearch(METRIC.polls, ['dialect'], 'Sum', 'Polls')]),
    ]);

    rows.push([heading('### Operations (by tool and dialect)')]);
    rows.push([
      graph(
        'Operations started and ended',
        [
          customMetricSearch(METRIC.started, ['tool', 'dialect'], 'Sum', 'Started'),
          customMetricSearch(METRIC.completed, ['tool', 'dialect'], 'Sum', 'Completed'),
          customMetricSearch(METRIC.failed, ['tool', 'dialect'], 'Sum', 'Failed'),
          customMetricSearch(METRIC.cancelled, ['tool', 'dialect'], 'Sum', 'Cancelled'),
        ],
        12,
      ),
      graph('Input-required waits', [customMetricSearch(METRIC.inputRequired, ['tool'], 'Sum', 'Input required')]),
      graph('Status-sync lag (event to record)', [
        customMetric(METRIC.statusSyncLag, Stats.p(50), 'Lag p50'),
        customMetric(METRIC.statusSyncLag, Stats.p(99), 'Lag p99'),
      ]),
    ]);

    if (props.statusSync) {
      const { function: statusSync, deadLetterQueue } = props.statusSync;
      rows.push([heading('### Status sync')]);
      rows.push([
        graph('Status-sync invocations', [statusSync.metricInvocations(sum), statusSync.metricErrors(sum), statusSync.metricThrottles(sum)]),
        graph('Status-sync duration', [
          statusSync.metricDuration({ statistic: Stats.p(50), period: METRIC_PERIOD }),
          statusSync.metricDuration({ statistic: Stats.p(99), period: METRIC_PERIOD }),
        ]),
        graph('Dead-letter queue depth', [deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: METRIC_PERIOD })]),
      ]);
    }

    const table = props.table;
    const workers = [...props.workerFunctions].sort(([a], [b]) => a.localeCompare(b));
    rows.push([heading('### Operations table and workers')]);
    rows.push([
      graph('Table consumed capacity', [table.metricConsumedReadCapacityUnits(sum), table.metricConsumedWriteCapacityUnits(sum)]),
      graph('Table throttled requests', [tableThrottledRequests(table)]),
      ...(workers.length > 0
        ? [
            graph(
              'Worker errors and throttles',
              workers.flatMap(([name, fn]) => [
                fn.metricErrors({ ...sum, label: `${name} errors` }),
                fn.metricThrottles({ ...sum, label: `${name} throttles` }),
              ]),
              12,
            ),
          ]
        : []),
    ]);

    const all = [...props.stateMachines].sort(([a], [b]) => a.localeCompare(b));
    if (all.length > 0) rows.push([heading('### Tool state machines (executions)')]);
    // One graph of 5 metrics per tool while the dashboard has room; a note names the rest.
    const room = Math.min(MAX_TOOL_GRAPHS, MAX_WIDGETS - used.widgets - 1, Math.floor((MAX_METRICS - used.metrics) / METRICS_PER_TOOL_GRAPH));
    const machines = all.slice(0, Math.max(room, 0));
    if (machines.length < all.length) {
      rows.push([
        new TextWidget({
          markdown:
            `${all.length - machines.length} more tools (${all[machines.length]?.[0]} onwards, by name) have no graph here: the dashboard graphs at most ` +
            `${MAX_TOOL_GRAPHS} tools, to stay small. Their executions are in the Step Functions console and the AWS/States metrics; their failure-rate alarms are above.`,
          width: WIDTH,
          height: 2,
        }),
      ]);
    }
    for (let start = 0; start < machines.length; start += 4) {
      rows.push(
        machines
          .slice(start, start + 4)
          .map(([tool, machine]) =>
            graph(tool, [
              machine.metricStarted({ ...sum, label: 'Started' }),
              machine.metricSucceeded({ ...sum, label: 'Succeeded' }),
              machine.metricFailed({ ...sum, label: 'Failed' }),
              machine.metricTimedOut({ ...sum, label: 'Timed out' }),
              machine.metricAborted({ ...sum, label: 'Aborted (cancelled)' }),
            ]),
          ),
      );
    }

    const allDurable = [...(props.durableFunctions ?? [])].sort(([a], [b]) => a.localeCompare(b));
    if (allDurable.length > 0) rows.push([heading('### Durable tool functions (executions)')]);
    const durableRoom = Math.min(
      MAX_TOOL_GRAPHS - machines.length,
      MAX_WIDGETS - used.widgets - 1,
      Math.floor((MAX_METRICS - used.metrics) / METRICS_PER_TOOL_GRAPH),
    );
    const durable = allDurable.slice(0, Math.max(durableRoom, 0));
    if (durable.length < allDurable.length) {
      rows.push([
        new TextWidget({
          markdown:
            `${allDurable.length - durable.length} more durable tools (${allDurable[durable.length]?.[0]} onwards, by name) have no graph here: the dashboard graphs at most ` +
            `${MAX_TOOL_GRAPHS} tools, to stay small. Their executions are in the Lambda console and the AWS/Lambda DurableExecution* metrics; their failure-rate alarms are above.`,
          width: WIDTH,
          height: 2,
        }),
      ]);
    }
    for (let start = 0; start < durable.length; start += 4) {
      rows.push(
        durable
          .slice(start, start + 4)
          .map(([tool, { functionName }]) =>
            graph(tool, [
              durableExecutionMetric(functionName, 'started', { label: 'Started' }),
              durableExecutionMetric(functionName, 'succeeded', { label: 'Succeeded' }),
              durableExecutionMetric(functionName, 'failed', { label: 'Failed' }),
              durableExecutionMetric(functionName, 'timedOut', { label: 'Timed out' }),
              durableExecutionMetric(functionName, 'stopped', { label: 'Stopped (cancelled)' }),
            ]),
          ),
      );
    }
    for (const row of rows) this.dashboard.addWidgets(...row);
  }
}
