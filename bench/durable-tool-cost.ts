/**
 * What an operation of each twin of bench/durable-tools.ts costs in AWS, from what its run
 * measured: the MCP and status-sync handler times, DynamoDB request units, the state machine's
 * Task times and state transitions, the durable function's invocations, durable operations and
 * bytes kept.
 *
 * Prices: those of bench/operation-cost.ts (us-east-1 list prices), and for Lambda durable
 * functions, searched on 2026-12-02: $8.00 per million durable operations, as
 * aws.amazon.com/lambda/pricing gives it in its US East example (read there 2026-09-20 and
 * transcribed in github.com/api-evangelist/aws-lambda, plans/aws-lambda-plans-pricing.yml:
 * "Durable Functions operations (example rate): $8.00/M"). The prices per GB of data written
 * and per GB-month of data retained were not in what the search found: their lines give the
 * quantities and say so. Free tiers are left out.
 */
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import type { RequestUnits } from './consumed-capacity.ts';
import type { lambdaMemorySizes } from './deployed-defaults.ts';
import type { CheckpointTally } from './durable-checkpoint-tally.ts';
import { PRICES } from './operation-cost.ts';

/** The figures are per this many operations. */
export const OPERATIONS = 1000;

/** USD; undefined where the search found no price. */
export const DURABLE_PRICES = {
  /** Per durable operation (a step, a wait, a callback...): $8.00 per million. */
  durableOperation: 8 / 1e6,
  /** Per GB of data written (checkpointed): not found. */
  dataWrittenGb: undefined as number | undefined,
  /** Per GB-month of data retained: not found. */
  dataRetainedGbMonth: undefined as number | undefined,
} as const;

/** What a costed run measured: each MCP request's and status-sync invocation's handler time, and DynamoDB's units. */
export interface CostedRun {
  requests: ReadonlyArray<{ ms: number }>;
  statusSync: ReadonlyArray<{ ms: number }>;
  units: RequestUnits;
}

/** One line of a breakdown, per operation. */
export interface CostLine {
  label: string;
  quantity: string;
  /** Per operation; undefined where no price was found. */
  usd: number | undefined;
}

const billedSeconds = (ms: readonly number[]) => ms.reduce((sum, t) => sum + Math.max(1, Math.ceil(t)), 0) / 1000;
const gbSeconds = (seconds: number, mb: number) => (seconds * mb) / 1024;

/** What both tools pay alike: the MCP and status-sync functions, DynamoDB, the status events. */
function commonCost(run: CostedRun, memory: ReturnType<typeof lambdaMemorySizes>): CostLine[] {
  const mcp = billedSeconds(run.requests.map((r) => r.ms));
  const sync = billedSeconds(run.statusSync.map((s) => s.ms));
  return [
    {
      label: `Lambda GB-s, MCP (${memory.mcp} MB arm64)`,
      quantity: `${run.requests.length} requests, ${(mcp * 1000).toFixed(0)} ms billed`,
      usd: gbSeconds(mcp, memory.mcp) * PRICES.lambdaArmGbSecond,
    },
    {
      label: `Lambda GB-s, status sync (${memory.statusSync} MB)`,
      quantity: `${run.statusSync.length} invocations, ${(sync * 1000).toFixed(0)} ms billed`,
      usd: gbSeconds(sync, memory.statusSync) * PRICES.lambdaArmGbSecond,
    },
    { label: 'DynamoDB reads (on demand)', quantity: `${run.units.read} RRU`, usd: run.units.read * PRICES.readRequestUnit },
    { label: 'DynamoDB writes (table + index)', quantity: `${run.units.write} WRU`, usd: run.units.write * PRICES.writeRequestUnit },
    { label: 'EventBridge status-change events', quantity: `${run.statusSync.length} (AWS service events: free)`, usd: 0 },
  ];
}

/** The state machine twin: worker invocations and times from the Task states of its history, and its state transitions. */
export function machineCost(run: CostedRun, history: HistoryEvent[], memory: ReturnType<typeof lambdaMemorySizes>): CostLine[] {
  const at = (type: string) => history.filter((event) => event.type === type).map((event) => new Date(event.timestamp ?? Number.NaN).getTime());
  const exited = at('TaskStateExited');
  const tasks = at('TaskStateEntered').map((start, index) => Math.max(0, (exited[index] ?? start) - start));
  const transitions = history.filter((event) => event.type?.endsWith('StateEntered')).length;
  const workers = billedSeconds(tasks);
  return [
    {
      label: 'Lambda requests',
      quantity: `${run.requests.length} MCP + ${run.statusSync.length} status sync + ${tasks.length} worker`,
      usd: (run.requests.length + run.statusSync.length + tasks.length) * PRICES.lambdaRequest,
    },
    ...commonCost(run, memory),
    {
      label: `Lambda GB-s, workers (${memory.worker} MB)`,
      quantity: `${(workers * 1000).toFixed(0)} ms billed (Task states)`,
      usd: gbSeconds(workers, memory.worker) * PRICES.lambdaArmGbSecond,
    },
    { label: 'Step Functions state transitions', quantity: `${transitions} (StateEntered events)`, usd: transitions * PRICES.stateTransition },
  ];
}

/** The durable twin: its invocations and their time, its durable operations, and the bytes it writes and keeps for `retentionDays`. */
export function durableCost(
  run: CostedRun & { checkpoints: CheckpointTally },
  stored: { bytes: number; memoryMb: number; retentionDays: number },
  memory: ReturnType<typeof lambdaMemorySizes>,
): CostLine[] {
  const invocations = [...run.checkpoints.callsByInvocation.values()];
  const handler = billedSeconds(invocations.map((i) => i.lastMs - i.firstMs));
  const operations = run.checkpoints.operations.size;
  const writtenGb = stored.bytes / 1e9;
  const retainedGbMonth = writtenGb * (stored.retentionDays / 30);
  const priced = (price: number | undefined, quantity: number) => (price === undefined ? undefined : price * quantity);
  return [
    {
      label: 'Lambda requests',
      quantity: `${run.requests.length} MCP + ${run.statusSync.length} status sync + ${invocations.length} durable function`,
      usd: (run.requests.length + run.statusSync.length + invocations.length) * PRICES.lambdaRequest,
    },
    ...commonCost(run, memory),
    {
      label: `Lambda GB-s, durable function (${stored.memoryMb} MB)`,
      quantity: `${(handler * 1000).toFixed(0)} ms billed (first to last checkpoint call of each invocation)`,
      usd: gbSeconds(handler, stored.memoryMb) * PRICES.lambdaArmGbSecond,
    },
    { label: 'durable operations', quantity: `${operations} (the steps and the wait checkpointed)`, usd: operations * DURABLE_PRICES.durableOperation },
    {
      label: 'durable data written',
      quantity: `${stored.bytes} bytes (input, updates' JSON, result: at most)`,
      usd: priced(DURABLE_PRICES.dataWrittenGb, writtenGb),
    },
    {
      label: 'durable data retained',
      quantity: `${stored.bytes} bytes for ${stored.retentionDays} days after the end`,
      usd: priced(DURABLE_PRICES.dataRetainedGbMonth, retainedGbMonth),
    },
  ];
}

/** Prints a breakdown per {@link OPERATIONS} operations; a line with no price found says so and stays out of the total. */
export function printCost(tool: string, lines: readonly CostLine[]): void {
  console.log(`  ${tool}:`);
  for (const line of lines) {
    const usd = line.usd === undefined ? 'no price found' : `$${(line.usd * OPERATIONS).toFixed(4)}`;
    console.log(`    ${line.label.padEnd(46)} ${line.quantity.padEnd(66)} ${usd}`);
  }
  const total = lines.reduce((sum, line) => sum + (line.usd ?? 0), 0) * OPERATIONS;
  const missing = lines.filter((line) => line.usd === undefined).length;
  console.log(`    ${'total'.padEnd(46)} ${''.padEnd(66)} $${total.toFixed(4)}${missing ? ` + ${missing} item(s) with no price found` : ''}`);
}
