/**
 * AsyncMcpServer: the whole async MCP server as one construct (DESIGN §6).
 * The operations table, the MCP Lambda behind a Function URL, one state machine per
 * tool folder (none for a tool naming an existing machine), one Lambda per worker the
 * definitions name, and status sync, wired with least-privilege grants. Who may call is the
 * `auth` prop (mcp-auth.ts); IAM callers are granted with `grantInvoke`.
 */
import { Annotations, Aws, Duration, Names, type NestedStack, RemovalPolicy } from 'aws-cdk-lib';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { EventBus, type IEventBus } from 'aws-cdk-lib/aws-events';
import type { Grant, IGrantable } from 'aws-cdk-lib/aws-iam';
import { type FunctionUrlAuthType, InvokeMode, type FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { ENV } from '../lambdas/aws/operations-table.ts';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { REQUEST_MARGIN_SECONDS, requestTimeoutSeconds } from '../lambdas/operations/operations-limits.ts';
import { MAX_NAME_PREFIX, STATE_MACHINE_ARN_PREFIX_ENV, toolStateMachineName } from '../lambdas/tools/state-machine-names.ts';
import type { ToolFolder } from '../lambdas/tools/tool-folder.ts';
import { buildToolCatalog } from '../lambdas/tools/tool-catalog.ts';
import { REPORT_PROGRESS_WORKER } from '../lambdas/tools/report-progress-states.ts';
import { REQUEST_INPUT_WORKER } from '../lambdas/tools/request-input-states.ts';
import { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { BundledFunction } from './bundled-function.ts';
import { CatalogStacks, DEFAULT_TOOL_STACK_COUNT, DEFAULT_WORKER_STACK_COUNT } from './catalog-stacks.ts';
import { DeployedToolGrants } from './deployed-tool-grants.ts';
import { EventsDelivery, type EventsOptions } from './events-delivery.ts';
import { ResultsBucket } from './results-bucket.ts';
import { ExistingToolStateMachine } from './existing-tool-state-machine.ts';
import { mcpCorsOptions, resolveMcpAuth, type McpAuth } from './mcp-auth.ts';
import { POWERTOOLS_ENVIRONMENT } from './observability.ts';
import { OperationsAlarms } from './operations-alarms.ts';
import { OperationsDashboard } from './operations-dashboard.ts';
import { OperationsTable } from './operations-table.ts';
import { DEFAULT_WORKERS_DIR, MCP_HTTP_ENTRY, STATUS_SYNC_ENTRY } from './repo-paths.ts';
import { createWorkerFunctions } from './worker-functions.ts';
import { ServerKey } from './server-key.ts';
import { StatusSync } from './status-sync.ts';
import { BUNDLED_TOOLS_DIR, LAMBDA_TASK_ROOT, copyToolFolderCommands } from './tool-asset-commands.ts';
import { ToolStateMachine } from './tool-state-machine.ts';

/** Lambda's own ceiling. */
const LAMBDA_MAX_TIMEOUT_SECONDS = 900;

export interface AsyncMcpServerProps {
  /**
   * The tool folders, validated: `await loadToolFolders(toolsDir)`. One state machine each,
   * except for tools naming an existing one (`stateMachineArn`); the MCP Lambda's asset
   * carries their `tool.json` and `definition.asl.json`.
   */
  readonly tools: readonly ToolFolder[];
  /**
   * Where the worker modules live (`<dir>/<workerModuleFile(name)>`, exporting `handler`).
   * The built-in workers (`request_input`, `report_progress`) always come from this repository.
   * @default - this repository's `lambdas/handlers/workers`
   */
  readonly workersDir?: string;
  /**
   * Who may call the MCP endpoint:
   * - `{ kind: 'iam', principalScope? }`: SigV4-signed requests; grant callers with `grantInvoke`;
   * - `{ kind: 'oauth', issuer, audience?, requiredScopes?, resourceUrl? }`: an OAuth 2.1 resource
   *   server; the Function URL is `NONE` and the MCP Lambda checks a bearer token on every request;
   * - `{ kind: 'none' }`: anyone with the URL, all as one principal (trials only).
   * @default { kind: 'iam', principalScope: 'role' }
   */
  readonly auth?: McpAuth;
  /**
   * @deprecated use `auth`: `AWS_IAM` is `{ kind: 'iam' }`, `NONE` is `{ kind: 'none' }`.
   * @default FunctionUrlAuthType.AWS_IAM
   */
  readonly functionUrlAuthType?: FunctionUrlAuthType;
  /**
   * Origins browser-based MCP clients may call from (Function URL CORS), or `['*']`. The
   * Function URL answers preflights; `WWW-Authenticate` and `Mcp-Session-Id` are exposed.
   * @default - no CORS: browsers may not call the URL from another origin
   */
  readonly corsAllowedOrigins?: readonly string[];
  /**
   * How long the status-sync dead-letter queue keeps a message. Messages hold whole
   * Step Functions status-change events, tool inputs and outputs included, and are of no use
   * once the operation's record has expired, so by default they live no longer than it can:
   * the longest keepAlive any STANDARD tool grants (the server's `maxKeepAliveSeconds`,
   * lowered by the tools' own maximum), within SQS's bounds of 1 minute to 14 days.
   * @default - the keepAlive bound, at most 14 days
   */
  readonly deadLetterRetention?: Duration;
  /**
   * What happens to the operations table when it leaves the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly tableRemovalPolicy?: RemovalPolicy;
  /**
   * Server-wide bound on a client's keepAlive, in seconds.
   * @default 604800 (7 days)
   */
  readonly maxKeepAliveSeconds?: number;
  /**
   * Whether clients may ask for an unlimited keepAlive.
   * @default false
   */
  readonly allowUnlimitedKeepAlive?: boolean;
  /**
   * Bound on blocking calls (synchronous runs, 2025-11-25 `tasks/result`), in seconds.
   * The MCP Lambda's timeout is this plus a margin, so at most 885.
   * @default 60
   */
  readonly maxBlockingSeconds?: number;
  /**
   * Operations one principal may have active (not yet terminal) at once; the next start
   * gets HTTP 429. Sets `ASYNC_MCP_MAX_ACTIVE_OPERATIONS` on the MCP and status-sync Lambdas.
   * @default 100
   */
  readonly maxActiveOperations?: number;
  /**
   * Serve the handle tools (`operation_status`, `operation_result`, `operation_cancel`,
   * `operation_list`) to clients without async support, so they can call long tools
   * without timing out. Sets `ASYNC_MCP_HANDLE_TOOLS` on the MCP Lambda.
   * @default true
   */
  readonly handleTools?: boolean;
  /**
   * Serve `subscriptions/listen`: 2026-07-28 clients with the Tasks extension hold a stream that
   * carries `notifications/tasks` for the tasks they name. Each open stream keeps an MCP Lambda
   * invocation running (until shortly before its timeout) and reads the subscribed records at a
   * bounded interval. Sets `ASYNC_MCP_LISTEN` on the MCP Lambda.
   * @default true
   */
  readonly listen?: boolean;
  /**
   * Concurrent executions reserved for the MCP Lambda. A reservation also caps it, so
   * blocking calls (synchronous runs, `tasks/result`) cannot take the concurrency the
   * workers and status sync need. Lambda keeps 100 of the account's concurrency
   * unreserved, so all reservations together must leave that much.
   * @default - none: the MCP Lambda shares the account's unreserved concurrency
   */
  readonly mcpReservedConcurrency?: number;
  /**
   * Concurrent executions reserved for the status-sync Lambda, so status changes are
   * written even while the MCP Lambda is busy.
   * @default - none
   */
  readonly statusSyncReservedConcurrency?: number;
  /**
   * Concurrent executions reserved for each worker Lambda.
   * @default - none
   */
  readonly workerReservedConcurrency?: number;
  /**
   * Active X-Ray tracing for the Lambdas and the state machines.
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * Notified (SNS) when any of the server's alarms goes to ALARM and back to OK.
   * @default - the alarms have no actions: they show in CloudWatch only
   */
  readonly alarmTopic?: ITopic;
  /**
   * The share of a tool's executions that may fail or time out in 15 minutes, in percent,
   * before its alarm fires.
   * @default 10
   */
  readonly executionFailureRatePercent?: number;
  /**
   * Retention of every log group (Lambdas and state machines).
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Memory of each worker Lambda, in MB.
   * @default 512
   */
  readonly workerMemorySize?: number;
  /**
   * Timeout of each worker Lambda; keep it at or above the Task states' TimeoutSeconds.
   * @default Duration.minutes(1)
   */
  readonly workerTimeout?: Duration;
  /**
   * Nested stacks the tools' state machines spread over, each tool in the one its name
   * hashes to (with its role, log group and failure-rate alarm), so a catalog outgrows no
   * stack's 500 resources or 1 MB template. The synth fails when one would hold more than 400
   * resources or 600 KB of definitions. Changing it moves tools between stacks, which
   * CloudFormation cannot do in one deploy (a state machine's name is taken until its old
   * stack deletes it): drain and remove the tools that move first, or deploy a new stack.
   * @default 8
   */
  readonly toolStackCount?: number;
  /**
   * Nested stacks the worker Lambdas spread over, by the same rule.
   * @default 4
   */
  readonly workerStackCount?: number;
  /**
   * The EventBridge bus status sync puts `Operation Status Changed` events on (source
   * `async-mcp`; schemas/operation-status-changed.schema.json), for rules of your own: a
   * message when a job ends, the next step of a pipeline. The status-sync role may put on
   * this bus only. A stack with EXPRESS tools only has no status sync, and so no events.
   * @default - the account's default bus
   */
  readonly eventBus?: IEventBus;
  /**
   * The MCP Events extension (SEP-3415): on or off, how long the event log keeps occurrences,
   * the longest webhook subscription TTL, and how many webhook delivery batches run at once
   * (events-delivery.ts).
   * @default - on, 24 hours, 1 hour, 10
   */
  readonly events?: EventsOptions;
}

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
  /** Worker name -> its Lambda (in a nested stack of the workers); grant a worker more here if its code needs it. */
  public readonly workerFunctions: ReadonlyMap<string, NodejsFunction>;
  /** The nested stacks holding the tools' state machines and the workers. */
  public readonly catalogStacks: { readonly tools: readonly NestedStack[]; readonly workers: readonly NestedStack[] };
  /** Absent when every tool is EXPRESS (Step Functions emits no status events for those). */
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

  constructor(scope: Construct, id: string, props: AsyncMcpServerProps) {
    super(scope, id);
    if (props.tools.length === 0) throw new Error('AsyncMcpServer needs at least one tool folder');
    const tracing = props.tracing ?? false;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    const maxBlockingSeconds = props.maxBlockingSeconds ?? 60;
    // The request's own deadline and the function's timeout come from one bound (operations-limits.ts).
    const maxTimeout = LAMBDA_MAX_TIMEOUT_SECONDS - REQUEST_MARGIN_SECONDS;
    if (!Number.isInteger(maxBlockingSeconds) || maxBlockingSeconds < 1 || maxBlockingSeconds > maxTimeout) {
      throw new Error(`maxBlockingSeconds must be a whole number from 1 to ${maxTimeout}, got ${maxBlockingSeconds}`);
    }
    const maxKeepAliveSeconds = positiveWholeNumber('maxKeepAliveSeconds', props.maxKeepAliveSeconds ?? 7 * 24 * 3600);
    const maxActiveOperations = positiveWholeNumber('maxActiveOperations', props.maxActiveOperations ?? DEFAULT_LIMITS.maxActiveOperations);
    const reserved = {
      mcp: optionalPositiveWholeNumber('mcpReservedConcurrency', props.mcpReservedConcurrency),
      statusSync: optionalPositiveWholeNumber('statusSyncReservedConcurrency', props.statusSyncReservedConcurrency),
      worker: optionalPositiveWholeNumber('workerReservedConcurrency', props.workerReservedConcurrency),
    };

    this.operations = new OperationsTable(this, 'Operations', {
      removalPolicy: props.tableRemovalPolicy ?? RemovalPolicy.RETAIN,
    });

    // An object is needed while its operation can be read: the longest run, then the longest keepAlive.
    const longestRun = Math.max(...buildToolCatalog(props.tools, () => '').tools.map((tool) => tool.timing.maxRunSeconds));
    this.results = new ResultsBucket(this, 'Results', {
      maxLifetimeSeconds: props.allowUnlimitedKeepAlive ? undefined : longestRun + maxKeepAliveSeconds,
      // Spilled at completion, so read only for the keepAlive that follows.
      spilledLifetimeSeconds: props.allowUnlimitedKeepAlive ? undefined : maxKeepAliveSeconds,
    });

    this.serverKey = new ServerKey(this, 'ServerKey');
    const workerStacks = new CatalogStacks(this, 'Workers', {
      count: props.workerStackCount ?? DEFAULT_WORKER_STACK_COUNT,
      holds: 'worker Lambdas',
      countProp: 'workerStackCount',
    });
    this.workerFunctions = createWorkerFunctions({
      tools: props.tools,
      workersDir: props.workersDir ?? DEFAULT_WORKERS_DIR,
      stacks: workerStacks,
      operations: this.operations,
      results: this.results,
      memorySize: props.workerMemorySize ?? 512,
      timeout: props.workerTimeout ?? Duration.minutes(1),
      logRetention,
      tracing,
      reservedConcurrentExecutions: reserved.worker,
    });

    // Unique per stack and construct path, and known at synth, so the MCP Lambda derives
    // every ARN from one prefix instead of a per-tool list in its 4 KB environment.
    this.stateMachineNamePrefix = `${Names.uniqueResourceName(this, { maxLength: MAX_NAME_PREFIX - 1, separator: '-' })}-`;
    const toolsScope = new Construct(this, 'Tools');
    const toolStacks = new CatalogStacks(this, 'Tools', {
      count: props.toolStackCount ?? DEFAULT_TOOL_STACK_COUNT,
      holds: 'tool state machines',
      countProp: 'toolStackCount',
    });
    const machines = new Map<string, ToolStateMachine>();
    const existing = new Map<string, ExistingToolStateMachine>();
    for (const tool of props.tools) {
      const name = tool.config.name;
      if (tool.config.stateMachineArn) {
        existing.set(name, new ExistingToolStateMachine(toolsScope, name, tool));
        continue;
      }
      const stateMachineName = toolStateMachineName(this.stateMachineNamePrefix, name);
      const stack = toolStacks.stackFor(name);
      toolStacks.addDefinitionBytes(stack, Buffer.byteLength(tool.definitionText ?? ''));
      machines.set(name, new ToolStateMachine(stack, name, { tool, stateMachineName, workers: this.workerFunctions, logRetention, tracing }));
    }
    this.toolStateMachines = machines;
    this.existingStateMachines = existing;
    this.catalogStacks = { tools: toolStacks.all(), workers: workerStacks.all() };
    const deployed = [...machines.values()];
    const existingStandard = [...existing.values()].filter((machine) => machine.workflowType === 'STANDARD');
    const anyStandard = existingStandard.length > 0 || deployed.some((machine) => machine.workflowType === 'STANDARD');
    const deployedGrants = new DeployedToolGrants(this.stateMachineNamePrefix);
    const stateMachineArnPrefix = `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:stateMachine:${this.stateMachineNamePrefix}`;

    // Status sync computes expiry too, so both Lambdas get the same limits.
    const limitsEnvironment = {
      [ENV.maxKeepAliveSeconds]: String(maxKeepAliveSeconds),
      [ENV.allowUnlimitedKeepAlive]: String(props.allowUnlimitedKeepAlive ?? false),
      [ENV.maxBlockingSeconds]: String(maxBlockingSeconds),
      [ENV.maxActiveOperations]: String(maxActiveOperations),
    };
    const access = resolveMcpAuth(props.auth, props.functionUrlAuthType, this);
    this.auth = access.auth;
    const tools = props.tools;
    const mcp = new BundledFunction(this, 'Mcp', {
      entry: MCP_HTTP_ENTRY,
      description: 'async-mcp MCP server (Function URL)',
      memorySize: 1024,
      timeout: Duration.seconds(requestTimeoutSeconds(maxBlockingSeconds)),
      environment: {
        [ENV.tableName]: this.operations.tableName,
        [STATE_MACHINE_ARN_PREFIX_ENV]: stateMachineArnPrefix,
        [ENV.toolsDir]: `${LAMBDA_TASK_ROOT}/${BUNDLED_TOOLS_DIR}`,
        [ENV.resultsBucket]: this.results.bucket.bucketName,
        [ENV.secretArn]: this.serverKey.secret.secretArn,
        ...limitsEnvironment,
        [ENV.handleTools]: props.handleTools === false ? '0' : '1',
        [ENV.listen]: props.listen === false ? '0' : '1',
        ...access.environment,
      },
      logRetention,
      tracing,
      reservedConcurrentExecutions: reserved.mcp,
      afterBundling: (outputDir) => copyToolFolderCommands(tools, outputDir),
    });
    this.mcpFunction = mcp.function;

    this.operations.grantRecordAccess(this.mcpFunction);
    // It serves resources/read, and spills a large output when a status read settles an operation.
    this.results.grantReadResults(this.mcpFunction);
    this.results.grantWriteResults(this.mcpFunction);
    this.serverKey.grantRead(this.mcpFunction);
    // The deployed machines by their name prefix: one statement for any number of tools.
    deployedGrants.grantStart(this.mcpFunction, new Set(deployed.map((machine) => machine.workflowType)));
    if (deployed.some((machine) => machine.workflowType === 'STANDARD')) deployedGrants.grantExecutionControl(this.mcpFunction);
    // An answer resumes the state that asked; only a deployed definition can call the request-input worker.
    if (deployed.some((machine) => machine.asksForInput)) deployedGrants.grantTaskResponse(this.mcpFunction);
    for (const machine of existing.values()) machine.grantStart(this.mcpFunction);
    for (const machine of existingStandard) machine.grantExecutionControl(this.mcpFunction);

    // Streaming, not BUFFERED: a server-to-client request or a progress notification written to an
    // SSE stream must reach the client while the call waits, not when the response ends.
    this.functionUrl = this.mcpFunction.addFunctionUrl({
      authType: access.urlAuthType,
      invokeMode: InvokeMode.RESPONSE_STREAM,
      ...(props.corsAllowedOrigins ? { cors: mcpCorsOptions(props.corsAllowedOrigins, props.tools) } : {}),
    });
    if (this.auth.kind === 'none') {
      Annotations.of(this).addWarningV2(
        'async-mcp:function-url-auth-none',
        "The MCP Function URL has auth type NONE and no OAuth: anyone who learns the URL can call every tool. Use it for trials only; the default is auth { kind: 'iam' }.",
      );
    }

    this.eventBus = props.eventBus ?? EventBus.fromEventBusName(this, 'DefaultEventBus', 'default');
    if (anyStandard) {
      this.statusSync = new StatusSync(this, 'StatusSync', {
        eventBus: this.eventBus,
        entry: STATUS_SYNC_ENTRY,
        operations: this.operations,
        limitsEnvironment,
        deployedArnPrefix: stateMachineArnPrefix,
        existingStateMachines: existingStandard,
        grantDeployedExecutionControl: (grantee) => deployedGrants.grantExecutionControl(grantee),
        logRetention,
        tracing,
        reservedConcurrentExecutions: reserved.statusSync,
        deadLetterRetention: props.deadLetterRetention ?? keepAliveBound(props, maxKeepAliveSeconds),
      });
      // Status sync writes terminal results, and spills the large ones.
      this.statusSync.function.function.addEnvironment(ENV.resultsBucket, this.results.bucket.bucketName);
      this.results.grantWriteResults(this.statusSync.function.function);
      // Operation events name each owner by an HMAC under the server key (docs/events.md).
      this.statusSync.function.function.addEnvironment(ENV.secretArn, this.serverKey.secret.secretArn);
      this.serverKey.grantRead(this.statusSync.function.function);
    }

    const progressWorker = this.workerFunctions.get(REPORT_PROGRESS_WORKER);
    const inputWorker = this.workerFunctions.get(REQUEST_INPUT_WORKER);
    this.events = new EventsDelivery(this, 'Events', {
      options: props.events,
      operations: this.operations,
      serverKey: this.serverKey,
      // Status writes append occurrences and enqueue their deliveries (status sync, report_progress); subscribe enqueues too.
      participants: [
        { function: this.mcpFunction, enqueues: true },
        ...(this.statusSync ? [{ function: this.statusSync.function.function, appendsEvents: true, listsSubscriptions: true, enqueues: true }] : []),
        ...(progressWorker ? [{ function: progressWorker, appendsEvents: true, listsSubscriptions: true, enqueues: true }] : []),
        // A question asked is an `operation.input_required` occurrence.
        ...(inputWorker ? [{ function: inputWorker, appendsEvents: true, listsSubscriptions: true, enqueues: true }] : []),
      ],
      logRetention,
      tracing,
      alarmTopic: props.alarmTopic,
    });

    const monitored = {
      mcpFunction: this.mcpFunction,
      ...(this.statusSync ? { statusSync: { function: this.statusSync.function.function, deadLetterQueue: this.statusSync.deadLetterQueue } } : {}),
      workerFunctions: this.workerFunctions,
      table: this.operations.table,
      stateMachines: new Map([...machines].map(([tool, machine]) => [tool, machine.stateMachine])),
    };
    // The names the logs and metrics carry, which the dashboard searches for.
    for (const fn of [monitored.mcpFunction, monitored.statusSync?.function, ...monitored.workerFunctions.values()]) {
      for (const [name, value] of Object.entries(POWERTOOLS_ENVIRONMENT)) fn?.addEnvironment(name, value);
    }
    this.alarms = new OperationsAlarms(this, 'Alarms', {
      ...monitored,
      alarmTopic: props.alarmTopic,
      executionFailureRatePercent: props.executionFailureRatePercent,
    });
    // The dashboard names each machine by its ARN, built from its name here: no output per machine from the nested stacks.
    const dashboardScope = new Construct(this, 'DashboardMachines');
    const namedMachines = new Map(
      [...machines].map(([tool, machine]) => [
        tool,
        StateMachine.fromStateMachineName(dashboardScope, tool, machine.stateMachineName),
      ]),
    );
    // The webhook delivery dead-letter alarm is the Events construct's own; the dashboard shows it beside the rest.
    const alarms = this.events.deadLetterAlarm ? [...this.alarms.all, this.events.deadLetterAlarm] : this.alarms.all;
    this.dashboard = new OperationsDashboard(this, 'Dashboard', { ...monitored, stateMachines: namedMachines, alarms }).dashboard;
  }

  /**
   * Lets `grantee` call the MCP endpoint of an `iam` server: `lambda:InvokeFunctionUrl` for an
   * `AWS_IAM` URL, and `lambda:InvokeFunction` only with `lambda:InvokedViaFunctionUrl = true`.
   * Plain `lambda:InvokeFunction` would let the grantee invoke the function directly with a
   * hand-made event naming any caller, and so act as anyone. A grantee in another account gets
   * both statements in the function's resource policy; it still needs its own identity policy.
   */
  public grantInvoke(grantee: IGrantable): Grant {
    if (this.auth.kind !== 'iam') {
      throw new Error(`grantInvoke is for an IAM-authenticated server; this one has auth kind '${this.auth.kind}', whose callers need no IAM grant`);
    }
    return this.mcpFunction.grantInvokeUrl(grantee);
  }
}

/** SQS's bounds on a queue's message retention. */
const SQS_RETENTION = { min: Duration.minutes(1), max: Duration.days(14) };

/**
 * The longest a record of a STANDARD tool can outlive its run (OperationsService.grantKeepAlive),
 * within SQS's bounds: unlimited when the server allows it and a tool sets no maximum.
 */
function keepAliveBound(props: AsyncMcpServerProps, serverMax: number): Duration {
  const standard = buildToolCatalog(props.tools, () => '').tools.filter((tool) => tool.workflowType === 'STANDARD');
  const bounds = standard.map(({ timing: { maxKeepAliveSeconds: toolMax } }) =>
    toolMax === null ? (props.allowUnlimitedKeepAlive ? Infinity : serverMax) : Math.min(toolMax, serverMax),
  );
  const seconds = Math.max(...bounds);
  return Duration.seconds(Math.min(Math.max(seconds, SQS_RETENTION.min.toSeconds()), SQS_RETENTION.max.toSeconds()));
}

function positiveWholeNumber(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number, got ${value}`);
  return value;
}

function optionalPositiveWholeNumber(name: string, value: number | undefined): number | undefined {
  return value === undefined ? undefined : positiveWholeNumber(name, value);
}
