/**
 * The props of AsyncMcpServer: what a deployment may choose, each with its default.
 * resolveServerSettings (server-settings.ts) checks them and fills the defaults in.
 */
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { ToolFolder } from '../lambdas/tools/tool-folder.ts';
import type { EventsOptions } from './events-delivery.ts';
import type { McpAuth } from './mcp-auth.ts';
import type { ServerTracing } from './server-tracing.ts';

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
   * Serve the operation card (an MCP Apps view of a running operation): build it into the MCP
   * Lambda's asset. Off, the asset has no card and `ASYNC_MCP_OPERATION_CARD=0` is set on the
   * MCP Lambda. The app reads it from the `operationCard` context key.
   * @default true
   */
  readonly operationCard?: boolean;
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
   * Tracing: `true` turns X-Ray active tracing on for the Lambdas, the durable functions and
   * the state machines; a `ServerTracing` also has every function export its OpenTelemetry
   * spans, one trace per operation: through the ADOT Lambda layer to X-Ray (`adot-layer`),
   * or OTLP to a collector (`otlp`, no X-Ray). See docs/deploy.md.
   * @default false
   */
  readonly tracing?: boolean | ServerTracing;
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
