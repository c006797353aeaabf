/**
 * `npm run bench`: on the local stack, status-poll throughput side by side with a reference
 * server, latency and memory of the hot paths, AWS calls per operation for each dialect, the
 * cost of an operation in AWS, DescribeExecution calls per hour of reconciling polled long operations, the Lambda bundles' size and cold import time, the MCP function's Init Duration as deployed locally, start-up time of `npm start` beside `--as-deployed`, MCP Events' delivery latency and cost per subscriber-hour, a soak, the Events soak under injected faults (bench/events-soak.ts), and what a new project installs (bench/package-install.ts).
 * Prints figures; it asserts nothing (machines are shared and noisy: compare runs, not
 * thresholds).
 *
 *   npm run bench                       everything, the soak included (minutes)
 *   npm run bench -- --no-soak          everything but the soak (also BENCH_SOAK=0)
 *   npm run bench -- --only=polls,cost  some sections: polls, hot-paths, calls, history, cost, durable, cadence, listen, events, bundle, init, startup, soak, events-soak, package, starts
 *
 * BENCH_SECONDS (3) and BENCH_AB_ROUNDS (2) size the side-by-side segments; BENCH_ROUNDS (200)
 * the hot-path samples; BENCH_IMPORT_RUNS (9) the cold imports, which BENCH_NODE (a node
 * binary, e.g. Node 24, the functions' runtime) runs instead of this Node; BENCH_INIT_RUNS (5)
 * the as-deployed starts of `init`; BENCH_HISTORY_SIZES (10,1000,10000) the stored operations of `history`.
 */
import { existsSync } from 'node:fs';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { startLocalStack } from '../local/local-stack.ts';
import { announceNodeVersion } from '../local/node-version-notice.ts';
import { legacyRequest } from '../test/support/raw-mcp.ts';
import { awsCallsPerOperation, dialects, untilDone } from './aws-calls.ts';
import { lambdaBundles } from './lambda-bundle.ts';
import { startMeasuredStack } from './measured-stack.ts';
import { costOfOperation, perThousand, printCost, printDynamoDbPerOperation } from './operation-cost.ts';
import { pollThroughput } from './poll-throughput.ts';
import { printReconcileCadence } from './reconcile-cadence.ts';
import { printStartupTime } from './startup-time.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const SECTIONS = [
  'polls',
  'hot-paths',
  'calls',
  'history',
  'cost',
  'durable',
  'cadence',
  'listen',
  'events',
  'bundle',
  'init',
  'startup',
  'soak',
  'events-soak',
  'package',
  'starts',
] as const;
type Section = (typeof SECTIONS)[number];

function summarize(name: string, samples: number[]): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN).toFixed(2);
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  console.log(`${name.padEnd(44)} n=${String(samples.length).padEnd(5)} mean=${mean.toFixed(2)}ms p50=${at(0.5)}ms p95=${at(0.95)}ms p99=${at(0.99)}ms`);
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Latency of the hot paths, one request at a time, and the process's memory with ROUNDS operations waiting. */
async function endToEnd(): Promise<void> {
  // One principal keeps ROUNDS operations running at once, past the default per-principal limit.
  const stack = await startLocalStack({
    toolsDir: 'state-machines',
    port: 0,
    limits: { ...DEFAULT_LIMITS, maxActiveOperations: ROUNDS + 10 },
  });
  try {
    // Warm-up: first calls compile schemas and open connections.
    for (let i = 0; i < 10; i++) await legacyRequest(stack.url, 'tools/list');

    const list: number[] = [];
    for (let i = 0; i < ROUNDS; i++) list.push(await time(() => legacyRequest(stack.url, 'tools/list')));
    summarize('tools/list', list);

    const sync: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      sync.push(await time(() => legacyRequest(stack.url, 'tools/call', { name: 'quick_calculation', arguments: { a: i, b: 3, op: 'mul' } })));
    }
    summarize('tools/call quick_calculation (sync, EXPRESS)', sync);

    const starts: number[] = [];
    const tokens: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const token = `bench-${i}`;
      tokens.push(token);
      starts.push(
        await time(() =>
          legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 3600 }, operation: { token } }),
        ),
      );
    }
    summarize('tools/call analyze_dataset start (SEP-1391)', starts);

    const polls: number[] = [];
    for (let i = 0; i < ROUNDS * 2; i++) {
      polls.push(await time(() => legacyRequest(stack.url, 'tools/async/status', { token: tokens[i % tokens.length] })));
    }
    summarize('tools/async/status (one record read)', polls);

    const concurrency = 20;
    const wall = await time(() =>
      Promise.all(
        Array.from({ length: concurrency }, (_, worker) =>
          (async () => {
            for (let i = 0; i < ROUNDS / concurrency; i++) {
              await legacyRequest(stack.url, 'tools/async/status', { token: tokens[(worker * 7 + i) % tokens.length] });
            }
          })(),
        ),
      ),
    );
    console.log(`${'tools/async/status throughput, 20 in flight'.padEnd(44)} ${(ROUNDS / (wall / 1000)).toFixed(0)} req/s`);

    const memory = process.memoryUsage();
    console.log(
      `${'process memory after the runs'.padEnd(44)} rss=${(memory.rss / 2 ** 20).toFixed(0)} MiB heapUsed=${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB (${ROUNDS} live operations)`,
    );
  } finally {
    await stack.close();
  }
}

/** The AWS calls table and the cost of an operation, on one instrumented stack. */
async function callsAndCost(sections: ReadonlySet<Section>): Promise<void> {
  const measured = await startMeasuredStack();
  try {
    const steps = dialects(measured.stack.url);
    if (sections.has('calls')) {
      await awsCallsPerOperation(measured);
      console.log();
    }
    if (sections.has('cost')) {
      const wait = (dialect: (typeof steps)[number]) => (id: string) => untilDone(measured, dialect, id);
      // The current revision's dialect in full; the others as totals.
      const modern = steps.find((d) => d.name.startsWith('tasks 2026'));
      if (!modern) throw new Error('no tasks 2026 dialect to cost');
      const others = steps.filter((d) => d !== modern);
      printCost(modern.name, modern.result !== undefined, await costOfOperation(measured, modern, wait(modern)));
      console.log();
      await printDynamoDbPerOperation(measured, modern, wait(modern));
      console.log();
      for (const dialect of others) {
        try {
          const total = perThousand(await costOfOperation(measured, dialect, wait(dialect)));
          console.log(`  ${`total, ${dialect.name}`.padEnd(44)} ${''.padEnd(56)} $${total.toFixed(4)}`);
        } catch (error) {
          // One dialect's failure should not cost the sections after it.
          console.log(`  ${`total, ${dialect.name}`.padEnd(44)} not measured: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
  } finally {
    await measured.close();
  }
}

/** The soak lives in its own module; an older tree without it skips the section. */
async function soak(): Promise<void> {
  const module = new URL('./soak.ts', import.meta.url);
  if (!existsSync(module)) {
    console.log('soak: bench/soak.ts is not there; skipped');
    return;
  }
  const { runSoak } = (await import(module.href)) as { runSoak: () => Promise<unknown> };
  await runSoak();
}

function selectedSections(args: readonly string[]): Set<Section> {
  const only = args.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
  const chosen = new Set<Section>(only ? (only.split(',').filter((name) => (SECTIONS as readonly string[]).includes(name)) as Section[]) : SECTIONS);
  if (args.includes('--no-soak') || process.env.BENCH_SOAK === '0') {
    chosen.delete('soak');
    chosen.delete('events-soak');
  }
  return chosen;
}

const sections = selectedSections(process.argv.slice(2));
console.log(`async-mcp benchmarks (node ${process.version}; sections: ${[...sections].join(', ')})`);
// On Node 20, one line instead of the AWS SDK's ten-line warning from this process and each server it forks.
announceNodeVersion();
console.log();
if (sections.has('polls')) {
  // BENCH_POLL_CONCURRENCY=32 (or 8,32): only those numbers of pollers, for a quicker side-by-side run.
  const concurrencies = process.env.BENCH_POLL_CONCURRENCY?.split(',').map(Number);
  await pollThroughput({
    seconds: Number(process.env.BENCH_SECONDS ?? 3),
    rounds: Number(process.env.BENCH_AB_ROUNDS ?? 2),
    ...(concurrencies ? { concurrencies } : {}),
  });
  console.log();
}
if (sections.has('hot-paths')) {
  await endToEnd();
  console.log();
}
if (sections.has('calls') || sections.has('cost')) {
  await callsAndCost(sections);
  console.log();
}
if (sections.has('history')) {
  await (await import('./history-cost.ts')).printHistoryCost();
  console.log();
}
if (sections.has('cadence')) {
  printReconcileCadence();
  console.log();
}
if (sections.has('listen')) await (await import('./listener-cost.ts')).printListenerCost();
if (sections.has('events')) {
  await (await import('./events-cost.ts')).printEventsCost();
  console.log();
}
if (sections.has('bundle')) {
  await lambdaBundles();
  console.log();
}
if (sections.has('init')) {
  await (await import('./init-duration.ts')).printInitDuration();
  console.log();
}
if (sections.has('startup')) {
  await printStartupTime();
  console.log();
}
if (sections.has('durable')) {
  // A durable function tool beside a state machine tool doing the same work: calls, cost, latency.
  await (await import('./durable-tools.ts')).printDurableToolComparison();
  console.log();
}
if (sections.has('soak')) await soak();
if (sections.has('events-soak')) await (await import('./events-soak.ts')).printEventsSoak();
if (sections.has('package')) await (await import('./package-install.ts')).printPackageInstall();
if (sections.has('starts')) {
  const concurrency = process.env.BENCH_START_CONCURRENCY?.split(',').map(Number);
  await (await import('./start-throughput.ts')).startThroughput({
    seconds: Number(process.env.BENCH_SECONDS ?? 3),
    rounds: Number(process.env.BENCH_AB_ROUNDS ?? 2),
    ...(concurrency ? { concurrencies: concurrency } : {}),
  });
}
