/**
 * Async starts side by side: this server (local stack in its own process, `--starts`) starting
 * a waiting `analyze_dataset` operation per request in each async dialect, and the polls
 * bench's reference (the v1 SDK's stateless server with its InMemoryTaskStore, JSON answers)
 * creating a task per `tools/call`, measured alternately in one run so that both see the same
 * load. Prints throughput, each server's CPU per start and start-to-handle latency (p50, p95),
 * with the machine's load average before and after.
 *
 * Ours does, for each start, what it does in AWS: the record's conditional put, the slot
 * claim, the execution's start and the read after it; dynalite answers in a process of its
 * own, so its CPU is not in ours. Two figures, measured alternately with the reference's:
 * - whole process: the local stack's own endpoint, where the Step Functions facade running
 *   the execution's first states, status sync handling its RUNNING event, the EventBridge
 *   endpoint and the local workers share the MCP server's process and count as ours;
 * - MCP function: the same app served by a process of its own (mcp-function-process.ts) whose
 *   clients call that stack's stand-ins, so its CPU is what the MCP function spends in AWS
 *   (request handling, the SDK clients' serialisation, signing and HTTP); the stand-ins' CPU
 *   in the stack's process over those starts is printed beside it. The ratios to the
 *   reference are the like-for-like comparison: the reference runs no execution either.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { LEGACY_VERSION, MODERN_VERSION } from '../test/support/raw-mcp.ts';
import { quantile, runLoad, type LoadResult, type LoadTarget } from './http-load.ts';
import { LONG_RUNNING_OPERATIONS, TASKS_EXTENSION, WAITING_RUN, type LocalServerReady } from './local-server-process.ts';
import { startChild, type Child } from './poll-throughput.ts';
import type { McpFunctionReady } from './mcp-function-process.ts';
import type { ReferenceServerReady } from './reference-server.ts';

export interface StartThroughputOptions {
  /** @default [8, 32] */
  concurrencies?: readonly number[];
  /** Seconds of each segment. @default 3 */
  seconds?: number;
  /** How many times each ours/reference pair is repeated. @default 2 */
  rounds?: number;
}

/** A segment's result with the CPU the measured server used, and what other processes of ours used beside it. */
type Metered = LoadResult & { cpuMs: number; besideMs: number };

async function metered(server: Child<unknown>, load: () => Promise<LoadResult>, beside?: Child<unknown>): Promise<Metered> {
  const [before, besideBefore] = await Promise.all([server.cpuMs(), beside?.cpuMs() ?? 0]);
  const result = await load();
  const [after, besideAfter] = await Promise.all([server.cpuMs(), beside?.cpuMs() ?? 0]);
  return { ...result, cpuMs: after - before, besideMs: besideAfter - besideBefore };
}

function summary(results: readonly Metered[]) {
  const ok = results.reduce((sum, r) => sum + r.ok, 0);
  const answered = results.reduce((sum, r) => sum + r.ok + r.errors, 0);
  const seconds = results.reduce((sum, r) => sum + r.seconds, 0);
  const sorted = results.flatMap((r) => r.latencies).sort((x, y) => x - y);
  return {
    rps: ok / seconds,
    errors: answered - ok,
    cpuPerStart: results.reduce((sum, r) => sum + r.cpuMs, 0) / Math.max(1, answered),
    besidePerStart: results.reduce((sum, r) => sum + r.besideMs, 0) / Math.max(1, answered),
    p50: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
  };
}

const legacyHeaders = { 'mcp-protocol-version': LEGACY_VERSION };
const rpc = (method: string, params: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

/** A 2025-11-25 start: `tools/call` with `params.task`. */
export function legacyTaskStart(url: URL, call: { name: string; arguments: Record<string, unknown> }): LoadTarget {
  return { url, headers: legacyHeaders, body: rpc('tools/call', { ...call, task: { ttl: 3_600_000 } }) };
}

/** A 2026-07-28 start with the Tasks extension declared: the server makes it a task. */
export function modernTaskStart(url: URL): LoadTarget {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': TASKS_EXTENSION,
  };
  return {
    url,
    headers: { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': WAITING_RUN.name },
    body: rpc('tools/call', { ...WAITING_RUN, _meta }),
  };
}

/** A SEP-1391 start: a fresh client-chosen token each time, the capability declared in `_meta`. */
export function sepStart(url: URL): LoadTarget {
  const bodyWith = (token: string) =>
    rpc('tools/call', { ...WAITING_RUN, operation: { token }, _meta: { 'io.modelcontextprotocol/clientCapabilities': LONG_RUNNING_OPERATIONS } });
  return { url, headers: legacyHeaders, body: bodyWith('warm-up'), nextBody: () => bodyWith(randomUUID()) };
}

/**
 * The target as a principal of its own (locally, each bearer token is one): every operation a
 * start makes stays waiting, and one principal's active slots are one item that each claim
 * rewrites whole, so a run as the principal of the runs before it would measure their thousands
 * of slots (the default limit keeps a principal at 100) rather than a start.
 */
export function asNewPrincipal(target: LoadTarget): LoadTarget {
  return { ...target, headers: { ...target.headers, authorization: `Bearer bench-${randomUUID()}` } };
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

type Summary = ReturnType<typeof summary>;

const HEADER = `  ${'c'.padStart(3)}  ${'start'.padEnd(42)} ${'ours/s'.padStart(7)} ${'ref/s'.padStart(7)} ${'ratio'.padStart(6)}  ${'cpu ms ours'.padStart(11)} ${'ref'.padStart(6)} ${'ratio'.padStart(6)}  ${'p50/p95 ms ours'.padStart(16)} ${'ref'.padStart(12)}`;

function row(concurrency: number | string, label: string, a: Summary, b: Summary, note = ''): string {
  const errors = a.errors + b.errors > 0 ? `  errors: ours ${a.errors}, ref ${b.errors}` : '';
  return `  ${String(concurrency).padStart(3)}  ${label.padEnd(42)} ${a.rps.toFixed(0).padStart(7)} ${b.rps.toFixed(0).padStart(7)} ${(a.rps / b.rps).toFixed(2).padStart(6)}  ${a.cpuPerStart.toFixed(2).padStart(11)} ${b.cpuPerStart.toFixed(2).padStart(6)} ${(a.cpuPerStart / b.cpuPerStart).toFixed(2).padStart(6)}  ${`${a.p50.toFixed(1)}/${a.p95.toFixed(1)}`.padStart(16)} ${`${b.p50.toFixed(1)}/${b.p95.toFixed(1)}`.padStart(12)}${note}${errors}`;
}

/** Runs the side-by-side starts benchmark and prints two lines per concurrency and dialect: the whole process, then the MCP function. */
export async function startThroughput(options: StartThroughputOptions = {}): Promise<void> {
  const concurrencies = options.concurrencies ?? [8, 32];
  const seconds = options.seconds ?? 3;
  const rounds = options.rounds ?? 2;
  console.log(`\n== starts: async starts side by side (load average before: ${load()})`);
  const [ours, reference] = await Promise.all([
    startChild<LocalServerReady>('./local-server-process.ts', ['--starts']),
    startChild<ReferenceServerReady>('./reference-server.ts'),
  ]);
  const apart = await startChild<McpFunctionReady>('./mcp-function-process.ts', [JSON.stringify(ours.ready.endpoints)]).catch(async (error: unknown) => {
    await Promise.all([ours.close(), reference.close()]);
    throw error;
  });
  try {
    const lines = (url: URL) => [
      { label: 'tools/call + task (2025-11-25)', target: legacyTaskStart(url, WAITING_RUN) },
      { label: 'tools/call, Tasks extension (2026-07-28)', target: modernTaskStart(url) },
      { label: 'tools/call + operation (SEP-1391)', target: sepStart(url) },
    ];
    const whole = lines(new URL(ours.ready.url));
    const alone = lines(new URL(apart.ready.url));
    const referenceTarget = legacyTaskStart(new URL(reference.ready.url), { name: 'analyze_dataset', arguments: { rows: 10 } });
    for (const line of [...whole, ...alone]) await runLoad(line.target, { concurrency: 4, seconds: 1 });
    await runLoad(referenceTarget, { concurrency: 4, seconds: 1 });
    console.log(
      `Closed loop over node:http keep-alive, ${rounds} round(s) of ${seconds} s per side; reference: @modelcontextprotocol/sdk 1.x stateless server + InMemoryTaskStore creating a task per tools/call (2025-11-25, JSON). cpu/start: the server process's CPU (user + system) over the starts it answered; ours excludes dynalite's process. Each dialect's first line is the local stack's whole process (the Step Functions facade, status sync and the workers in it); "MCP function" is the same app in a process of its own calling that stack's stand-ins, its CPU alone, with the stand-ins' CPU over those starts after it.`,
    );
    console.log(HEADER);
    for (const concurrency of concurrencies) {
      for (const [index, line] of whole.entries()) {
        const mine: Metered[] = [];
        const function_: Metered[] = [];
        const theirs: Metered[] = [];
        const target = alone[index]?.target ?? line.target;
        for (let round = 0; round < rounds; round++) {
          mine.push(await metered(ours, () => runLoad(asNewPrincipal(line.target), { concurrency, seconds })));
          theirs.push(await metered(reference, () => runLoad(referenceTarget, { concurrency, seconds })));
          function_.push(await metered(apart, () => runLoad(asNewPrincipal(target), { concurrency, seconds }), ours));
        }
        const b = summary(theirs);
        const f = summary(function_);
        console.log(row(concurrency, line.label, summary(mine), b));
        console.log(row('', '  MCP function alone', f, b, `  stand-ins ${f.besidePerStart.toFixed(2)} ms/start`));
      }
    }
  } finally {
    await Promise.all([ours.close(), reference.close(), apart.close()]);
  }
  console.log(`  load average after: ${load()}`);
}
