/**
 * Status polls side by side: this server (local stack, its own process) and two reference
 * servers (bench/reference-server.ts answering JSON, and the same answering SSE, each its own
 * process), measured alternately in one run (ours, json, sse, ours, json, sse...) so that all
 * see the same machine load. Each line pairs one of our poll requests with the reference
 * segments run right after it.
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
  // Two references, each its own process: the same v1 SDK server answering JSON, and answering over SSE.
  const [ours, json, sse] = await Promise.all([
    startChild<LocalServerReady>('./local-server-process.ts'),
    startChild<ReferenceServerReady>('./reference-server.ts'),
    startChild<ReferenceServerReady>('./reference-server.ts', ['--sse']),
  ]);
  const references = [json, sse];
  try {
    const url = new URL(ours.ready.url);
    const lines: Line[] = [
      { label: 'tasks/get (2025-11-25 era)', target: legacyTarget(url, 'tasks/get', { taskId: ours.ready.legacyTaskId }) },
      { label: 'tasks/get (2026-07-28 era, Tasks extension)', target: modernTasksGet(url, ours.ready.modernTaskId) },
      { label: 'tools/async/status (SEP-1391)', target: legacyTarget(url, 'tools/async/status', { token: ours.ready.token }) },
    ];
    const referenceTargets = references.map((r) => legacyTarget(new URL(r.ready.url), 'tasks/get', { taskId: r.ready.taskId }));

    // Warm-up: JIT, schema compilation and connections, on every side, not counted.
    for (const line of lines) await runLoad(line.target, { concurrency: 8, seconds: 1 });
    for (const target of referenceTargets) await runLoad(target, { concurrency: 8, seconds: 1 });

    console.log(
      `Poll throughput: closed loop over node:http keep-alive (maxSockets = concurrency), ${rounds} round(s) of ${seconds} s per side, ours and each reference alternately.`,
    );
    console.log(
      '  references: @modelcontextprotocol/sdk 1.x stateless server + InMemoryTaskStore, tasks/get (2025-11-25), each in its own process: "json" answers one JSON object (enableJsonResponse), "sse" an SSE stream (the transport\'s default). Neither speaks 2026-07-28 or SEP-1391, so every line compares against that one request.',
    );
    console.log(
      "  cpu/req: each server process's CPU time (user + system) over the requests it answered in the segment; ours excludes dynalite, which runs in its own process.",
    );
    console.log(
      `  ${'c'.padStart(3)}  ${'request'.padEnd(44)} ${'ours rps'.padStart(8)} ${'p50/p95/p99 ms'.padStart(17)}  ${'json rps'.padStart(8)} ${'sse rps'.padStart(8)}  ${'/json'.padStart(5)} ${'/sse'.padStart(5)}  ${'cpu/req ours json sse'.padStart(21)}  ${'/json'.padStart(5)} ${'/sse'.padStart(5)}`,
    );
    for (const concurrency of concurrencies) {
      const ourResults = lines.map(() => [] as MeteredResult[]);
      const referenceResults = lines.map(() => references.map(() => [] as MeteredResult[]));
      for (let round = 0; round < rounds; round++) {
        for (const [index, line] of lines.entries()) {
          ourResults[index]?.push(await withCpu(ours, () => runLoad(line.target, { concurrency, seconds })));
          for (const [r, reference] of references.entries()) {
            const target = referenceTargets[r];
            if (target) referenceResults[index]?.[r]?.push(await withCpu(reference, () => runLoad(target, { concurrency, seconds })));
          }
        }
      }
      for (const [index, line] of lines.entries()) {
        const a = merge(ourResults[index] ?? []);
        const [b, c] = (referenceResults[index] ?? []).map(merge);
        if (!b || !c) continue;
        const errors = a.errors + b.errors + c.errors > 0 ? `  errors: ours ${a.errors}, json ${b.errors}, sse ${c.errors}` : '';
        const ratio = (x: number, y: number) => (x / y).toFixed(2).padStart(5);
        const cpu = `${a.cpuPerRequest.toFixed(2)} ${b.cpuPerRequest.toFixed(2)} ${c.cpuPerRequest.toFixed(2)} ms`;
        console.log(
          `  ${String(concurrency).padStart(3)}  ${line.label.padEnd(44)} ${a.rps.toFixed(0).padStart(8)} ${a.percentiles.padStart(17)}  ${b.rps.toFixed(0).padStart(8)} ${c.rps.toFixed(0).padStart(8)}  ${ratio(a.rps, b.rps)} ${ratio(a.rps, c.rps)}  ${cpu.padStart(21)}  ${ratio(a.cpuPerRequest, b.cpuPerRequest)} ${ratio(a.cpuPerRequest, c.cpuPerRequest)}${errors}`,
        );
      }
    }
  } finally {
    await Promise.all([ours.close(), ...references.map((r) => r.close())]);
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
export function legacyTarget(url: URL, method: string, params: Record<string, unknown>): LoadTarget {
  return { url, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), headers: { 'mcp-protocol-version': LEGACY_VERSION } };
}

/** A 2026-07-28 `tasks/get`: the per-request `_meta` envelope and the standard headers. */
export function modernTasksGet(url: URL, taskId: string): LoadTarget {
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

export interface Child<T> {
  ready: T;
  /** The child's CPU time so far, user and system, ms. */
  cpuMs(): Promise<number>;
  /** Milliseconds since the child started (its `performance.now()`), the clock its CPU profile keeps. */
  uptimeMs(): Promise<number>;
  close(): Promise<void>;
}

/** Forks a bench server module (with this process's loader flags) and waits for its ready message. */
export async function startChild<T>(relative: string, args: readonly string[] = []): Promise<Child<T>> {
  // BENCH_CPU_PROF=DIR: each server writes a CPU profile there when it closes (npx tsx bench/cpu-profile-summary.ts FILE).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child: ChildProcess = fork(fileURLToPath(new URL(relative, import.meta.url)), [...args], {
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
  const clocks = () =>
    new Promise<{ cpuMs: number; uptimeMs: number }>((resolve) => {
      const onMessage = (message: unknown) => {
        const { cpuMs, uptimeMs } = (message as { cpuMs?: number; uptimeMs?: number } | null) ?? {};
        if (typeof cpuMs !== 'number') return;
        child.off('message', onMessage);
        resolve({ cpuMs, uptimeMs: uptimeMs ?? Number.NaN });
      };
      child.on('message', onMessage);
      child.send({ cpu: true });
    });
  return {
    ready,
    cpuMs: async () => (await clocks()).cpuMs,
    uptimeMs: async () => (await clocks()).uptimeMs,
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
