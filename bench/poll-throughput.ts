/**
 * Status polls side by side: this server (local stack, its own process) and the reference
 * server (bench/reference-server.ts, its own process), measured alternately in one run
 * (ours, reference, ours, reference...) so that both see the same machine load. Each line
 * pairs one of our poll requests with the reference segments run right after it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LEGACY_VERSION, MODERN_VERSION } from '../test/support/raw-mcp.ts';
import { quantile, runLoad, type LoadResult, type LoadTarget } from './http-load.ts';
import { TASKS_EXTENSION, type LocalServerReady } from './local-server-process.ts';
import type { ReferenceServerReady } from './reference-server.ts';

export interface PollThroughputOptions {
  /** @default [1, 8, 32] */
  concurrencies?: readonly number[];
  /** Seconds of each segment (one side, one request kind). @default 3 */
  seconds?: number;
  /** How many times each ours/reference pair is repeated. @default 2 */
  rounds?: number;
}

interface Line {
  label: string;
  target: LoadTarget;
}

/** Runs the side-by-side poll benchmark and prints one line per concurrency and request kind. */
export async function pollThroughput(options: PollThroughputOptions = {}): Promise<void> {
  const concurrencies = options.concurrencies ?? [1, 8, 32];
  const seconds = options.seconds ?? 3;
  const rounds = options.rounds ?? 2;
  const [ours, reference] = await Promise.all([
    startChild<LocalServerReady>('./local-server-process.ts'),
    startChild<ReferenceServerReady>('./reference-server.ts'),
  ]);
  try {
    const url = new URL(ours.ready.url);
    const lines: Line[] = [
      { label: 'tasks/get (2025-11-25 era)', target: legacyTarget(url, 'tasks/get', { taskId: ours.ready.legacyTaskId }) },
      { label: 'tasks/get (2026-07-28 era, Tasks extension)', target: modernTasksGet(url, ours.ready.modernTaskId) },
      { label: 'tools/async/status (SEP-1391)', target: legacyTarget(url, 'tools/async/status', { token: ours.ready.token }) },
    ];
    const referenceTarget = legacyTarget(new URL(reference.ready.url), 'tasks/get', { taskId: reference.ready.taskId });

    // Warm-up: JIT, schema compilation and connections, on both sides, not counted.
    for (const line of lines) await runLoad(line.target, { concurrency: 8, seconds: 1 });
    await runLoad(referenceTarget, { concurrency: 8, seconds: 1 });

    console.log(
      `Poll throughput: closed loop over node:http keep-alive (maxSockets = concurrency), ${rounds} round(s) of ${seconds} s per side, ours and reference alternately.`,
    );
    console.log(
      '  reference: @modelcontextprotocol/sdk 1.x stateless server + InMemoryTaskStore, tasks/get (2025-11-25). It has no 2026-07-28 wire and no SEP-1391, so every line compares against that one request.',
    );
    console.log(
      "  cpu/req: the server process's CPU time (user + system) over the requests it answered in the segment; ours excludes dynalite, which runs in its own process.",
    );
    console.log(
      `  ${'c'.padStart(3)}  ${'request'.padEnd(44)} ${'ours rps'.padStart(8)} ${'p50/p95/p99 ms'.padStart(17)}  ${'ref rps'.padStart(8)} ${'p50/p95/p99 ms'.padStart(17)}  ours/ref ${'cpu/req ours ref'.padStart(17)}  cpu ours/ref`,
    );
    for (const concurrency of concurrencies) {
      const ourResults = lines.map(() => [] as MeteredResult[]);
      const referenceResults = lines.map(() => [] as MeteredResult[]);
      for (let round = 0; round < rounds; round++) {
        for (const [index, line] of lines.entries()) {
          ourResults[index]?.push(await withCpu(ours, () => runLoad(line.target, { concurrency, seconds })));
          referenceResults[index]?.push(await withCpu(reference, () => runLoad(referenceTarget, { concurrency, seconds })));
        }
      }
      for (const [index, line] of lines.entries()) {
        const a = merge(ourResults[index] ?? []);
        const b = merge(referenceResults[index] ?? []);
        const errors = a.errors + b.errors > 0 ? `  errors: ours ${a.errors}, ref ${b.errors}` : '';
        const cpu = `${a.cpuPerRequest.toFixed(2)} ${b.cpuPerRequest.toFixed(2)} ms`;
        console.log(
          `  ${String(concurrency).padStart(3)}  ${line.label.padEnd(44)} ${a.rps.toFixed(0).padStart(8)} ${a.percentiles.padStart(17)}  ${b.rps.toFixed(0).padStart(8)} ${b.percentiles.padStart(17)}  ${(a.rps / b.rps).toFixed(2).padStart(8)} ${cpu.padStart(17)}  ${(a.cpuPerRequest / b.cpuPerRequest).toFixed(2).padStart(11)}${errors}`,
        );
      }
    }
  } finally {
    await Promise.all([ours.close(), reference.close()]);
  }
}

/** A load segment with the server process's CPU time over it. */
type MeteredResult = LoadResult & { cpuMs: number };

async function withCpu(server: Child<unknown>, load: () => Promise<LoadResult>): Promise<MeteredResult> {
  const before = await server.cpuMs();
  const result = await load();
  return { ...result, cpuMs: (await server.cpuMs()) - before };
}

function merge(results: readonly MeteredResult[]): { rps: number; percentiles: string; errors: number; cpuPerRequest: number } {
  const ok = results.reduce((sum, r) => sum + r.ok, 0);
  const cpuMs = results.reduce((sum, r) => sum + r.cpuMs, 0);
  const seconds = results.reduce((sum, r) => sum + r.seconds, 0);
  const sorted = results.flatMap((r) => r.latencies).sort((x, y) => x - y);
  const percentiles = [0.5, 0.95, 0.99].map((q) => quantile(sorted, q).toFixed(1)).join('/');
  const answered = results.reduce((sum, r) => sum + r.ok + r.errors, 0);
  return { rps: ok / seconds, percentiles, errors: results.reduce((sum, r) => sum + r.errors, 0), cpuPerRequest: cpuMs / Math.max(1, answered) };
}

/** A 2025-era request: the protocol version header, no session (both servers are stateless). */
function legacyTarget(url: URL, method: string, params: Record<string, unknown>): LoadTarget {
  return { url, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), headers: { 'mcp-protocol-version': LEGACY_VERSION } };
}

/** A 2026-07-28 `tasks/get`: the per-request `_meta` envelope and the standard headers. */
function modernTasksGet(url: URL, taskId: string): LoadTarget {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': TASKS_EXTENSION,
  };
  return {
    url,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId, _meta } }),
    headers: { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tasks/get', 'mcp-name': taskId },
  };
}

interface Child<T> {
  ready: T;
  /** The child's CPU time so far, user and system, ms. */
  cpuMs(): Promise<number>;
  close(): Promise<void>;
}

/** Forks a bench server module (with this process's loader flags) and waits for its ready message. */
async function startChild<T>(relative: string): Promise<Child<T>> {
  // BENCH_CPU_PROF=DIR: each server writes a CPU profile there when it closes (npx tsx bench/cpu-profile-summary.ts FILE).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child: ChildProcess = fork(fileURLToPath(new URL(relative, import.meta.url)), [], {
    execArgv: [...process.execArgv, ...profile],
    // Their log lines are not bench output; their errors are.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<T>((resolve, reject) => {
    child.once('message', (message) => resolve(message as T));
    child.once('exit', (code, signal) => reject(new Error(`${relative} exited before it was ready (${signal ?? `code ${code}`})`)));
    child.once('error', reject);
  });
  return {
    ready,
    cpuMs: () =>
      new Promise<number>((resolve) => {
        const onMessage = (message: unknown) => {
          const cpu = (message as { cpuMs?: number } | null)?.cpuMs;
          if (typeof cpu !== 'number') return;
          child.off('message', onMessage);
          resolve(cpu);
        };
        child.on('message', onMessage);
        child.send({ cpu: true });
      }),
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ close: true });
      // A process writing its CPU profile at exit takes seconds more: killed sooner, it leaves a truncated file.
      const killer = setTimeout(() => child.kill('SIGKILL'), process.env.BENCH_CPU_PROF ? 60_000 : 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}
