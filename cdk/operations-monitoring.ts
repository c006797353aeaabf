/**
 * How AsyncMcpServer is watched: the Powertools names its functions' logs and metrics carry,
 * the alarms (operations-alarms.ts) and the dashboard (operations-dashboard.ts), which also
 * shows the alarms of other parts (the webhook delivery dead-letter alarm).
 *
 * A part of the server, not a construct of its own: the alarms and the dashboard sit in the
 * server's scope under the ids they always had, so their logical ids stay.
 */
import type { Alarm, Dashboard, IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { type MonitoredResources, POWERTOOLS_ENVIRONMENT } from './observability.ts';
import { OperationsAlarms } from './operations-alarms.ts';
import { OperationsDashboard } from './operations-dashboard.ts';
import type { DurableToolFunction } from './durable-tool-function.ts';
import type { ToolStateMachine } from './tool-state-machine.ts';

export interface OperationsMonitoringProps {
  /** The MCP Lambda. */
  readonly mcpFunction: LambdaFunction;
  /** Absent when every tool is EXPRESS. */
  readonly statusSync?: { readonly function: LambdaFunction; readonly deadLetterQueue: IQueue };
  /** Worker name -> its Lambda. */
  readonly workerFunctions: ReadonlyMap<string, LambdaFunction>;
  readonly table: ITable;
  /** Tool name -> the state machine deployed for it (existing machines are watched by their owners). */
  readonly machines: ReadonlyMap<string, ToolStateMachine>;
  /** Tool name -> the durable function deployed for it. @default - none */
  readonly durableFunctions?: ReadonlyMap<string, DurableToolFunction>;
  /** Told of every alarm. @default - no actions */
  readonly alarmTopic?: ITopic;
  /** @default 10 */
  readonly executionFailureRatePercent?: number;
  /** Alarms of other parts, shown on the dashboard beside these. @default - none */
  readonly otherAlarms?: readonly Alarm[];
}

export class OperationsMonitoring {
  /** The alarms (dead-letter queue, status-sync errors, execution failure rates, throttles). */
  public readonly alarms: OperationsAlarms;
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, props: OperationsMonitoringProps) {
    const { machines, durableFunctions = new Map(), alarmTopic, executionFailureRatePercent, otherAlarms = [], ...functions } = props;
    const durable = [...durableFunctions.values()].map((tool) => tool.function);
    // The names the logs and metrics carry, which the dashboard searches for.
    for (const fn of [functions.mcpFunction, functions.statusSync?.function, ...functions.workerFunctions.values(), ...durable]) {
      for (const [name, value] of Object.entries(POWERTOOLS_ENVIRONMENT)) fn?.addEnvironment(name, value);
    }
    const monitored: MonitoredResources = {
      ...functions,
      stateMachines: new Map([...machines].map(([tool, machine]) => [tool, machine.stateMachine])),
      // Each by its name, fixed at synth: the dashboard in this stack names it without a reference into a nested one.
      durableFunctions,
    };
    this.alarms = new OperationsAlarms(scope, 'Alarms', { ...monitored, alarmTopic, executionFailureRatePercent });
    // The dashboard names each machine by its ARN, built from its name here: no output per machine from the nested stacks.
    const dashboardScope = new Construct(scope, 'DashboardMachines');
    const namedMachines = new Map(
      [...machines].map(([tool, machine]) => [tool, StateMachine.fromStateMachineName(dashboardScope, tool, machine.stateMachineName)]),
    );
    const alarms: IAlarm[] = [...this.alarms.all, ...otherAlarms];
    this.dashboard = new OperationsDashboard(scope, 'Dashboard', { ...monitored, stateMachines: namedMachines, alarms }).dashboard;
  }
}
