/**
 * What MCP Events cost (issue 29, "Bench"), on the local stack (`npm start`'s, port 0) with a
 * 127.0.0.1 webhook receiver:
 * - delivery latency: from an operation.finished occurrence's timestamp (its status write) to
 *   the signed POST reaching the receiver, p50/p95 over BENCH_EVENTS_OPERATIONS (20) quick tasks;
 * - poll cost: DynamoDB calls and read units per events/poll, counted on the server's client (an
 *   index Query billed at least 0.5 RCU, DynamoDB's floor for an eventually consistent read);
 * - one subscriber for an hour in each mode (poll every nextPollMs, a push stream held as listen
 *   is, a webhook) beside polling tasks/get, from the measured calls x us-east-1 list prices, as
 *   listener-cost.ts computes the listener-hour. The principal is made an authenticated one
 *   (webhooks need one), as OAuth or IAM would.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { countAwsCalls } from '../lambdas/aws/aws-call-counter.ts';
import { generateWebhookSecret } from '../lambdas/events/webhooks/webhook-secret.ts';
import { LISTEN_DEFAULTS } from '../lambdas/mcp/listen/listen-handler.ts';
import { startLocalStack } from '../local/local-stack.ts';
import { MODERN_VERSION, modernRequest } from '../test/support/raw-mcp.ts';
import { openStream } from '../test/support/sse-reader.ts';
import { startWebhookReceiver } from '../test/support/webhook-receiver.ts';
import { meterConsumedCapacity } from './consumed-capacity.ts';
import { TASKS_EXTENSION } from './local-server-process.ts';
import { lambdaMemorySizes, mcpFunctionTimeoutSeconds } from './deployed-defaults.ts';
import { PRICES } from './operation-cost.ts';

const OPERATIONS = Number(process.env.BENCH_EVENTS_OPERATIONS ?? 20);
const SECONDS = Number(process.env.BENCH_EVENTS_SECONDS ?? 10);
const POLLS = 50;
const HOUR = 3600;
const QUICK = { name: 'summarize_numbers', arguments: { numbers: [1, 2, 3] } };
const WAITING = { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 3600 } };

interface Counted {
  calls: Record<string, number>;
  readUnits: number;
  writeUnits: number;
}

/** Prints delivery latency, poll cost and the subscriber-hour of each mode. */
export async function printEventsCost(): Promise<void> {
  const stack = await startLocalStack({ toolsDir: 'state-machines', port: 0, ttl: { intervalMs: 3_600_000 } });
  const receiver = await startWebhookReceiver();
  // Webhooks need an authenticated principal; the bench stands in for an OAuth subject.
  const inRequest = new AsyncLocalStorage<true>();
  const fetch = stack.app.fetch;
  stack.app.fetch = (request, principal) => inRequest.run(true, () => fetch(request, principal === 'local' ? 'oauth:bench' : principal));
  let counting = false;
  let requestsOnly = true;
  const counted = () => counting && (!requestsOnly || inRequest.getStore() === true);
  const calls = countAwsCalls(stack.awsClients.dynamodb, { when: counted });
  const meter = meterConsumedCapacity(stack.awsClients.dynamodb, { when: counted });
  const span = async (work: () => Promise<void>, onlyRequests = true): Promise<Counted> => {
    await stack.drainEvents();
    calls.reset();
    meter.reset();
    requestsOnly = onlyRequests;
    counting = true;
    try {
      await work();
      if (!onlyRequests) await stack.drainEvents();
    } finally {
      counting = false;
    }
    const units = meter.units();
    const counts = { ...calls.snapshot() };
    // The log's reads are Queries on the owner index, eventually consistent: DynamoDB bills each at least 0.5 RCU; dynalite meters no index read.
    return { calls: counts, readUnits: Math.max(units.read, 0.5 * (counts.Query ?? 0)), writeUnits: units.write };
  };
  const rpc = (method: string, params: Record<string, unknown>) => modernRequest(stack.url, method, params, { capabilities: TASKS_EXTENSION });
  const result = async (method: string, params: Record<string, unknown>) => {
    const answer = await rpc(method, params);
    if (!answer.message?.result) throw new Error(`bench: ${method} answered ${answer.text.slice(0, 300)}`);
    return answer.message.result;
  };
  try {
    // Delivery latency: one webhook subscription to every operation.finished of the principal.
    const arrivals = new Map<string, number>();
    receiver.handle = async (request) => {
      const body = (await request.json()) as { type?: string; challenge?: string; eventId?: string; timestamp?: string };
      if (body.type === 'verification') return Response.json({ challenge: body.challenge });
      if (body.eventId && body.timestamp) arrivals.set(body.eventId, Date.now() - Date.parse(body.timestamp));
      return new Response(null, { status: 204 });
    };
    const subscribe = {
      name: 'operation.finished',
      arguments: { tool: QUICK.name },
      delivery: { mode: 'webhook', url: `${receiver.origin}/bench`, secret: generateWebhookSecret() },
      cursor: null,
    };
    await result('events/subscribe', subscribe);
    for (let i = 0; i < OPERATIONS; i++) {
      const seen = arrivals.size;
      await result('tools/call', QUICK);
      while (arrivals.size === seen) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const latency = [...arrivals.values()].sort((a, b) => a - b);

    // What a webhook delivery costs beyond the operation itself: the same run with and without the subscription.
    const withHook = await span(async () => void (await result('tools/call', QUICK)), false);
    const refresh = await span(async () => void (await result('events/subscribe', subscribe)));
    await result('events/unsubscribe', { name: subscribe.name, arguments: subscribe.arguments, delivery: { url: subscribe.delivery.url } });
    const withoutHook = await span(async () => void (await result('tools/call', QUICK)), false);

    // Poll cost, and the push stream's reads, against a waiting task.
    const { taskId } = await result('tools/call', WAITING);
    const first = await result('events/poll', { name: 'operation.finished', arguments: { operationId: taskId }, cursor: null });
    const nextPollMs = first.nextPollMs as number;
    let cursor = first.cursor as string;
    const pollMs: number[] = [];
    const polled = await span(async () => {
      for (let i = 0; i < POLLS; i++) {
        const started = performance.now();
        cursor = (await result('events/poll', { name: 'operation.finished', arguments: { operationId: taskId }, cursor })).cursor;
        pollMs.push(performance.now() - started);
      }
    });
    const taskPollMs: number[] = [];
    const taskPolled = await span(async () => {
      for (let i = 0; i < POLLS; i++) {
        const started = performance.now();
        await result('tasks/get', { taskId });
        taskPollMs.push(performance.now() - started);
      }
    });
    const pollIntervalMs = (await result('tasks/get', { taskId })).pollIntervalMs as number;
    const streamed = await span(async () => {
      const stream = await openStream(
        stack.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'events/stream',
          params: { name: 'operation.finished', arguments: { operationId: taskId }, cursor, _meta: modernMeta() },
        },
        { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'events/stream', 'mcp-name': 'operation.finished' },
      );
      await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
      await stream.cancel();
    });
    await rpc('tasks/cancel', { taskId });
    // Its end reaches status sync before the stack closes.
    await stack.drainEvents();
    print({ latency, withHook, withoutHook, refresh, polled, pollMs, nextPollMs, taskPolled, taskPollMs, pollIntervalMs, streamed });
  } finally {
    calls.remove();
    await receiver.close();
    await stack.close();
  }
}

function modernMeta() {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': TASKS_EXTENSION,
  };
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
const format = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([name]) => name !== 'DescribeTable')
    .map(([name, n]) => `${name} ${n}`)
    .join(', ') || 'none';
const mean = (samples: number[]) => samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length);

function print(m: {
  latency: number[];
  withHook: Counted;
  withoutHook: Counted;
  refresh: Counted;
  polled: Counted;
  pollMs: number[];
  nextPollMs: number;
  taskPolled: Counted;
  taskPollMs: number[];
  pollIntervalMs: number;
  streamed: Counted;
}): void {
  const at = (q: number) => m.latency[Math.min(m.latency.length - 1, Math.floor(q * m.latency.length))] ?? Number.NaN;
  console.log(`MCP Events on the local stack (bench/events-cost.ts; ${m.latency.length} operations, a 127.0.0.1 receiver):`);
  console.log(`  delivery latency, status write -> webhook POST received   p50=${at(0.5)} ms p95=${at(0.95)} ms max=${m.latency.at(-1)} ms`);
  const perPoll = (n: number) => n / POLLS;
  console.log(
    `  events/poll: ${format(m.polled.calls)} over ${POLLS} polls = ${perPoll(total(m.polled.calls)).toFixed(2)} DynamoDB calls, ${perPoll(m.polled.readUnits).toFixed(2)} RCU each (mean ${mean(m.pollMs).toFixed(1)} ms)`,
  );
  console.log(
    `  tasks/get:   ${format(m.taskPolled.calls)} over ${POLLS} polls = ${perPoll(total(m.taskPolled.calls)).toFixed(2)} DynamoDB calls, ${perPoll(m.taskPolled.readUnits).toFixed(2)} RCU each (mean ${mean(m.taskPollMs).toFixed(1)} ms)`,
  );
  const hookReads = m.withHook.readUnits - m.withoutHook.readUnits;
  const hookWrites = m.withHook.writeUnits - m.withoutHook.writeUnits;
  console.log(
    `  one webhook delivery, beyond the operation: ${hookReads.toFixed(1)} RCU, ${hookWrites.toFixed(1)} WCU (operation with a subscriber: ${format(m.withHook.calls)}; without: ${format(m.withoutHook.calls)})`,
  );
  console.log(`  a subscription refresh (events/subscribe again): ${format(m.refresh.calls)}, ${m.refresh.readUnits} RCU, ${m.refresh.writeUnits} WCU`);

  const memory = lambdaMemorySizes().mcp;
  const gb = memory / 1024;
  const timeout = mcpFunctionTimeoutSeconds();
  const streamSeconds = Math.min(LISTEN_DEFAULTS.maxStreamMs / 1000, timeout - LISTEN_DEFAULTS.deadlineMarginMs / 1000);
  type Hour = { invocations: number; gbSeconds: number; readUnits: number; writeUnits: number };
  const usd = (c: Hour) =>
    c.invocations * PRICES.lambdaRequest +
    c.gbSeconds * PRICES.lambdaArmGbSecond +
    c.readUnits * PRICES.readRequestUnit +
    c.writeUnits * PRICES.writeRequestUnit;
  const polling = (everyMs: number, counted: Counted, ms: number[]): Hour => {
    const n = HOUR / (everyMs / 1000);
    return {
      invocations: n,
      gbSeconds: n * (Math.ceil(mean(ms)) / 1000) * gb,
      readUnits: perPoll(counted.readUnits) * n,
      writeUnits: perPoll(counted.writeUnits) * n,
    };
  };
  const streams = HOUR / streamSeconds;
  const push: Hour = {
    invocations: streams,
    gbSeconds: HOUR * gb,
    readUnits: (m.streamed.readUnits / SECONDS) * HOUR,
    writeUnits: m.streamed.writeUnits * streams,
  };
  // A webhook subscriber costs nothing while nothing happens but its hourly refresh (the default grant is an hour).
  const webhook: Hour = {
    invocations: 1,
    gbSeconds: (Math.ceil(mean(m.pollMs)) / 1000) * gb,
    readUnits: m.refresh.readUnits,
    writeUnits: m.refresh.writeUnits,
  };
  console.log(`One subscriber for an hour, waiting on one operation, us-east-1 list prices (MCP function ${memory} MB arm64):`);
  console.log(`  formula: poll invocations = 3600 / interval; GB-s = invocations x ceil(mean ms) / 1000 x GB; RCU = RCU per poll x invocations`);
  console.log(`           (an owner-index Query is billed at least 0.5 RCU, eventually consistent; dynalite meters none)`);
  console.log(`           push = a stream per ${streamSeconds} s, billed for the whole hour; RCU = RCU per second on a stream x 3600`);
  console.log(
    `           webhook = one refresh an hour; each delivered event adds a delivery invocation and its ${hookReads.toFixed(1)} RCU + ${hookWrites.toFixed(1)} WCU`,
  );
  const row = (name: string, c: Hour) =>
    console.log(
      `  ${name.padEnd(30)} ${c.invocations.toFixed(1).padStart(8)} invocations ${c.gbSeconds.toFixed(1).padStart(8)} GB-s ${c.readUnits.toFixed(0).padStart(6)} RCU ${c.writeUnits.toFixed(0).padStart(4)} WCU   $${usd(c).toFixed(5)}`,
    );
  row(`events/poll every ${m.nextPollMs} ms`, polling(m.nextPollMs, m.polled, m.pollMs));
  row('events/stream (push)', push);
  row('webhook (idle, refreshed hourly)', webhook);
  row(`tasks/get every ${m.pollIntervalMs} ms`, polling(m.pollIntervalMs, m.taskPolled, m.taskPollMs));
}

if (import.meta.url === `file://${process.argv[1]}`) await printEventsCost();
