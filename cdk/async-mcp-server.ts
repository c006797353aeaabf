/**
 * AsyncMcpServer: the whole async MCP server as one construct (DESIGN §6), composed of parts
 * the way Solutions Constructs compose theirs:
 * - resolveServerSettings (server-settings.ts): the props checked, defaults filled in;
 * - the operations table, the results bucket and the server key, which every part reads;
 * - ToolMachines (tool-machines.ts): one state machine or durable function per tool folder (none
 *   for a tool naming an existing machine) in nested stacks, one Lambda per worker the
 *   definitions name, and the grants to start and control them;
 * - McpEndpoint (mcp-endpoint.ts): the MCP Lambda, its grants and its Function URL; who may
 *   call is the `auth` prop (mcp-auth.ts), and IAM callers are granted with `grantInvoke`;
 * - status sync (status-sync.ts), when any tool runs STANDARD or as a durable function;
 * - EventsDelivery (events-delivery.ts): the Events extension's settings and webhook delivery;
 * - OperationsMonitoring (operations-monitoring.ts): Powertools names, alarms and the dashboard.
 * The parts make their resources in this construct's scope under the ids they always had, so
 * the logical ids stay (test/cdk/template-snapshot.test.ts holds the templates to that).
 */
import { type NestedStack, Stack } from 'aws-cdk-lib';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { EventBus, type IEventBus } from 'aws-cdk-lib/aws-events';
import type { Grant, IGrantable } from 'aws-cdk-lib/aws-iam';
import type { FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { ENV } from '../lambdas/handlers/environment.ts';
import type { AsyncMcpServerProps } from './async-mcp-server-props.ts';
import { EventsDelivery, serverEventsParticipants } from './events-delivery.ts';
import type { DurableToolFunction } from './durable-tool-function.ts';
import type { ExistingToolStateMachine } from './existing-tool-state-machine.ts';
import type { McpAuth } from './mcp-auth.ts';
import { McpEndpoint } from './mcp-endpoint.ts';
import type { OperationsAlarms } from './operations-alarms.ts';
import { OperationsMonitoring } from './operations-monitoring.ts';
import { OperationsTable } from './operations-table.ts';
import { STATUS_SYNC_ENTRY } from './repo-paths.ts';
import { ResultsBucket } from './results-bucket.ts';
import { ServerKey } from './server-key.ts';
import { resolveServerSettings, type ServerSettings } from './server-settings.ts';
import { StatusSync } from './status-sync.ts';
import { ToolMachines } from './tool-machines.ts';
import type { ToolStateMachine } from './tool-state-machine.ts';

export type { AsyncMcpServerProps } from './async-mcp-server-props.ts';

export class AsyncMcpServer extends Construct {
  public readonly operations: OperationsTable;
  /** Tool results too large for a record; the MCP Lambda serves them with resources/read. */
  public readonly results: ResultsBucket;
  /** The server's secret key (Secrets Manager): the MCP Lambda, status sync (the events owner id) and webhook delivery (sealed secrets) may read it. */
  public readonly serverKey: ServerKey;
  /** The MCP Lambda (Function URL payload v2, response streaming). */
  public readonly mcpFunction: NodejsFunction;
  /** Invoke mode RESPONSE_STREAM, so server-sent events reach the client as they are written. */
  public readonly functionUrl: FunctionUrl;
  /** Tool name -> the state machine this construct deploys for it (in a nested stack of the tools). */
  public readonly toolStateMachines: ReadonlyMap<string, ToolStateMachine>;
  /** Tool name -> the existing state machine it runs (`stateMachineArn` in its tool.json). */
  public readonly existingStateMachines: ReadonlyMap<string, ExistingToolStateMachine>;
  /** The prefix of every deployed state machine's name: `<prefix><tool>` (see state-machine-names.ts). */
  public readonly stateMachineNamePrefix: string;
  /** Tool name -> the durable function this construct deploys for its `durable.ts` (in a nested stack of the tools). */
  public readonly durableToolFunctions: ReadonlyMap<string, DurableToolFunction>;
  /** The prefix of every durable tool function's name: `<prefix><tool>` (see durable-function-names.ts). */
  public readonly durableFunctionNamePrefix: string;
  /** Worker name -> its Lambda (in a nested stack of the workers); grant a worker more here if its code needs it. */
  public readonly workerFunctions: ReadonlyMap<string, NodejsFunction>;
  /** The nested stacks holding the tools' state machines and durable functions, and the workers. */
  public readonly catalogStacks: { readonly tools: readonly NestedStack[]; readonly workers: readonly NestedStack[] };
  /** Absent when every tool is EXPRESS (Step Functions emits no status events for those) and none is durable. */
  public readonly statusSync?: StatusSync;
  /** Who may call the MCP endpoint (an IAM server's `principalScope` filled in). */
  public readonly auth: McpAuth;
  /** Where `Operation Status Changed` events go (the `eventBus` prop, or the default bus). */
  public readonly eventBus: IEventBus;
  /** The alarms (dead-letter queue, status-sync errors, execution failure rates, throttles). */
  public readonly alarms: OperationsAlarms;
  /** The server's CloudWatch dashboard. */
  public readonly dashboard: Dashboard;
  /** The Events extension's settings, and its webhook delivery queue and function. */
  public readonly events: EventsDelivery;
  private readonly endpoint: McpEndpoint;

  constructor(scope: Construct, id: string, props: AsyncMcpServerProps) {
    super(scope, id);
    const settings = resolveServerSettings(props, Stack.of(this).region);
    this.operations = new OperationsTable(this, 'Operations', { removalPolicy: settings.tableRemovalPolicy });
    this.results = new ResultsBucket(this, 'Results', settings.resultLifetimes);
    this.serverKey = new ServerKey(this, 'ServerKey');

    const machines = new ToolMachines(this, { settings, operations: this.operations, results: this.results });
    this.workerFunctions = machines.workerFunctions;
    this.stateMachineNamePrefix = machines.stateMachineNamePrefix;
    this.toolStateMachines = machines.deployed;
    this.durableToolFunctions = machines.durable;
    this.durableFunctionNamePrefix = machines.durableFunctionNamePrefix;
    this.existingStateMachines = machines.existing;
    this.catalogStacks = machines.stacks;

    this.endpoint = new McpEndpoint(this, {
      settings,
      auth: props.auth,
      functionUrlAuthType: props.functionUrlAuthType,
      corsAllowedOrigins: props.corsAllowedOrigins,
      operations: this.operations,
      results: this.results,
      serverKey: this.serverKey,
      machines,
    });
    this.mcpFunction = this.endpoint.function;
    this.functionUrl = this.endpoint.url;
    this.auth = this.endpoint.auth;

    this.eventBus = props.eventBus ?? EventBus.fromEventBusName(this, 'DefaultEventBus', 'default');
    if (machines.anyStandard) this.statusSync = this.createStatusSync(settings, machines);

    this.events = new EventsDelivery(this, 'Events', {
      options: props.events,
      operations: this.operations,
      serverKey: this.serverKey,
      participants: serverEventsParticipants(
        this.mcpFunction,
        this.statusSync?.function.function,
        this.workerFunctions,
        [...machines.durable.values()].map((tool) => tool.function),
      ),
      logRetention: settings.logRetention,
      tracing: settings.tracing,
      alarmTopic: props.alarmTopic,
    });

    const monitoring = new OperationsMonitoring(this, {
      mcpFunction: this.mcpFunction,
      ...(this.statusSync ? { statusSync: { function: this.statusSync.function.function, deadLetterQueue: this.statusSync.deadLetterQueue } } : {}),
      workerFunctions: this.workerFunctions,
      table: this.operations.table,
      machines: machines.deployed,
      durableFunctions: machines.durable,
      alarmTopic: props.alarmTopic,
      executionFailureRatePercent: props.executionFailureRatePercent,
      // The webhook delivery dead-letter alarm is the Events construct's own; the dashboard shows it beside the rest.
      ...(this.events.deadLetterAlarm && this.events.deliveryAlarms
        ? { otherAlarms: [this.events.deadLetterAlarm, ...Object.values(this.events.deliveryAlarms)] }
        : {}),
    });
    this.alarms = monitoring.alarms;
    this.dashboard = monitoring.dashboard;
  }

  /**
   * Lets `grantee` call the MCP endpoint of an `iam` server: `lambda:InvokeFunctionUrl` for an
   * `AWS_IAM` URL, and `lambda:InvokeFunction` only with `lambda:InvokedViaFunctionUrl = true`
   * (McpEndpoint.grantInvoke says why).
   */
  public grantInvoke(grantee: IGrantable): Grant {
    return this.endpoint.grantInvoke(grantee);
  }

  /** Status sync, with what it needs beyond its own construct: the results bucket and the server key. */
  private createStatusSync(settings: ServerSettings, machines: ToolMachines): StatusSync {
    const statusSync = new StatusSync(this, 'StatusSync', {
      eventBus: this.eventBus,
      entry: STATUS_SYNC_ENTRY,
      operations: this.operations,
      limitsEnvironment: { ...settings.limitsEnvironment },
      deployedArnPrefix: machines.stateMachineArnPrefix,
      existingStateMachines: machines.existingStandard,
      durableArnPrefix: machines.durableFunctionArnPrefix,
      durableTools: machines.durable.size > 0,
      grantDeployedExecutionControl: (grantee) => machines.grantDeployedExecutionControl(grantee),
      logRetention: settings.logRetention,
      tracing: settings.tracing,
      reservedConcurrentExecutions: settings.statusSync.reservedConcurrency,
      deadLetterRetention: settings.statusSync.deadLetterRetention,
    });
    const fn = statusSync.function.function;
    // Status sync writes terminal results, and spills the large ones.
    fn.addEnvironment(ENV.resultsBucket, this.results.bucket.bucketName);
    this.results.grantWriteResults(fn);
    // Operation events name each owner by an HMAC under the server key (docs/events.md).
    fn.addEnvironment(ENV.secretArn, this.serverKey.secret.secretArn);
    this.serverKey.grantRead(fn);
    return statusSync;
  }
}
