/**
 * The stack's CloudWatch dashboard: alarm states first, then the MCP Lambda, the operations
 * the server ran (custom EMF metrics, by tool and dialect), status sync and its dead-letter
 * queue, the operations table, the workers, and each tool's state machine.
 */
import { AlarmStatusWidget, Dashboard, GraphWidget, Stats, TextWidget, type IAlarm, type IMetric, type IWidget } from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { METRIC } from '../lambdas/observability/metrics-recorder.ts';
import { customMetric, customMetricSearch, METRIC_PERIOD, tableThrottledRequests, type MonitoredResources } from './observability.ts';

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

export class OperationsDashboard extends Construct {
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    this.dashboard = new Dashboard(this, 'Dashboard', props.dashboardName ? { dashboardName: props.dashboardName } : {});
    const sum = { statistic: Stats.SUM, period: METRIC_PERIOD };
    const graph = (title: string, left: IMetric[], width = 6, right?: IMetric[]) =>
      new GraphWidget({ title, left, ...(right ? { right } : {}), width, height: 6 });
    const heading = (markdown: string) => new TextWidget({ markdown, width: WIDTH, height: 1 });

    const rows: IWidget[][] = [];
    rows.push([new AlarmStatusWidget({ title: 'Alarms', alarms: [...props.alarms], width: WIDTH, height: 4 })]);

    const mcp = props.mcpFunction;
    rows.push([heading('### MCP Lambda')]);
    rows.push([
      graph('MCP requests', [mcp.metricInvocations(sum), mcp.metricErrors(sum), mcp.metricThrottles(sum)]),
      graph('MCP duration', [mcp.metricDuration({ statistic: Stats.p(50), period: METRIC_PERIOD }), mcp.metricDuration({ statistic: Stats.p(99), period: METRIC_PERIOD })]),
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
              workers.flatMap(([name, fn]) => [fn.metricErrors({ ...sum, label: `${name} errors` }), fn.metricThrottles({ ...sum, label: `${name} throttles` })]),
              12,
            ),
          ]
        : []),
    ]);

    const machines = [...props.stateMachines].sort(([a], [b]) => a.localeCompare(b));
    if (machines.length > 0) rows.push([heading('### Tool state machines (executions)')]);
    for (let start = 0; start < machines.length; start += 4) {
      rows.push(
        machines.slice(start, start + 4).map(([tool, machine]) =>
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
    for (const row of rows) this.dashboard.addWidgets(...row);
  }
}
