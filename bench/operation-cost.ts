/**
 * What an operation costs in AWS, from what one run on the local stack measured: the AWS
 * calls and DynamoDB request units counted on the server's clients, the MCP and status-sync
 * handler times, the worker Task times and the state transitions from the execution's
 * history (the facade's GetExecutionHistory), the Lambda memory sizes the CDK construct
 * deploys, and the list prices below.
 *
 * Prices: us-east-1, on demand, as published on the AWS pricing pages (aws.amazon.com/
 * lambda/pricing, /step-functions/pricing, /dynamodb/pricing, /eventbridge/pricing) in 2025
 * and re-read 2026-11-30; DynamoDB's are those after its 2024-11-01 on-demand reduction.
 * Free tiers are left out. Re-check them before quoting a figure.
 */
import { GetExecutionHistoryCommand, ListExecutionsCommand, ListStateMachinesCommand, SFNClient, type HistoryEvent } from '@aws-sdk/client-sfn';
import type { DialectSteps } from './aws-calls.ts';
import { lambdaMemorySizes } from './deployed-defaults.ts';
import { footprintChange, tableFootprint } from './item-footprint.ts';
import type { Measured, MeasuredStack } from './measured-stack.ts';

/** USD. */
export const PRICES = {
  /** Lambda requests, per request ($0.20 per million). */
  lambdaRequest: 0.2 / 1e6,
  /** Lambda duration on arm64 (Graviton), per GB-second, first 7.5 billion GB-s a month. */
  lambdaArmGbSecond: 0.0000133334,
  /** Step Functions STANDARD, per state transition ($0.025 per 1,000). */
  stateTransition: 0.025 / 1000,
  /** DynamoDB on-demand, per write request unit ($0.625 per million). */
  writeRequestUnit: 0.625 / 1e6,
  /** DynamoDB on-demand, per read request unit ($0.125 per million; a strongly consistent read of up to 4 KB is 1). */
  readRequestUnit: 0.125 / 1e6,
  /**
   * EventBridge, per event. Step Functions' execution status changes are AWS service events
   * on the default bus, which EventBridge publishes free of charge (custom events are $1.00
   * per million); delivering them to a Lambda target adds no EventBridge charge.
   */
  statusChangeEvent: 0,
} as const;

/** Arguments of the costed run: three chunks, so the Map runs three iterations. */
const COSTED_RUN = { name: 'analyze_dataset', arguments: { rows: 300_000, seed: 7 } };
const POLLS = 10;
const OPERATIONS = 1000;

/** One line of the cost breakdown, per operation. */
export interface CostLine {
  label: string;
  quantity: string;
  usd: number;
}

/** Runs one costed operation in `steps`'s dialect (start, polls, result) and returns what it costs, by service. */
export async function costOfOperation(measured: MeasuredStack, steps: DialectSteps, untilDone: (id: string) => Promise<void>): Promise<CostLine[]> {
  let id = '';
  const run = await measured.measure(async () => {
    id = await steps.start(COSTED_RUN);
    for (let i = 0; i < POLLS; i++) await steps.poll(id);
    await untilDone(id);
    if (steps.result) await steps.result(id);
  });
  return costLines(run, await latestHistory(measured, COSTED_RUN.name), lambdaMemorySizes());
}

/** The total of a breakdown, per 1,000 operations. */
export function perThousand(lines: readonly CostLine[]): number {
  return lines.reduce((sum, line) => sum + line.usd, 0) * OPERATIONS;
}

/** Prints a breakdown per 1,000 operations. */
export function printCost(dialect: string, hasResultStep: boolean, lines: readonly CostLine[]): void {
  console.log(
    `Cost per ${OPERATIONS.toLocaleString('en-US')} ${COSTED_RUN.name} operations (rows ${COSTED_RUN.arguments.rows.toLocaleString('en-US')}), ${dialect}: start, ${POLLS} polls, ${hasResultStep ? 'the result' : 'the result inlined in a last poll'}; us-east-1 list prices (bench/operation-cost.ts):`,
  );
  for (const line of lines) console.log(`  ${line.label.padEnd(44)} ${line.quantity.padEnd(56)} $${(line.usd * OPERATIONS).toFixed(4)}`);
  console.log(`  ${'total'.padEnd(44)} ${''.padEnd(56)} $${perThousand(lines).toFixed(4)}`);
  console.log("  Handler times are this machine's, in-process and warm, with DynamoDB on loopback: a Lambda also waits on the network and pays cold starts.");
}

function costLines(run: Measured, history: HistoryEvent[], memory: ReturnType<typeof lambdaMemorySizes>): CostLine[] {
  // Lambda bills each invocation's duration rounded up to the millisecond.
  const billedSeconds = (ms: readonly number[]) => ms.reduce((sum, t) => sum + Math.max(1, Math.ceil(t)), 0) / 1000;
  const tasks = taskTimes(history);
  const transitions = history.filter((event) => event.type?.endsWith('StateEntered')).length;
  const mcpSeconds = billedSeconds(run.requestMs);
  const syncSeconds = billedSeconds(run.statusSyncMs);
  const workerSeconds = billedSeconds(tasks);
  const gbSeconds = (seconds: number, mb: number) => (seconds * mb) / 1024;
  const calls = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);
  const dynamoCalls = calls(run.request) + calls(run.statusSync) + calls(run.background) - sfnCalls(run);
  return [
    {
      label: 'Lambda requests',
      quantity: `${run.requestMs.length} MCP + ${run.statusSyncMs.length} status sync + ${tasks.length} worker`,
      usd: (run.requestMs.length + run.statusSyncMs.length + tasks.length) * PRICES.lambdaRequest,
    },
    {
      label: `Lambda GB-s, MCP (${memory.mcp} MB arm64)`,
      quantity: `${(mcpSeconds * 1000).toFixed(0)} ms billed`,
      usd: gbSeconds(mcpSeconds, memory.mcp) * PRICES.lambdaArmGbSecond,
    },
    {
      label: `Lambda GB-s, status sync (${memory.statusSync} MB)`,
      quantity: `${(syncSeconds * 1000).toFixed(0)} ms billed`,
      usd: gbSeconds(syncSeconds, memory.statusSync) * PRICES.lambdaArmGbSecond,
    },
    {
      label: `Lambda GB-s, workers (${memory.worker} MB)`,
      quantity: `${(workerSeconds * 1000).toFixed(0)} ms billed (Task states in the history)`,
      usd: gbSeconds(workerSeconds, memory.worker) * PRICES.lambdaArmGbSecond,
    },
    { label: 'Step Functions state transitions', quantity: `${transitions} (StateEntered events in the history)`, usd: transitions * PRICES.stateTransition },
    { label: 'DynamoDB reads (on demand)', quantity: `${run.units.read} RRU over ${dynamoCalls} DynamoDB calls`, usd: run.units.read * PRICES.readRequestUnit },
    { label: 'DynamoDB writes (on demand, table + index)', quantity: `${run.units.write} WRU`, usd: run.units.write * PRICES.writeRequestUnit },
    {
      label: 'EventBridge status-change events',
      quantity: `${run.statusSyncMs.length} (AWS service events: free)`,
      usd: run.statusSyncMs.length * PRICES.statusChangeEvent,
    },
  ];
}

const SFN_COMMANDS = new Set([
  'StartExecution',
  'StartSyncExecution',
  'DescribeExecution',
  'StopExecution',
  'SendTaskSuccess',
  'SendTaskFailure',
  'SendTaskHeartbeat',
]);

function sfnCalls(run: Measured): number {
  return [run.request, run.statusSync, run.background]
    .flatMap((counts) => Object.entries(counts))
    .reduce((sum, [name, n]) => sum + (SFN_COMMANDS.has(name) ? n : 0), 0);
}

/**
 * Each Task's time, from its entered and exited events. Map iterations interleave, but the
 * sum of (exit - enter) is the same however the pairs match, so the exits and entries are
 * paired in order. Every Task state of analyze_dataset invokes a worker Lambda.
 */
function taskTimes(history: HistoryEvent[]): number[] {
  const at = (type: string) => history.filter((event) => event.type === type).map((event) => new Date(event.timestamp ?? Number.NaN).getTime());
  const entered = at('TaskStateEntered');
  const exited = at('TaskStateExited');
  return entered.map((start, index) => Math.max(0, (exited[index] ?? start) - start));
}

/** The full history of the newest execution of `tool`, read with a client of our own (not counted). */
async function latestHistory(measured: MeasuredStack, tool: string): Promise<HistoryEvent[]> {
  const sfn = new SFNClient({ region: 'us-east-1', endpoint: measured.stack.sfnEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const { stateMachines = [] } = await sfn.send(new ListStateMachinesCommand({}));
    const machine = stateMachines.find((m) => m.name === tool || m.name?.endsWith(`-${tool}`));
    if (!machine) throw new Error(`bench: no state machine for ${tool}`);
    const { executions = [] } = await sfn.send(
      new ListExecutionsCommand({ stateMachineArn: machine.stateMachineArn, statusFilter: 'SUCCEEDED', maxResults: 1000 }),
    );
    const newest = executions.reduce<(typeof executions)[number] | undefined>(
      (a, b) => (!a || (b.startDate?.getTime() ?? 0) > (a.startDate?.getTime() ?? 0) ? b : a),
      undefined,
    );
    if (!newest?.executionArn) throw new Error(`bench: no completed execution of ${tool}`);
    const events: HistoryEvent[] = [];
    let nextToken: string | undefined;
    do {
      const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn: newest.executionArn, maxResults: 1000, nextToken }));
      events.push(...(page.events ?? []));
      nextToken = page.nextToken;
    } while (nextToken);
    return events;
  } finally {
    sfn.destroy();
  }
}

/** DynamoDB on-demand storage, per GB-month (us-east-1 Standard table class, re-read 2026-11-30). */
const STORAGE_GB_MONTH = 0.25;

/**
 * What a deployment pays DynamoDB for one operation's life, in place of the memory a local
 * process holds per waiting operation (in AWS a waiting operation holds no Lambda memory):
 * the write units of its start, its status changes (status sync, the workers' reports) and
 * its result read, and the bytes of the items it leaves, until its TTL removes them.
 */
export async function printDynamoDbPerOperation(measured: MeasuredStack, steps: DialectSteps, untilDone: (id: string) => Promise<void>): Promise<void> {
  const endpoint = measured.stack.dynamo.endpoint;
  const before = await tableFootprint(endpoint);
  let id = '';
  const run = await measured.measure(async () => {
    id = await steps.start(COSTED_RUN);
    for (let i = 0; i < POLLS; i++) await steps.poll(id);
    await untilDone(id);
    if (steps.result) await steps.result(id);
  });
  const items = footprintChange(before, await tableFootprint(endpoint));
  const bytes = items.reduce((sum, item) => sum + item.bytes, 0);
  const { request, statusSync, background } = run.unitsBy;
  // Status events arrive while the run is under way, so units are split by who wrote, not by phase.
  const parts: [string, { read: number; write: number }][] = [
    [`MCP requests (start, ${POLLS} polls${steps.result ? ', the result' : ''})`, request],
    ['status sync (status changes, result, events)', statusSync],
    ['workers (progress reports)', background],
    ['one operation', run.units],
  ];
  console.log(`DynamoDB per ${COSTED_RUN.name} operation, ${steps.name} (write units count the owner index; bench/consumed-capacity.ts):`);
  for (const [label, units] of parts) console.log(`  ${label.padEnd(52)} ${String(units.write).padStart(4)} WRU ${String(units.read).padStart(5)} RRU`);
  for (const item of items) console.log(`  ${`items left: ${item.kind}`.padEnd(52)} ${item.items} item(s), ${item.bytes} bytes`);
  const gbMonth = (bytes * OPERATIONS) / 1e9;
  console.log(
    `  ${`stored, per ${OPERATIONS.toLocaleString('en-US')} operations kept a month`.padEnd(52)} ${bytes} bytes each, $${(gbMonth * STORAGE_GB_MONTH).toFixed(6)} (plus the owner index's copy)`,
  );
}
