/**
 * Costs that must not grow with history: the DynamoDB calls and request units of a start, a
 * poll, a `tasks/list`, an `events/poll` and an operation's end (status sync, with its webhook
 * fan-out), measured with 10, 1,000 and 10,000 operations of one principal stored
 * (`BENCH_HISTORY_SIZES`), and whether each stays the same as the history grows.
 *
 * The history is made by cloning one finished 2025-11-25 task's items (its operation item and
 * its event-log items) under new ids, written with BatchWriteItem: 10,000 real runs would take
 * the local Step Functions an hour, and what a request reads depends only on what is stored.
 * Calls are counted on the server's own client (measured-stack.ts); units are what dynalite
 * reports for the table, and an owner-index Query, which dynalite does not meter, is estimated
 * as DynamoDB bills it (consumed-capacity.ts: 0.5 RCU per started 4 KB read, at least 0.5).
 */
import { BatchWriteItemCommand, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { pathToFileURL } from 'node:url';
import type { AwsCallCounts } from '../lambdas/aws/aws-call-counter.ts';
import { LIST_PAGE_SIZE } from '../lambdas/mcp/dialects/tasks-2025-11-25.ts';
import { legacyRequest, modernRequest } from '../test/support/raw-mcp.ts';
import { dialects, untilDone } from './aws-calls.ts';
import type { RequestUnits } from './consumed-capacity.ts';
import { TASKS_EXTENSION } from './local-server-process.ts';
import { formatCalls, startMeasuredStack, type MeasuredStack } from './measured-stack.ts';

type Item = Record<string, AttributeValue>;

const QUICK = { name: 'analyze_dataset', arguments: { rows: 10 } };
const WAITING = { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 3600 } };
const STEPS = ['start', 'poll', 'list', 'events/poll', 'end (status sync)'] as const;
type Step = (typeof STEPS)[number];

interface Cost {
  calls: AwsCallCounts;
  units: RequestUnits;
}

/** Prints the table: one row per step, one column per history size, and whether the row is flat. */
export async function printHistoryCost(sizes: readonly number[] = historySizes()): Promise<void> {
  // Owner-index Queries, which dynalite does not meter, estimated as DynamoDB bills them.
  const measured = await startMeasuredStack({ estimateIndexReads: true });
  const measure = async (work: () => Promise<unknown>, who: 'request' | 'statusSync'): Promise<Cost> => {
    const cost = await measured.measure(work);
    return { calls: cost[who], units: cost.unitsBy[who] };
  };
  try {
    const legacy = dialects(measured.stack.url).find((d) => d.name === 'tasks 2025-11-25');
    if (!legacy) throw new Error('no tasks 2025-11-25 dialect');
    // The template of the history.
    const template = await legacy.start(QUICK);
    await untilDone(measured, legacy, template);
    const items = await itemsOf(measured, template);
    const rpc = (method: string, params: Record<string, unknown>) => modernRequest(measured.stack.url, method, params, { capabilities: TASKS_EXTENSION });
    let cursor = (await measured.waiting(() => rpc('events/poll', { name: 'operation.finished', arguments: {}, cursor: null }))).message?.result?.cursor;
    if (typeof cursor !== 'string') throw new Error('events/poll answered no cursor');

    const table: Record<Step, Cost[]> = { start: [], poll: [], list: [], 'events/poll': [], 'end (status sync)': [] };
    // The template, and two more per size measured.
    let stored = 1;
    for (const size of sizes) {
      const seeded = performance.now();
      stored += await seed(measured, items, template, stored, size - stored);
      const seedSeconds = (performance.now() - seeded) / 1000;
      console.log(`  ${thousands(stored)} operations of one principal stored (seeded in ${seedSeconds.toFixed(1)} s)`);
      // The start and the run's end in one span: the polls that wait for it are not counted, status sync's calls are.
      const run = await measured.measure(async () => untilDone(measured, legacy, await legacy.start(QUICK)));
      table.start.push({ calls: run.request, units: run.unitsBy.request });
      table['end (status sync)'].push({ calls: run.statusSync, units: run.unitsBy.statusSync });
      stored++;
      // A poll of an operation started just now: one polled for minutes is reconciled with its execution at a cadence (reconcile-cadence.ts), however much history there is.
      const running = await measured.waiting(() => legacy.start(WAITING));
      stored++;
      table.poll.push(await measure(() => legacy.poll(running), 'request'));
      await measured.waiting(() => legacy.cancel(running));
      table.list.push(await measure(() => legacyRequest(measured.stack.url, 'tasks/list', {}), 'request'));
      table['events/poll'].push(
        await measure(async () => {
          const answer = await rpc('events/poll', { name: 'operation.finished', arguments: {}, cursor });
          cursor = answer.message?.result?.cursor ?? cursor;
        }, 'request'),
      );
    }

    console.log(`Costs as history grows: DynamoDB calls and RCU/WCU of one step with ${sizes.map(thousands).join(', ')} operations of one principal stored:`);
    console.log(`  ${'step'.padEnd(18)} ${sizes.map((size) => `${thousands(size)} operations`.padEnd(66)).join(' ')} flat?`);
    for (const step of STEPS) {
      const costs = table[step];
      const cells = costs.map((cost) => `${formatCalls(cost.calls)}; ${cost.units.read} RCU ${cost.units.write} WCU`.padEnd(66));
      // A list reads one page: it grows until the page is full, and must stay flat past it.
      const compared = step === 'list' ? costs.filter((_, i) => (sizes[i] ?? 0) > LIST_PAGE_SIZE) : costs;
      const verdict = isFlat(compared) ? (compared.length < costs.length ? `yes, past a full page (${LIST_PAGE_SIZE})` : 'yes') : 'NO';
      console.log(`  ${step.padEnd(18)} ${cells.join(' ')} ${verdict}`);
    }
    console.log(
      '  start, poll, list: 2025-11-25 tasks; events/poll: a 2026-07-28 events/poll of operation.finished from the last cursor; end: status sync of a quick run, its RUNNING and SUCCEEDED events with the finished occurrence and its webhook fan-out (this principal subscribes to nothing).',
    );
  } finally {
    await measured.close();
  }
}

/** The sizes to measure: `BENCH_HISTORY_SIZES=10,1000,10000` by default. */
function historySizes(): number[] {
  const sizes = (process.env.BENCH_HISTORY_SIZES ?? '10,1000,10000').split(',').map(Number);
  return sizes.filter((n) => Number.isInteger(n) && n > 0).sort((a, b) => a - b);
}

/** Whether every size cost the same calls and units. */
function isFlat(costs: readonly Cost[]): boolean {
  const first = costs[0];
  if (!first) return true;
  const key = (cost: Cost) => `${formatCalls(cost.calls)} ${cost.units.read} ${cost.units.write}`;
  return costs.every((cost) => key(cost) === key(first));
}

function thousands(n: number): string {
  return n.toLocaleString('en-US');
}

/** Every stored item of the operation `token` (its operation item and event-log items). */
async function itemsOf(measured: MeasuredStack, token: string): Promise<Item[]> {
  await measured.stack.drainEvents();
  const found: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await measured.waiting(() =>
      measured.stack.awsClients.dynamodb.send(
        new ScanCommand({ TableName: measured.stack.dynamo.tableName, ...(startKey ? { ExclusiveStartKey: startKey } : {}) }),
      ),
    );
    found.push(...(page.Items ?? []).filter((item) => JSON.stringify(item).includes(token)));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  if (!found.some((item) => item.pk?.S?.startsWith('OP#'))) throw new Error(`no operation item of ${token} found to clone`);
  return found;
}

/**
 * The clone `n` placed a day and `n` ms before the template in the owner index (its sort key
 * starts with a 15-digit epoch ms): history is older than what a list's first page or an
 * events/poll's cursor reads.
 */
function inThePast(item: Item, n: number): Item {
  const key = item.createdKey?.S;
  const at = key?.match(/^(\d{15})(.*)$/);
  if (!at?.[1]) return item;
  return { ...item, createdKey: { S: `${String(Number(at[1]) - 86_400_000 - n).padStart(15, '0')}${at[2] ?? ''}` } };
}

/** Writes `count` clones of `items` (ids made unique with the clone's number); how many operations it wrote. */
async function seed(measured: MeasuredStack, items: readonly Item[], token: string, from: number, count: number): Promise<number> {
  if (count <= 0) return 0;
  const text = JSON.stringify(items);
  // Every id the items carry: the token, the execution's name and the events' ids, each given the clone's suffix.
  const ids = new Set<string>([token, ...(text.match(/evt_[A-Za-z0-9_-]+|op-[A-Za-z0-9_-]{20,}/g) ?? [])]);
  const pattern = new RegExp([...ids].map((id) => id.replace(/[-]/g, '\\-')).join('|'), 'g');
  const requests: { PutRequest: { Item: Item } }[] = [];
  for (let n = from; n < from + count; n++) {
    for (const item of JSON.parse(text.replace(pattern, (id) => `${id}h${n}`)) as Item[]) requests.push({ PutRequest: { Item: inThePast(item, n) } });
  }
  const client = measured.stack.awsClients.dynamodb;
  const tableName = measured.stack.dynamo.tableName;
  // BatchWriteItem takes 25 items; a few batches at once.
  const batches: (typeof requests)[] = [];
  for (let i = 0; i < requests.length; i += 25) batches.push(requests.slice(i, i + 25));
  const send = async (batch: (typeof requests)[number][]) => {
    let pending: typeof batch = batch;
    while (pending.length > 0) {
      const output = await measured.waiting(() => client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: pending } })));
      pending = (output.UnprocessedItems?.[tableName] ?? []) as typeof batch;
    }
  };
  for (let i = 0; i < batches.length; i += 8) await Promise.all(batches.slice(i, i + 8).map(send));
  return count;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await printHistoryCost();
