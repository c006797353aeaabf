/**
 * AsyncMcpServer's props checked and their defaults filled in, before any resource is made:
 * a bad value fails the synth naming the prop. What the parts of the server read
 * (tool-machines.ts, mcp-endpoint.ts, status sync) comes from here.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ENV } from '../lambdas/handlers/environment.ts';
import { DEFAULT_LIMITS, REQUEST_MARGIN_SECONDS } from '../lambdas/operations/operations-limits.ts';
import { buildToolCatalog } from '../lambdas/tools/tool-catalog.ts';
import type { ToolFolder } from '../lambdas/tools/tool-folder.ts';
import type { AsyncMcpServerProps } from './async-mcp-server-props.ts';
import { DEFAULT_TOOL_STACK_COUNT, DEFAULT_WORKER_STACK_COUNT } from './catalog-stacks.ts';
import { DEFAULT_WORKERS_DIR } from './repo-paths.ts';
import { type FunctionTracing, resolveServerTracing } from './server-tracing.ts';

/** Lambda's own ceiling. */
const LAMBDA_MAX_TIMEOUT_SECONDS = 900;

/** SQS's bounds on a queue's message retention. */
const SQS_RETENTION = { min: Duration.minutes(1), max: Duration.days(14) };

export interface ServerSettings {
  readonly tools: readonly ToolFolder[];
  readonly tracing: FunctionTracing;
  readonly logRetention: RetentionDays;
  readonly tableRemovalPolicy: RemovalPolicy;
  /** How long result objects may be needed (results-bucket.ts); `undefined` with unlimited keepAlive. */
  readonly resultLifetimes: { readonly maxLifetimeSeconds: number | undefined; readonly spilledLifetimeSeconds: number | undefined };
  readonly maxBlockingSeconds: number;
  /** The limits both the MCP and the status-sync Lambda read: status sync computes expiry too. */
  readonly limitsEnvironment: Readonly<Record<string, string>>;
  readonly toolStackCount: number;
  readonly workers: {
    readonly dir: string;
    readonly memorySize: number;
    readonly timeout: Duration;
    readonly reservedConcurrency: number | undefined;
    readonly stackCount: number;
  };
  readonly mcp: {
    readonly reservedConcurrency: number | undefined;
    readonly handleTools: boolean;
    readonly listen: boolean;
    readonly operationCard: boolean;
  };
  readonly statusSync: {
    readonly reservedConcurrency: number | undefined;
    /** Checked against SQS's bounds by status-sync.ts. */
    readonly deadLetterRetention: Duration;
  };
}

/**
 * The settings `props` describe; throws naming the first prop out of bounds. `region` is the
 * stack's, to check a tracing layer's.
 */
export function resolveServerSettings(props: AsyncMcpServerProps, region?: string): ServerSettings {
  if (props.tools.length === 0) throw new Error('AsyncMcpServer needs at least one tool folder');
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
  const unlimited = props.allowUnlimitedKeepAlive ?? false;
  // An object is needed while its operation can be read: the longest run, then the longest keepAlive.
  const longestRun = Math.max(...buildToolCatalog(props.tools, () => '').tools.map((tool) => tool.timing.maxRunSeconds));
  return {
    tools: props.tools,
    tracing: resolveServerTracing(props.tracing, region),
    logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
    tableRemovalPolicy: props.tableRemovalPolicy ?? RemovalPolicy.RETAIN,
    resultLifetimes: {
      maxLifetimeSeconds: unlimited ? undefined : longestRun + maxKeepAliveSeconds,
      // Spilled at completion, so read only for the keepAlive that follows.
      spilledLifetimeSeconds: unlimited ? undefined : maxKeepAliveSeconds,
    },
    maxBlockingSeconds,
    limitsEnvironment: {
      [ENV.maxKeepAliveSeconds]: String(maxKeepAliveSeconds),
      [ENV.allowUnlimitedKeepAlive]: String(unlimited),
      [ENV.maxBlockingSeconds]: String(maxBlockingSeconds),
      [ENV.maxActiveOperations]: String(maxActiveOperations),
    },
    toolStackCount: props.toolStackCount ?? DEFAULT_TOOL_STACK_COUNT,
    workers: {
      dir: props.workersDir ?? DEFAULT_WORKERS_DIR,
      memorySize: props.workerMemorySize ?? 512,
      timeout: props.workerTimeout ?? Duration.minutes(1),
      reservedConcurrency: reserved.worker,
      stackCount: props.workerStackCount ?? DEFAULT_WORKER_STACK_COUNT,
    },
    mcp: {
      reservedConcurrency: reserved.mcp,
      handleTools: props.handleTools ?? true,
      listen: props.listen ?? true,
      operationCard: props.operationCard ?? true,
    },
    statusSync: {
      reservedConcurrency: reserved.statusSync,
      deadLetterRetention: props.deadLetterRetention ?? keepAliveBound(props.tools, maxKeepAliveSeconds, unlimited),
    },
  };
}

/**
 * The longest a record of a STANDARD tool can outlive its run (OperationsService.grantKeepAlive),
 * within SQS's bounds: unlimited when the server allows it and a tool sets no maximum.
 */
function keepAliveBound(tools: readonly ToolFolder[], serverMax: number, unlimited: boolean): Duration {
  const standard = buildToolCatalog(tools, () => '').tools.filter((tool) => tool.workflowType === 'STANDARD');
  const bounds = standard.map(({ timing: { maxKeepAliveSeconds: toolMax } }) =>
    toolMax === null ? (unlimited ? Infinity : serverMax) : Math.min(toolMax, serverMax),
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
