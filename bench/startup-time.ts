/**
 * Start-up time of the local stack two ways: `npm start` (built from the source folders) and
 * `npm start -- --as-deployed` (synthesize the cloud assembly, then run it: every function in
 * its own sandbox behind IAM gateways). Each is timed up to its first answered `tools/list`,
 * the moment a client could use it. `--cdk-out` on an assembly already synthesized is the
 * second figure without the synth.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDeployedStack, synthesizeAssembly } from '../local/as-deployed/index.ts';
import { startLocalStack } from '../local/local-stack.ts';
import { legacyRequest } from '../test/support/raw-mcp.ts';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 3);

async function untilServing(start: () => Promise<{ url: URL; close(): Promise<void> }>): Promise<number> {
  const begin = performance.now();
  const stack = await start();
  try {
    const listed = await legacyRequest(stack.url, 'tools/list');
    if (!listed.message || !('result' in listed.message)) throw new Error(`tools/list failed: ${listed.text.slice(0, 200)}`);
    return performance.now() - begin;
  } finally {
    await stack.close();
  }
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Prints the median of RUNS starts of each mode. */
export async function printStartupTime(): Promise<void> {
  console.log(`start-up, up to the first answered tools/list (median of ${RUNS})`);
  const quick: number[] = [];
  for (let i = 0; i < RUNS; i++) quick.push(await untilServing(() => startLocalStack({ toolsDir: 'state-machines', port: 0 })));
  console.log(`  ${'npm start'.padEnd(44)} ${seconds(median(quick))}`);

  const dir = await mkdtemp(join(tmpdir(), 'async-mcp-bench-assembly-'));
  try {
    const synthStart = performance.now();
    await synthesizeAssembly({ outDir: dir, context: { auth: 'none' } });
    const synth = performance.now() - synthStart;
    const run: number[] = [];
    for (let i = 0; i < RUNS; i++) run.push(await untilServing(() => startDeployedStack({ cdkOut: dir, port: 0, log: () => undefined })));
    console.log(`  ${'npm start -- --cdk-out DIR (assembly ready)'.padEnd(44)} ${seconds(median(run))}`);
    console.log(`  ${'cdk synth (the first step of --as-deployed)'.padEnd(44)} ${seconds(synth)}`);
    console.log(`  ${'npm start -- --as-deployed (synth + run)'.padEnd(44)} ${seconds(synth + median(run))}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
