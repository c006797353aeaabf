/**
 * The soak: many operations in flight on the local stack, each polled at its poll
 * interval, for a few minutes. Each minute it prints the memory of the server process and
 * of the database process, operations in flight, and the latency of that minute's polls;
 * at the start it prints how much memory each waiting operation takes. It asserts nothing.
 *
 *   npx tsx bench/soak.ts                       10,000 operations, 3 minutes
 *   BENCH_SOAK_OPS=3000 BENCH_SOAK_MINUTES=1 npx tsx bench/soak.ts
 */
import { Agent, request } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { startLocalStack } from '../local/local-stack.ts';

export interface SoakOptions {
  /** Operations started and kept in flight. @default BENCH_SOAK_OPS or 10,000 */
  operations?: number;
  /** How long to poll them, after they have all started. @default BENCH_SOAK_MINUTES or 3 */
  minutes?: number;
  /** Requests in flight while starting and while polling. @default 32 */
  concurrency?: number;
  /** Operations per principal (each principal is a bearer token locally). @default 100 */
  perPrincipal?: number;
  /** Where lines go. @default console.log */
  print?: (line: string) => void;
}

/** Memory of both processes at one moment, in bytes. */
export interface MemorySample {
  serverRss: number;
  serverHeapUsed: number;
  /** 0 when dynalite's process cannot be found (not Linux). */
  dbRss: number;
}

/** One minute of polling. */
export interface SoakMinute extends MemorySample {
  minute: number;
  inFlight: number;
  polls: number;
  errors: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** How late the latest poll of the minute ran after it was due: whether the pollers keep up. */
  maxLateMs: number;
}

export interface SoakReport {
  operations: number;
  idle: MemorySample;
  loaded: MemorySample;
  /** Growth from idle to all operations waiting, per operation, after a full GC in the server. */
  perOperation: { serverRss: number; serverHeapUsed: number; dbRss: number };
  minutes: SoakMinute[];
  /** After the polling, after a full GC in the server: what stayed. */
  after: MemorySample;
}

const LEGACY_VERSION = '2025-11-25';
const TERMINAL = new Set(['completed', 'failed', 'canceled', 'unknown']);

/** Starts the stack, fills it with waiting operations, polls them, prints figures. */
export async function runSoak(options: SoakOptions = {}): Promise<SoakReport> {
  const operations = options.operations ?? Number(process.env.BENCH_SOAK_OPS ?? 10_000);
  const minutes = options.minutes ?? Number(process.env.BENCH_SOAK_MINUTES ?? 3);
  const concurrency = options.concurrency ?? 32;
  const perPrincipal = options.perPrincipal ?? 100;
  const print = options.print ?? ((line: string) => console.log(line));
  const collect = garbageCollector();

  const stack = await startLocalStack({
    toolsDir: 'state-machines',
    port: 0,
    // Many users, as in production; none of them may be refused by the per-principal limit.
    limits: { ...DEFAULT_LIMITS, maxActiveOperations: Math.max(DEFAULT_LIMITS.maxActiveOperations, perPrincipal) + 10 },
  });
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const rpc = rpcClient(stack.url, agent);
  try {
    for (let i = 0; i < 10; i++) await rpc('tools/list', {});
    const idle = await sampleAfterGc(collect);
    print(`soak: ${operations} operations, ${minutes} min, ${concurrency} in flight${collect ? '' : ' (no forced GC: figures include garbage)'}`);
    print(`idle:    ${describeSample(idle)}`);

    const interval = new Map<string, number>();
    const principal = (token: string) => `soak-user-${Math.floor(Number(token.slice('soak-'.length)) / perPrincipal)}`;
    const status = new Map<string, string>();
    let next = 0;
    let done = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < operations) {
          const token = `soak-${next++}`;
          const result = await rpc(
            'tools/call',
            { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 86_400 }, operation: { token } },
            principal(token),
          );
          const operation = (result as { operation?: { status?: string; pollFrequency?: number } }).operation;
          interval.set(token, (operation?.pollFrequency ?? 2) * 1000);
          status.set(token, operation?.status ?? 'working');
          if (++done % 1000 === 0) print(`  started ${done} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
        }
      }),
    );
    await stack.drainEvents();
    const loaded = await sampleAfterGc(collect);
    const perOperation = {
      serverRss: (loaded.serverRss - idle.serverRss) / operations,
      serverHeapUsed: (loaded.serverHeapUsed - idle.serverHeapUsed) / operations,
      dbRss: (loaded.dbRss - idle.dbRss) / operations,
    };
    print(`started ${operations} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    print(`loaded:  ${describeSample(loaded)}`);
    print(
      `per waiting operation: server RSS ${kib(perOperation.serverRss)} KiB (heap ${kib(perOperation.serverHeapUsed)} KiB), ` +
        `database RSS ${kib(perOperation.dbRss)} KiB, together ${kib(perOperation.serverRss + perOperation.dbRss)} KiB`,
    );

    const report: SoakReport = { operations, idle, loaded, perOperation, minutes: [], after: idle };
    const schedule = new DueQueue();
    // Spread over one interval, as clients that started at different times would be.
    for (const [token, ms] of interval) schedule.add(token, performance.now() + Math.random() * ms);
    const end = performance.now() + minutes * 60_000;
    let minute = { latencies: [] as number[], errors: 0, maxLate: 0 };
    let minuteEnd = performance.now() + 60_000;
    let minuteNumber = 0;
    const closeMinute = (last = false) => {
      const sample = sampleNow();
      const sorted = minute.latencies.sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      const inFlight = [...status.values()].filter((s) => !TERMINAL.has(s)).length;
      const row: SoakMinute = {
        minute: ++minuteNumber,
        ...sample,
        inFlight,
        polls: sorted.length,
        errors: minute.errors,
        p50Ms: at(0.5),
        p95Ms: at(0.95),
        p99Ms: at(0.99),
        maxLateMs: minute.maxLate,
      };
      report.minutes.push(row);
      print(
        `${last ? `last ${((performance.now() - minuteEnd + 60_000) / 1000).toFixed(0)} s` : `minute ${row.minute}`}: ${describeSample(sample)} in flight ${inFlight} polls ${row.polls} (${(row.polls / 60).toFixed(0)}/s, ${row.errors} errors) ` +
          `p50 ${row.p50Ms.toFixed(1)} ms p95 ${row.p95Ms.toFixed(1)} ms p99 ${row.p99Ms.toFixed(1)} ms, up to ${(row.maxLateMs / 1000).toFixed(1)} s late`,
      );
      minute = { latencies: [], errors: 0, maxLate: 0 };
    };
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (;;) {
          const now = performance.now();
          if (now >= end) return;
          const due = schedule.peek();
          if (!due || due.at > now) {
            await sleep(Math.min(50, Math.max(1, (due?.at ?? now + 50) - now)));
            continue;
          }
          schedule.pop();
          minute.maxLate = Math.max(minute.maxLate, now - due.at);
          const t0 = performance.now();
          try {
            const result = (await rpc('tools/async/status', { token: due.token }, principal(due.token))) as { status?: string };
            minute.latencies.push(performance.now() - t0);
            if (result.status) status.set(due.token, result.status);
          } catch {
            minute.errors++;
          }
          if (!TERMINAL.has(status.get(due.token) ?? '')) schedule.add(due.token, performance.now() + (interval.get(due.token) ?? 2000));
          if (performance.now() >= minuteEnd) {
            minuteEnd += 60_000;
            closeMinute();
          }
        }
      }),
    );
    if (minute.latencies.length > 0 || minute.errors > 0) closeMinute(true);
    report.after = await sampleAfterGc(collect);
    print(`after polling, after GC: ${describeSample(report.after)}`);
    return report;
  } finally {
    agent.destroy();
    await stack.close();
  }
}

/** The collector, when this process may call it (it is only asked for between phases). */
function garbageCollector(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

async function sampleAfterGc(collect: (() => void) | undefined): Promise<MemorySample> {
  // Let timers and sockets settle first; the database process collects on its own.
  await sleep(1000);
  for (let i = 0; i < 3 && collect; i++) {
    collect();
    await sleep(50);
  }
  return sampleNow();
}

function sampleNow(): MemorySample {
  const { rss, heapUsed } = process.memoryUsage();
  return { serverRss: rss, serverHeapUsed: heapUsed, dbRss: databaseRss() };
}

/** RSS of the dynalite processes this process started (Linux /proc; 0 elsewhere). */
function databaseRss(): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== process.pid || !readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('dynalite-process')) continue;
      const kb = readFileSync(`/proc/${entry}/status`, 'utf8').match(/VmRSS:\s+(\d+)\s+kB/)?.[1];
      total += Number(kb ?? 0) * 1024;
    } catch {
      // The process ended while being read.
    }
  }
  return total;
}

function describeSample(sample: MemorySample): string {
  return `server RSS ${mib(sample.serverRss)} MiB heap ${mib(sample.serverHeapUsed)} MiB, database RSS ${mib(sample.dbRss)} MiB`;
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const kib = (bytes: number) => (bytes / 1024).toFixed(1);

/** Posts legacy-era JSON-RPC requests over one keep-alive agent; resolves with the result. */
function rpcClient(url: URL, agent: Agent) {
  let id = 0;
  return (method: string, params: Record<string, unknown>, bearer?: string): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params });
      const req = request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': LEGACY_VERSION,
            'content-length': Buffer.byteLength(body),
            ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => {
            const message = lastMessage(text);
            if (message?.error) reject(new Error(`${method}: ${message.error.message}`));
            else if (message && 'result' in message) resolve(message.result);
            else reject(new Error(`${method}: no JSON-RPC response (HTTP ${response.statusCode})`));
          });
          response.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

/** The response in a JSON body or the last one in an SSE stream. */
function lastMessage(text: string): { result?: unknown; error?: { message: string } } | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) return JSON.parse(trimmed);
  const messages = trimmed
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)) as { result?: unknown; error?: { message: string } })
    .filter((message) => 'result' in message || 'error' in message);
  return messages.at(-1);
}

/** Tokens by the time their next poll is due (a binary min-heap). */
class DueQueue {
  private readonly heap: Array<{ token: string; at: number }> = [];

  add(token: string, at: number): void {
    const heap = this.heap;
    heap.push({ token, at });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.dueAt(parent) <= this.dueAt(i)) break;
      this.swap(parent, i);
      i = parent;
    }
  }

  peek(): { token: string; at: number } | undefined {
    return this.heap[0];
  }

  pop(): { token: string; at: number } | undefined {
    const heap = this.heap;
    const first = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let least = i;
        if (left < heap.length && this.dueAt(left) < this.dueAt(least)) least = left;
        if (right < heap.length && this.dueAt(right) < this.dueAt(least)) least = right;
        if (least === i) break;
        this.swap(least, i);
        i = least;
      }
    }
    return first;
  }

  private dueAt(i: number): number {
    return this.heap[i]?.at ?? Number.POSITIVE_INFINITY;
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i];
    const b = this.heap[j];
    if (a === undefined || b === undefined) return;
    this.heap[i] = b;
    this.heap[j] = a;
  }
}

// Runnable alone; imported by `npm run bench` it only defines runSoak.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runSoak();
