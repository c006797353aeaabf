/**
 * Status polls side by side: this server (local stack, its own process) and two reference
 * servers (bench/reference-server.ts answering JSON, and the same answering SSE, each its own
 * process), measured alternately in one run (ours, json, sse, ours, json, sse...) so that all
 * see the same machine load. Each line pairs one of our poll requests with the reference
 * segments run right after it. A fourth process is this server again with tracing on
 * (OpenTelemetry's standard environment, exporting OTLP to a receiver in this process on
 * 127.0.0.1), measured in the same alternation, so tracing off and on are side by side.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  const sink = await startOtlpSink();
  const [ours, traced, json, sse] = await Promise.all([
    // Off even when the bench itself runs with OpenTelemetry's environment set.
    startChild<LocalServerReady>('./local-server-process.ts', [], { OTEL_SDK_DISABLED: 'true' }),
    startChild<LocalServerReady>('./local-server-process.ts', [], {
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_SERVICE_NAME: 'async-mcp-bench',
    }),
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
    const tracedUrl = new URL(traced.ready.url);
    const tracedLines: LoadTarget[] = [
      legacyTarget(tracedUrl, 'tasks/get', { taskId: traced.ready.legacyTaskId }),
      modernTasksGet(tracedUrl, traced.ready.modernTaskId),
      legacyTarget(tracedUrl, 'tools/async/status', { token: traced.ready.token }),
    ];
    const referenceTargets = references.map((r) => legacyTarget(new URL(r.ready.url), 'tasks/get', { taskId: r.ready.taskId }));

    // Warm-up: JIT, schema compilation and connections, on every side, not counted.
    for (const line of lines) await runLoad(line.target, { concurrency: 8, seconds: 1 });
    for (const target of tracedLines) await runLoad(target, { concurrency: 8, seconds: 1 });
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
      '  traced: this server again with tracing on (OTEL_EXPORTER_OTLP_ENDPOINT, http/protobuf, to a loopback receiver in the bench process), each poll a SERVER span with a link to its operation; /off is traced over ours (tracing off).',
    );
    console.log(
      `  ${'c'.padStart(3)}  ${'request'.padEnd(44)} ${'ours rps'.padStart(8)} ${'p50/p95/p99 ms'.padStart(17)}  ${'traced rps'.padStart(10)} ${'p50/p95/p99 ms'.padStart(17)} ${'/off'.padStart(5)}  ${'json rps'.padStart(8)} ${'sse rps'.padStart(8)}  ${'/json'.padStart(5)} ${'/sse'.padStart(5)}  ${'cpu/req ours traced json sse'.padStart(28)}  ${'/json'.padStart(5)} ${'/sse'.padStart(5)}`,
    );
    for (const concurrency of concurrencies) {
      const ourResults = lines.map(() => [] as MeteredResult[]);
      const tracedResults = lines.map(() => [] as MeteredResult[]);
      const referenceResults = lines.map(() => references.map(() => [] as MeteredResult[]));
      for (let round = 0; round < rounds; round++) {
        for (const [index, line] of lines.entries()) {
          ourResults[index]?.push(await withCpu(ours, () => runLoad(line.target, { concurrency, seconds })));
          const tracedTarget = tracedLines[index];
          if (tracedTarget) tracedResults[index]?.push(await withCpu(traced, () => runLoad(tracedTarget, { concurrency, seconds })));
          for (const [r, reference] of references.entries()) {
            const target = referenceTargets[r];
            if (target) referenceResults[index]?.[r]?.push(await withCpu(reference, () => runLoad(target, { concurrency, seconds })));
          }
        }
      }
      for (const [index, line] of lines.entries()) {
        const a = merge(ourResults[index] ?? []);
        const t = merge(tracedResults[index] ?? []);
        const [b, c] = (referenceResults[index] ?? []).map(merge);
        if (!b || !c) continue;
        const errors = a.errors + t.errors + b.errors + c.errors > 0 ? `  errors: ours ${a.errors}, traced ${t.errors}, json ${b.errors}, sse ${c.errors}` : '';
        const ratio = (x: number, y: number) => (x / y).toFixed(2).padStart(5);
        const cpu = `${a.cpuPerRequest.toFixed(2)} ${t.cpuPerRequest.toFixed(2)} ${b.cpuPerRequest.toFixed(2)} ${c.cpuPerRequest.toFixed(2)} ms`;
        console.log(
          `  ${String(concurrency).padStart(3)}  ${line.label.padEnd(44)} ${a.rps.toFixed(0).padStart(8)} ${a.percentiles.padStart(17)}  ${t.rps.toFixed(0).padStart(10)} ${t.percentiles.padStart(17)} ${ratio(t.rps, a.rps)}  ${b.rps.toFixed(0).padStart(8)} ${c.rps.toFixed(0).padStart(8)}  ${ratio(a.rps, b.rps)} ${ratio(a.rps, c.rps)}  ${cpu.padStart(28)}  ${ratio(a.cpuPerRequest, b.cpuPerRequest)} ${ratio(a.cpuPerRequest, c.cpuPerRequest)}${errors}`,
        );
      }
    }
  } finally {
    await Promise.all([ours.close(), traced.close(), ...references.map((r) => r.close())]);
    await sink.close();
    if (sink.requests() > 0) console.log(`  traced: the receiver took ${sink.requests()} OTLP exports (${(sink.bytes() / 1024).toFixed(0)} KiB).`);
  }
}

/** An OTLP/HTTP trace receiver on 127.0.0.1 that takes every export and keeps only its size. */
async function startOtlpSink(): Promise<{ url: string; requests: () => number; bytes: () => number; close: () => Promise<void> }> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      requests++;
      // An empty ExportTraceServiceResponse: full success.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    bytes: () => bytes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
export async function startChild<T>(relative: string, args: readonly string[] = [], env: Record<string, string> = {}): Promise<Child<T>> {
  // BENCH_CPU_PROF=DIR: each server writes a CPU profile there when it closes (npx tsx bench/cpu-profile-summary.ts FILE).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child: ChildProcess = fork(fileURLToPath(new URL(relative, import.meta.url)), [...args], {
    execArgv: [...process.execArgv, ...profile],
    env: { ...process.env, ...env },
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
      // A local stack holding the starts bench's waiting runs takes seconds to close: killed sooner, it leaves its temp directory.
      const killer = setTimeout(() => child.kill('SIGKILL'), process.env.BENCH_CPU_PROF ? 60_000 : 30_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
