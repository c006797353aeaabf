/**
 * `npm run bench`: latency and memory figures for the hot paths, on the local stack,
 * and the size and cold import time of the MCP Lambda bundle. Prints figures; it
 * asserts nothing (machines here are shared and noisy: compare runs, not thresholds).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../lambdas/tools/state-machine-names.ts';
import { startLocalStack } from '../local/local-stack.ts';
import { legacyRequest } from '../test/support/raw-mcp.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);

function summarize(name: string, samples: number[]): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2);
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  console.log(`${name.padEnd(44)} n=${String(samples.length).padEnd(5)} mean=${mean.toFixed(2)}ms p50=${at(0.5)}ms p95=${at(0.95)}ms p99=${at(0.99)}ms`);
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

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

/** Bundles the MCP Lambda as the CDK construct does and times a cold import of it. */
async function lambdaBundle(): Promise<void> {
  // Inside the project, so the bundle's external @aws-sdk imports resolve as they do in Lambda's runtime.
  await mkdir(resolve('node_modules/.cache'), { recursive: true });
  const dir = await mkdtemp(resolve('node_modules/.cache/bench-bundle-'));
  try {
    const outfile = join(dir, 'index.mjs');
    await build({
      entryPoints: ['lambdas/handlers/mcp-http.ts'],
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'esm',
      minify: true,
      outfile,
      external: ['@aws-sdk/*'],
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
      logLevel: 'silent',
    });
    const { size } = await stat(outfile);
    console.log(`${'MCP Lambda bundle (AWS SDK external)'.padEnd(44)} ${(size / 1024).toFixed(0)} KiB`);
    // The Lambda runtime's streaming global, which the handler needs at import, stood in for here.
    const runtime = 'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };';
    const script = `${runtime} const t = performance.now(); await import(${JSON.stringify(outfile)}); console.log((performance.now() - t).toFixed(0));`;
    const env = {
      ...process.env,
      OPERATIONS_TABLE_NAME: 'bench',
      RESULTS_BUCKET_NAME: 'bench-results',
      ASYNC_MCP_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench',
      [STATE_MACHINE_ARN_PREFIX_ENV]: 'arn:aws:states:us-east-1:000000000000:stateMachine:AsyncMcp-',
      TOOLS_DIR: resolve('state-machines'),
      AWS_REGION: 'us-east-1',
    };
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) {
      // A fresh process each time: what a Lambda cold start pays for module init.
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
      runs.push(Number(out.toString().trim()));
    }
    summarize('MCP Lambda cold import (module init)', runs);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

console.log(`async-mcp benchmarks (node ${process.version}, ${ROUNDS} rounds)`);
await endToEnd();
await lambdaBundle();
