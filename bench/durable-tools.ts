/**
 * A durable tool beside a state machine tool doing the same work (bench/fixtures/durable-twins:
 * a step, a wait, a step), on one local stack: the AWS calls of each MCP request and of status
 * sync, the durable function's own checkpoint calls apart (AWS bills their work as durable
 * operations), the cost per 1,000 operations in AWS, and start-to-first-poll latency.
 *
 * The server's DynamoDB, Step Functions and Lambda clients are counted by the call counter
 * (lambdas/aws/aws-call-counter.ts), told apart by the async context a call is sent from, as
 * bench/measured-stack.ts does. The durable handlers checkpoint through a client the local
 * durable service makes for them, out of the stack's reach: bench/durable-checkpoint-tally.ts
 * counts those calls, and the invocations, by wrapping the SDK's client.
 *
 * The cost is bench/durable-tool-cost.ts's, with the prices it quotes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { GetDurableExecutionCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetExecutionHistoryCommand, ListExecutionsCommand, ListStateMachinesCommand, SFNClient, type HistoryEvent } from '@aws-sdk/client-sfn';
import { countAwsCalls, diffCounts, type AwsCallCounter, type AwsCallCounts } from '../lambdas/aws/aws-call-counter.ts';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { startLocalStack, type LocalStack } from '../local/local-stack.ts';
import type { RawResponse } from '../test/support/raw-mcp.ts';
import { dialects, type DialectSteps } from './aws-calls.ts';
import { type CheckpointTally, tallyDurableCheckpoints } from './durable-checkpoint-tally.ts';
import { meterConsumedCapacity, type RequestUnits } from './consumed-capacity.ts';
import { lambdaMemorySizes } from './deployed-defaults.ts';
import { durableCost, machineCost, OPERATIONS, printCost } from './durable-tool-cost.ts';
import { formatCalls } from './measured-stack.ts';

const FIXTURES = new URL('./fixtures/durable-twins/', import.meta.url);
const DURABLE_TOOL = 'two_steps_durable';
const MACHINE_TOOL = 'two_steps_machine';
const ARGUMENTS = { n: 7, waitSeconds: 1 };
/** The dialect measured: its start, poll and result are three requests. */
const DIALECT = 'tasks 2025-11-25';
const POLL_EVERY_MS = 250;
/** How late a status event reaches status sync, as in bench/measured-stack.ts. */
const EVENT_DELIVERY_MS = 300;

/** Who a call is made for: an MCP request or status sync (anything else is the background). */
type Scope = 'request' | 'status-sync';

/** One MCP request or status-sync invocation and the AWS calls it made. */
interface Invocation {
  label: string;
  calls: AwsCallCounts;
  ms: number;
}

/** One measured run of a tool: start, polls until done, the result, and status sync for its events. */
interface MeasuredRun {
  tool: string;
  requests: Invocation[];
  statusSync: Invocation[];
  /** Calls by anything else: the state machine's workers, the durable handler's own DynamoDB or Lambda calls. */
  background: AwsCallCounts;
  checkpoints: CheckpointTally;
  units: RequestUnits;
}

interface TwinStack {
  stack: LocalStack;
  measure(tool: string, steps: DialectSteps): Promise<MeasuredRun>;
  close(): Promise<void>;
}

/** The stack on the twins, its clients counted and its handlers timed. */
async function startTwinStack(): Promise<TwinStack> {
  const tally = tallyDurableCheckpoints();
  const stack = await startLocalStack({
    toolsDir: fileURLToPath(FIXTURES),
    port: 0,
    limits: { ...DEFAULT_LIMITS, maxActiveOperations: 200 },
    ttl: { intervalMs: 3_600_000 },
  }).catch((error: unknown) => {
    tally.restore();
    throw error;
  });
  const { lambda } = stack.awsClients;
  if (!lambda) {
    await stack.close();
    tally.restore();
    throw new Error(`bench: ${DURABLE_TOOL} did not start the local durable service`);
  }
  const scope = new AsyncLocalStorage<Scope>();
  const clients = [stack.awsClients.dynamodb, stack.awsClients.sfn, lambda];
  const countersFor = (wanted: Scope | undefined) => clients.map((client) => countAwsCalls(client, { when: () => scope.getStore() === wanted }));
  const counters = { request: countersFor('request'), statusSync: countersFor('status-sync'), background: countersFor(undefined) };
  const meter = meterConsumedCapacity(stack.awsClients.dynamodb);
  let requests: Invocation[] = [];
  let statusSync: Invocation[] = [];

  // One thing at a time: each request's calls are what its counters gained while it ran.
  const fetch = stack.app.fetch;
  stack.app.fetch = (request, principal) =>
    scope.run('request', async () => {
      const before = merged(counters.request);
      const label = await methodOf(request);
      const started = performance.now();
      const response = await fetch(request, principal);
      const body = await response.arrayBuffer();
      requests.push({ label, calls: diffCounts(merged(counters.request), before), ms: performance.now() - started });
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    });
  const sync = stack.app.statusSync;
  stack.app.statusSync = async (event) => {
    await sleep(EVENT_DELIVERY_MS);
    return scope.run('status-sync', async () => {
      const before = merged(counters.statusSync);
      const started = performance.now();
      try {
        return await sync(event);
      } finally {
        const status = (event as { detail?: { status?: string } }).detail?.status ?? 'event';
        statusSync.push({ label: `sync ${status}`, calls: diffCounts(merged(counters.statusSync), before), ms: performance.now() - started });
      }
    });
  };

  return {
    stack,
    measure: async (tool, steps) => {
      await stack.drainEvents();
      for (const counter of Object.values(counters).flat()) counter.reset();
      meter.reset();
      tally.reset();
      requests = [];
      statusSync = [];
      const id = await steps.start({ name: tool, arguments: ARGUMENTS });
      while (!steps.isDone(await steps.poll(id))) await sleep(POLL_EVERY_MS);
      if (steps.result) need(await steps.result(id));
      await stack.drainEvents();
      return { tool, requests, statusSync, background: merged(counters.background), checkpoints: tally.current(), units: meter.units() };
    },
    close: async () => {
      try {
        await stack.close();
      } finally {
        tally.restore();
      }
    },
  };
}

function merged(counters: readonly AwsCallCounter[]): AwsCallCounts {
  const out: Record<string, number> = {};
  // The local key-size check reads the table's schema once; AWS has no such call.
  for (const counter of counters) for (const [name, n] of Object.entries(counter.snapshot())) if (name !== 'DescribeTable') out[name] = (out[name] ?? 0) + n;
  return out;
}

async function methodOf(request: Request): Promise<string> {
  const body = (await request
    .clone()
    .json()
    .catch(() => undefined)) as { method?: unknown } | undefined;
  return typeof body?.method === 'string' ? body.method : request.method;
}

/** The result of a response that must have one. */
function need(response: RawResponse): void {
  if (!response.message?.result) throw new Error(`bench: expected a result, got HTTP ${response.status}: ${response.text.slice(0, 300)}`);
}

/** Prints the calls of one run, request by request, then status sync, the background and the checkpoints. */
function printCalls(run: MeasuredRun): void {
  const row = (label: string, calls: AwsCallCounts, note = '') =>
    console.log(`  ${run.tool.padEnd(18)} ${label.padEnd(22)} ${formatCalls(calls).padEnd(60)} ${note}`);
  const [start, ...rest] = run.requests;
  const result = run.requests.at(-1);
  const polls = rest.slice(0, -1);
  if (start) row(`start (${start.label})`, start.calls);
  // Polls of one run make the same calls unless something changed: print each distinct set once.
  const distinct = new Map<string, number>();
  for (const poll of polls) distinct.set(formatCalls(poll.calls), (distinct.get(formatCalls(poll.calls)) ?? 0) + 1);
  for (const [calls, times] of distinct) console.log(`  ${run.tool.padEnd(18)} ${`poll x${times}`.padEnd(22)} ${calls}`);
  if (result && result !== start) row(`result (${result.label})`, result.calls);
  for (const sync of run.statusSync) row(sync.label, sync.calls, 'off the request path');
  row('workers/handler', run.background, 'off the request path');
  if (run.checkpoints.callsByInvocation.size > 0) {
    const calls: Record<string, number> = {};
    for (const { calls: each } of run.checkpoints.callsByInvocation.values())
      for (const [name, n] of Object.entries(each)) calls[name] = (calls[name] ?? 0) + n;
    const types: Record<string, number> = {};
    for (const type of run.checkpoints.operations.values()) types[type] = (types[type] ?? 0) + 1;
    row(
      'checkpoints*',
      calls,
      `${run.checkpoints.callsByInvocation.size} invocations; ${run.checkpoints.operations.size} durable operations (${Object.entries(types)
        .map(([type, n]) => `${type} ${n}`)
        .join(', ')})`,
    );
  }
}

/** The newest execution's history of `tool`'s state machine, read with a client of our own (not counted). */
async function latestHistory(stack: LocalStack, tool: string): Promise<HistoryEvent[]> {
  const sfn = new SFNClient({ region: 'us-east-1', endpoint: stack.sfnEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const { stateMachines = [] } = await sfn.send(new ListStateMachinesCommand({}));
    const machine = stateMachines.find((m) => m.name === tool || m.name?.endsWith(`-${tool}`));
    const { executions = [] } = await sfn.send(
      new ListExecutionsCommand({ stateMachineArn: machine?.stateMachineArn, statusFilter: 'SUCCEEDED', maxResults: 1000 }),
    );
    const newest = executions.sort((a, b) => (b.startDate?.getTime() ?? 0) - (a.startDate?.getTime() ?? 0))[0];
    if (!newest?.executionArn) throw new Error(`bench: no completed execution of ${tool}`);
    return (await sfn.send(new GetExecutionHistoryCommand({ executionArn: newest.executionArn, maxResults: 1000 }))).events ?? [];
  } finally {
    sfn.destroy();
  }
}

/** The bytes a durable execution keeps: its input and result (GetDurableExecution, not counted) and what it checkpointed. */
async function storedBytes(stack: LocalStack, run: MeasuredRun): Promise<number> {
  const arn = run.checkpoints.executionArn;
  if (!arn || !stack.durableEndpoint) throw new Error(`bench: ${run.tool} checkpointed no execution`);
  const lambda = new LambdaClient({ region: 'us-east-1', endpoint: stack.durableEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const execution = await lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
    return Buffer.byteLength(execution.InputPayload ?? '') + Buffer.byteLength(execution.Result ?? '') + run.checkpoints.bytes;
  } finally {
    lambda.destroy();
  }
}

/** Start-to-first-poll: the start request sent until the first poll's answer is read, `runs` times per tool, taking turns. */
async function startToFirstPoll(steps: DialectSteps, runs: number): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = { [DURABLE_TOOL]: [], [MACHINE_TOOL]: [] };
  for (let i = 0; i < runs; i++) {
    for (const tool of i % 2 ? [MACHINE_TOOL, DURABLE_TOOL] : [DURABLE_TOOL, MACHINE_TOOL]) {
      const started = performance.now();
      const id = await steps.start({ name: tool, arguments: ARGUMENTS });
      need(await steps.poll(id));
      samples[tool]?.push(performance.now() - started);
    }
  }
  return samples;
}

function percentile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/**
 * `npm run bench -- --only=durable`: a durable tool beside a state machine tool doing the same
 * work, on one local stack. `runs` (BENCH_DURABLE_RUNS, 20) sizes the latency samples.
 */
export async function printDurableToolComparison(options: { runs?: number } = {}): Promise<void> {
  const runs = options.runs ?? Number(process.env.BENCH_DURABLE_RUNS ?? 20);
  const twins = await startTwinStack();
  try {
    const steps = dialects(twins.stack.url).find((d) => d.name === DIALECT);
    if (!steps) throw new Error(`bench: no ${DIALECT} dialect`);
    // Warm-up, uncounted: the first calls compile schemas, open connections and load the SDKs.
    await twins.measure(MACHINE_TOOL, steps);
    await twins.measure(DURABLE_TOOL, steps);
    const machine = await twins.measure(MACHINE_TOOL, steps);
    const durable = await twins.measure(DURABLE_TOOL, steps);

    console.log(
      `Durable tool beside a state machine tool, the same work (a step, a ${ARGUMENTS.waitSeconds} s wait, a step; bench/fixtures/durable-twins), ${DIALECT}:`,
    );
    console.log("AWS calls per operation (DynamoDB, Step Functions, Lambda on the server's clients):");
    printCalls(machine);
    printCalls(durable);
    console.log("  * the durable function's own calls (SDK checkpoint client): AWS bills their work as durable operations, not as API calls.");
    console.log();

    const memory = lambdaMemorySizes();
    const config = JSON.parse(readFileSync(new URL(`${DURABLE_TOOL}/tool.json`, FIXTURES), 'utf8')) as {
      durable?: { memorySize?: number; retentionDays?: number };
    };
    const stored = {
      bytes: await storedBytes(twins.stack, durable),
      memoryMb: config.durable?.memorySize ?? 512,
      retentionDays: config.durable?.retentionDays ?? 14,
    };
    console.log(
      `Cost per ${OPERATIONS.toLocaleString('en-US')} operations (start, polls every ${POLL_EVERY_MS} ms until done, the result; us-east-1 list prices, bench/durable-tool-cost.ts):`,
    );
    printCost(MACHINE_TOOL, machineCost(machine, await latestHistory(twins.stack, MACHINE_TOOL), memory));
    printCost(DURABLE_TOOL, durableCost(durable, stored, memory));
    console.log('  Lambda durable functions: $8.00 per million durable operations (aws.amazon.com/lambda/pricing, US East example, read 2026-09-20);');
    console.log('  no price per GB written or per GB-month retained was found (searched 2026-12-02): those lines are left out of the totals;');
    console.log("  the execution's own start is not counted as a durable operation: what was found does not say whether it is one.");
    console.log("  Handler times are this machine's, in-process and warm: a Lambda also waits on the network and pays cold starts.");
    console.log();

    const samples = await startToFirstPoll(steps, runs);
    console.log(`Start-to-first-poll latency (the start sent until the first poll answers), ${runs} runs each, taking turns, on a shared, loaded machine:`);
    for (const [tool, times] of Object.entries(samples)) {
      console.log(`  ${tool.padEnd(18)} p50=${percentile(times, 0.5).toFixed(1)}ms p95=${percentile(times, 0.95).toFixed(1)}ms`);
    }
    // The last runs end before the stack closes, so nothing is cut off mid-run.
    await sleep((ARGUMENTS.waitSeconds + 1) * 1000);
    await twins.stack.drainEvents();
  } finally {
    await twins.close();
  }
}
