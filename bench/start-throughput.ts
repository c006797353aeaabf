/**
 * Async starts side by side: this server (local stack in its own process, `--starts`) starting
 * a waiting `analyze_dataset` operation per request in each async dialect, and the polls
 * bench's reference (the v1 SDK's stateless server with its InMemoryTaskStore, JSON answers)
 * creating a task per `tools/call`, measured alternately in one run so that both see the same
 * load. Prints throughput, each server's CPU per start and start-to-handle latency (p50, p95),
 * with the machine's load average before and after.
 *
 * Ours does, for each start, what it does in AWS: the record's conditional put, the execution's
 * start (the Step Functions facade, in the same process, as the SDK's call), the update to
 * `working`, and the reads in between; dynalite answers in a process of its own, so its CPU is
 * not in ours. The reference keeps the task in memory and starts nothing.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { LEGACY_VERSION, MODERN_VERSION } from '../test/support/raw-mcp.ts';
import { quantile, runLoad, type LoadResult, type LoadTarget } from './http-load.ts';
import { LONG_RUNNING_OPERATIONS, TASKS_EXTENSION, WAITING_RUN, type LocalServerReady } from './local-server-process.ts';
import { startChild, type Child } from './poll-throughput.ts';
import type { ReferenceServerReady } from './reference-server.ts';

export interface StartThroughputOptions {
  /** @default [8, 32] */
  concurrencies?: readonly number[];
  /** Seconds of each segment. @default 3 */
  seconds?: number;
  /** How many times each ours/reference pair is repeated. @default 2 */
  rounds?: number;
}

type Metered = LoadResult & { cpuMs: number };

async function metered(server: Child<unknown>, load: () => Promise<LoadResult>): Promise<Metered> {
  const before = await server.cpuMs();
  const result = await load();
  return { ...result, cpuMs: (await server.cpuMs()) - before };
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

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

/** Runs the side-by-side starts benchmark and prints one line per concurrency and dialect. */
export async function startThroughput(options: StartThroughputOptions = {}): Promise<void> {
  const concurrencies = options.concurrencies ?? [8, 32];
  const seconds = options.seconds ?? 3;
  const rounds = options.rounds ?? 2;
  console.log(`\n== starts: async starts side by side (load average before: ${load()})`);
  const [ours, reference] = await Promise.all([
    startChild<LocalServerReady>('./local-server-process.ts', ['--starts']),
    startChild<ReferenceServerReady>('./reference-server.ts'),
  ]);
  try {
    const url = new URL(ours.ready.url);
    const lines = [
      { label: 'tools/call + task (2025-11-25)', target: legacyTaskStart(url, WAITING_RUN) },
      { label: 'tools/call, Tasks extension (2026-07-28)', target: modernTaskStart(url) },
      { label: 'tools/call + operation (SEP-1391)', target: sepStart(url) },
    ];
    const referenceTarget = legacyTaskStart(new URL(reference.ready.url), { name: 'analyze_dataset', arguments: { rows: 10 } });
    for (const line of lines) await runLoad(line.target, { concurrency: 4, seconds: 1 });
    await runLoad(referenceTarget, { concurrency: 4, seconds: 1 });
    console.log(
      `Closed loop over node:http keep-alive, ${rounds} round(s) of ${seconds} s per side; reference: @modelcontextprotocol/sdk 1.x stateless server + InMemoryTaskStore creating a task per tools/call (2025-11-25, JSON). cpu/start: the server process's CPU (user + system) over the starts it answered; ours excludes dynalite's process.`,
    );
    console.log(
      `  ${'c'.padStart(3)}  ${'start'.padEnd(42)} ${'ours/s'.padStart(7)} ${'ref/s'.padStart(7)} ${'ratio'.padStart(6)}  ${'cpu ms ours'.padStart(11)} ${'ref'.padStart(6)} ${'ratio'.padStart(6)}  ${'p50/p95 ms ours'.padStart(16)} ${'ref'.padStart(12)}`,
    );
    for (const concurrency of concurrencies) {
      for (const line of lines) {
        const mine: Metered[] = [];
        const theirs: Metered[] = [];
        for (let round = 0; round < rounds; round++) {
          mine.push(await metered(ours, () => runLoad(line.target, { concurrency, seconds })));
          theirs.push(await metered(reference, () => runLoad(referenceTarget, { concurrency, seconds })));
        }
        const a = summary(mine);
        const b = summary(theirs);
        const errors = a.errors + b.errors > 0 ? `  errors: ours ${a.errors}, ref ${b.errors}` : '';
        console.log(
          `  ${String(concurrency).padStart(3)}  ${line.label.padEnd(42)} ${a.rps.toFixed(0).padStart(7)} ${b.rps.toFixed(0).padStart(7)} ${(a.rps / b.rps).toFixed(2).padStart(6)}  ${a.cpuPerStart.toFixed(2).padStart(11)} ${b.cpuPerStart.toFixed(2).padStart(6)} ${(a.cpuPerStart / b.cpuPerStart).toFixed(2).padStart(6)}  ${`${a.p50.toFixed(1)}/${a.p95.toFixed(1)}`.padStart(16)} ${`${b.p50.toFixed(1)}/${b.p95.toFixed(1)}`.padStart(12)}${errors}`,
        );
      }
    }
  } finally {
    await Promise.all([ours.close(), reference.close()]);
  }
  console.log(`  load average after: ${load()}`);
}
