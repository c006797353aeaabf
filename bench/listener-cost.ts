/**
 * What one listener-hour costs in AWS, beside polling at the task's pollIntervalMs: one
 * client following one long task for an hour, either on `subscriptions/listen` (streams
 * that end before the MCP function's timeout and are re-opened) or with `tasks/get`
 * every pollIntervalMs. The AWS calls and DynamoDB read units are counted on the server's
 * own client over a short run of each (BENCH_LISTEN_SECONDS, 10), then extrapolated to an
 * hour; the formula is printed with the figures. Only calls made for MCP requests count (the
 * stream's included), not what the run writes on its own meanwhile (progress reports).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { countAwsCalls } from '../lambdas/aws/aws-call-counter.ts';
import { LISTEN_DEFAULTS } from '../lambdas/mcp/listen/listen-handler.ts';
import { startLocalStack } from '../local/local-stack.ts';
import { MODERN_VERSION, modernRequest } from '../test/support/raw-mcp.ts';
import { openStream } from '../test/support/sse-reader.ts';
import { meterConsumedCapacity } from './consumed-capacity.ts';
import { TASKS_EXTENSION } from './local-server-process.ts';
import { lambdaMemorySizes, mcpFunctionTimeoutSeconds } from './deployed-defaults.ts';
import { PRICES } from './operation-cost.ts';

const SECONDS = Number(process.env.BENCH_LISTEN_SECONDS ?? 10);
const WAITING = { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 3600 } };
const HOUR = 3600;

interface Span {
  getItems: number;
  writes: number;
  readUnits: number;
  writeUnits: number;
  /** Client-side time of each request, ms (an upper bound of the handler's). */
  requestMs: number[];
}

/** Prints the listener-hour and the polling-hour side by side. */
export async function printListenerCost(): Promise<void> {
  const stack = await startLocalStack({ toolsDir: 'state-machines', port: 0, listen: { maxStreamMs: SECONDS * 1000 }, ttl: { intervalMs: 3_600_000 } });
  let counting = false;
  // A call counts when an MCP request made it (a stream's reads run in its request's async context).
  const inRequest = new AsyncLocalStorage<true>();
  const fetch = stack.app.fetch;
  stack.app.fetch = (request, principal) => inRequest.run(true, () => fetch(request, principal));
  const counted = () => counting && inRequest.getStore() === true;
  const calls = countAwsCalls(stack.awsClients.dynamodb, { when: counted });
  const meter = meterConsumedCapacity(stack.awsClients.dynamodb, { when: counted });
  const span = async (work: (requestMs: number[]) => Promise<void>): Promise<Span> => {
    await stack.drainEvents();
    calls.reset();
    meter.reset();
    const requestMs: number[] = [];
    counting = true;
    try {
      await work(requestMs);
    } finally {
      counting = false;
    }
    const counts = calls.snapshot();
    const units = meter.units();
    return {
      getItems: counts.GetItem ?? 0,
      writes: (counts.UpdateItem ?? 0) + (counts.PutItem ?? 0) + (counts.DeleteItem ?? 0),
      readUnits: units.read,
      writeUnits: units.write,
      requestMs,
    };
  };
  try {
    const created = await modernRequest(stack.url, 'tools/call', WAITING, { capabilities: TASKS_EXTENSION });
    const taskId = created.message?.result?.taskId as string;
    if (!taskId) throw new Error(`bench: no task started (${created.text.slice(0, 200)})`);
    const task = (await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: TASKS_EXTENSION })).message?.result;
    const pollMs = task.pollIntervalMs as number;

    const listened = await span(async (requestMs) => {
      const started = performance.now();
      const stream = await openStream(
        stack.url,
        { jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { notifications: { taskIds: [taskId] }, _meta: modernMeta() } },
        { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'subscriptions/listen' },
      );
      await stream.rest();
      requestMs.push(performance.now() - started);
    });
    const polled = await span(async (requestMs) => {
      const until = performance.now() + SECONDS * 1000;
      while (performance.now() < until) {
        const started = performance.now();
        await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: TASKS_EXTENSION });
        requestMs.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, pollMs - (performance.now() - started))));
      }
    });
    await modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: TASKS_EXTENSION });
    print(listened, polled, pollMs);
  } finally {
    calls.remove();
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

function print(listened: Span, polled: Span, pollMs: number): void {
  const memoryGb = lambdaMemorySizes().mcp / 1024;
  const timeout = mcpFunctionTimeoutSeconds();
  // A stream in AWS lasts until the function's timeout, less the margin, or the cap, whichever is first.
  const streamSeconds = Math.min(LISTEN_DEFAULTS.maxStreamMs / 1000, timeout - LISTEN_DEFAULTS.deadlineMarginMs / 1000);
  const streams = HOUR / streamSeconds;
  // Reads scale with time on a stream (one GetItem per task per interval); the lease's two writes with the streams.
  const listen = {
    invocations: streams,
    gbSeconds: HOUR * memoryGb,
    reads: (listened.getItems / SECONDS) * HOUR,
    readUnits: (listened.readUnits / SECONDS) * HOUR,
    writes: listened.writes * streams,
    writeUnits: listened.writeUnits * streams,
  };
  const polls = HOUR / (pollMs / 1000);
  const pollMean = polled.requestMs.reduce((a, b) => a + b, 0) / Math.max(1, polled.requestMs.length);
  const perPoll = (n: number) => n / Math.max(1, polled.requestMs.length);
  const poll = {
    invocations: polls,
    gbSeconds: polls * (Math.ceil(pollMean) / 1000) * memoryGb,
    reads: perPoll(polled.getItems) * polls,
    readUnits: perPoll(polled.readUnits) * polls,
    writes: perPoll(polled.writes) * polls,
    writeUnits: perPoll(polled.writeUnits) * polls,
  };
  const usd = (c: typeof listen) =>
    c.invocations * PRICES.lambdaRequest +
    c.gbSeconds * PRICES.lambdaArmGbSecond +
    c.readUnits * PRICES.readRequestUnit +
    c.writeUnits * PRICES.writeRequestUnit;
  console.log(`Cost of one client following one task for an hour (bench/listener-cost.ts; counted over ${SECONDS} s of each, us-east-1 list prices):`);
  console.log(
    `  measured: listen ${listened.getItems} GetItem (${listened.readUnits} RCU) and ${listened.writes} lease writes in one ${SECONDS} s stream; polling ${polled.requestMs.length} tasks/get (${polled.getItems} GetItem, ${polled.readUnits} RCU), mean ${pollMean.toFixed(1)} ms each`,
  );
  console.log(
    `  formula:  listen  invocations = 3600 / streamSeconds (${streamSeconds} s: min(14 min, timeout ${timeout} s - ${LISTEN_DEFAULTS.deadlineMarginMs / 1000} s)); GB-s = 3600 x ${lambdaMemorySizes().mcp} MB / 1024 (billed for the whole stream);`,
  );
  console.log(`                    RCU = RCU per second on a stream x 3600; lease writes = 2 per stream`);
  console.log(
    `            polling invocations = 3600 / (pollIntervalMs ${pollMs} / 1000); GB-s = invocations x ceil(mean ms) / 1000 x ${lambdaMemorySizes().mcp} MB / 1024; RCU = RCU per poll x invocations`,
  );
  const row = (name: string, c: typeof listen) =>
    console.log(
      `  ${name.padEnd(22)} ${c.invocations.toFixed(1).padStart(8)} invocations ${c.gbSeconds.toFixed(1).padStart(9)} GB-s ${c.reads.toFixed(0).padStart(6)} reads ${c.readUnits.toFixed(0).padStart(6)} RCU ${c.writeUnits.toFixed(0).padStart(4)} WCU   $${usd(c).toFixed(5)}`,
    );
  row('listen (1 task)', listen);
  row(`poll every ${pollMs} ms`, poll);
  console.log(
    '  A stream bills its Lambda for every second it is open; a poll only for its own milliseconds. Listening saves the client its requests, not the server its cost.',
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await printListenerCost();
