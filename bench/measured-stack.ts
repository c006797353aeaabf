/**
 * The local stack in this process, instrumented for the call and cost figures: every AWS
 * call of the server's own SDK clients is counted by who made it (an MCP request, status
 * sync, or anything else: the workers the Step Functions facade runs), DynamoDB request
 * units are metered, and the MCP handler and status-sync handler are timed per invocation.
 * Who made a call is told by the async context it was sent from.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { countAwsCalls, type AwsCallCounter, type AwsCallCounts } from '../lambdas/aws/aws-call-counter.ts';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { startLocalStack, type LocalStack } from '../local/local-stack.ts';
import { meterConsumedCapacity, type CapacityMeter, type RequestUnits } from './consumed-capacity.ts';

/** Who a call is made for: a timed MCP request, status sync, or a request made only to wait (not counted). */
type Scope = 'request' | 'status-sync' | 'waiting';

/** How late a status event reaches status sync. */
const EVENT_DELIVERY_MS = 300;

/** Calls the local stand-ins make for themselves (the local key-size check reads the table's schema once). */
const LOCAL_ONLY = new Set(['DescribeTable']);

/** What one measured span cost. */
export interface Measured {
  /** AWS calls made by MCP requests, by command. */
  request: AwsCallCounts;
  /** AWS calls made by status sync, by command. */
  statusSync: AwsCallCounts;
  /** AWS calls made by anything else (workers), by command. */
  background: AwsCallCounts;
  /** DynamoDB request units of every call above. */
  units: RequestUnits;
  /** The same units, by who made the calls. */
  unitsBy: Record<'request' | 'statusSync' | 'background', RequestUnits>;
  /** Each MCP request's handler time, ms. */
  requestMs: number[];
  /** Each status-sync invocation's handler time, ms. */
  statusSyncMs: number[];
}

export interface MeasuredStack {
  stack: LocalStack;
  /** Runs `work` and returns what it cost, once every status event it caused has been applied. */
  measure(work: () => Promise<unknown>): Promise<Measured>;
  /** Runs `work` uncounted and untimed (polling until something is done). */
  waiting<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The measured server's blocking bound: a handle tool's call hands off a run that lasts longer. */
export const HANDLE_TOOLS_BOUND_SECONDS = 1;

/**
 * Starts the stack on the repository's tools with the instruments installed. `estimateIndexReads`
 * meters each owner-index Query as DynamoDB bills it (dynalite reports none: consumed-capacity.ts).
 */
export async function startMeasuredStack(options: { estimateIndexReads?: boolean } = {}): Promise<MeasuredStack> {
  const stack = await startLocalStack({
    toolsDir: 'state-machines',
    port: 0,
    // Handle tools too, so their calls can be counted; other clients never see them.
    handleTools: true,
    // A blocking bound of 1 s, so a handle tool's call of a run that waits longer hands off and is
    // polled, as a plain client's long call is (the async dialects never block on their runs).
    limits: { ...DEFAULT_LIMITS, maxActiveOperations: 100, maxBlockingSeconds: HANDLE_TOOLS_BOUND_SECONDS },
    // No TTL sweeps in the counts: they stand in for DynamoDB's own TTL.
    ttl: { intervalMs: 3_600_000 },
  });
  const scope = new AsyncLocalStorage<Scope>();
  const counter = (wanted: Scope | undefined) => countAwsCalls(stack.awsClients.dynamodb, { when: () => scope.getStore() === wanted });
  const sfnCounter = (wanted: Scope | undefined) => countAwsCalls(stack.awsClients.sfn, { when: () => scope.getStore() === wanted });
  const counters: Record<'request' | 'statusSync' | 'background', AwsCallCounter[]> = {
    request: [counter('request'), sfnCounter('request')],
    statusSync: [counter('status-sync'), sfnCounter('status-sync')],
    background: [counter(undefined), sfnCounter(undefined)],
  };
  const estimateIndexReads = options.estimateIndexReads ?? false;
  const meter: CapacityMeter = meterConsumedCapacity(stack.awsClients.dynamodb, { when: () => scope.getStore() !== 'waiting', estimateIndexReads });
  const scopedMeter = (wanted: Scope | undefined) =>
    meterConsumedCapacity(stack.awsClients.dynamodb, { when: () => scope.getStore() === wanted, estimateIndexReads });
  const meters = { request: scopedMeter('request'), statusSync: scopedMeter('status-sync'), background: scopedMeter(undefined) };
  let requestMs: number[] = [];
  let statusSyncMs: number[] = [];

  // The handler time of a request lasts until its body is complete, as a streamed Lambda response does.
  // A request does not carry the client's async context across HTTP; the bench runs one thing at a time, so a flag does.
  let waiting = 0;
  const fetch = stack.app.fetch;
  stack.app.fetch = async (request, principal) => {
    if (waiting > 0) return scope.run('waiting', () => fetch(request, principal));
    return scope.run('request', async () => {
      const started = performance.now();
      const response = await fetch(request, principal);
      const body = await response.arrayBuffer();
      requestMs.push(performance.now() - started);
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    });
  };
  // Events reach status sync a moment after the request that caused them answered, as
  // EventBridge's delivery latency has them do in AWS (so a cancel is not raced by its own ABORTED event).
  const statusSync = stack.app.statusSync;
  stack.app.statusSync = async (event) => {
    await sleep(EVENT_DELIVERY_MS);
    return scope.run('status-sync', async () => {
      const started = performance.now();
      try {
        return await statusSync(event);
      } finally {
        statusSyncMs.push(performance.now() - started);
      }
    });
  };

  const merged = (list: AwsCallCounter[]): AwsCallCounts => {
    const out: Record<string, number> = {};
    for (const c of list) for (const [name, n] of Object.entries(c.snapshot())) if (!LOCAL_ONLY.has(name)) out[name] = n;
    return out;
  };
  const reset = () => {
    for (const c of Object.values(counters).flat()) c.reset();
    meter.reset();
    for (const m of Object.values(meters)) m.reset();
    requestMs = [];
    statusSyncMs = [];
  };

  return {
    stack,
    measure: async (work) => {
      await stack.drainEvents();
      reset();
      await work();
      await stack.drainEvents();
      return {
        request: merged(counters.request),
        statusSync: merged(counters.statusSync),
        background: merged(counters.background),
        units: meter.units(),
        unitsBy: { request: meters.request.units(), statusSync: meters.statusSync.units(), background: meters.background.units() },
        requestMs,
        statusSyncMs,
      };
    },
    waiting: async (work) => {
      waiting++;
      try {
        return await work();
      } finally {
        waiting--;
      }
    },
    close: () => stack.close(),
  };
}

/** "GetItem 1, StartExecution 1", in a stable order: DynamoDB, then Step Functions, then the rest. */
export function formatCalls(counts: AwsCallCounts): string {
  const order = [
    'PutItem',
    'UpdateItem',
    'DeleteItem',
    'GetItem',
    'Query',
    'StartExecution',
    'StartSyncExecution',
    'DescribeExecution',
    'StopExecution',
    'SendTaskSuccess',
  ];
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  const entries = Object.entries(counts).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
  return entries.length ? entries.map(([name, n]) => `${name} ${n}`).join(', ') : 'none';
}
