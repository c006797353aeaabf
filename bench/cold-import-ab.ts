/**
 * The MCP bundle's cold import from two source trees, alternating one fresh process each, so
 * that a cut of a few milliseconds shows beside the load of a shared machine: each tree is
 * built as bench/lambda-bundle.ts builds it (cdk/lambda-bundling.ts settings, from that tree)
 * and imported in turn. Prints CPU and wall medians of each and their difference; asserts
 * nothing. A tree is a checkout with `node_modules` (a symlink to this one's will do).
 * Run alone with `npx tsx bench/cold-import-ab.ts TREE_A TREE_B [RUNS]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { esbuildOptions, FUNCTION_NODE_OPTIONS, lazyModuleOptions, MCP_LAZY_MODULES } from '../cdk/lambda-bundling.ts';
import { REPO_ROOT } from '../cdk/repo-paths.ts';
import { ENV } from '../lambdas/handlers/environment.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../lambdas/tools/state-machine-names.ts';

const ENTRY = 'lambdas/handlers/mcp-http.ts';
const RUNTIME_GLOBAL = 'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };';

function coldImport(outfile: string): { wall: number; cpu: number } {
  const script = `${RUNTIME_GLOBAL} const c = process.cpuUsage(); const t = performance.now(); await import(${JSON.stringify(pathToFileURL(outfile).href)});
    const wall = performance.now() - t; const cpu = process.cpuUsage(c); console.log(wall, (cpu.user + cpu.system) / 1000);`;
  const env = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    NODE_OPTIONS: FUNCTION_NODE_OPTIONS,
    NODE_NO_WARNINGS: '1',
    [ENV.tableName]: 'bench',
    [ENV.resultsBucket]: 'bench-results',
    [ENV.secretArn]: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench',
    [STATE_MACHINE_ARN_PREFIX_ENV]: 'arn:aws:states:us-east-1:000000000000:stateMachine:AsyncMcp-',
    [ENV.toolsDir]: resolve(REPO_ROOT, 'state-machines'),
  };
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const [wall = Number.NaN, cpu = Number.NaN] = out.toString().trim().split(' ').map(Number);
  return { wall, cpu };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function main(trees: string[], runs: number): Promise<void> {
  // Inside this project, so the bundles' external @aws-sdk imports resolve as in Lambda's runtime.
  await mkdir(join(REPO_ROOT, 'node_modules/.cache'), { recursive: true });
  const dir = await mkdtemp(join(REPO_ROOT, 'node_modules/.cache/cold-import-ab-'));
  try {
    const outfiles: string[] = [];
    for (const [index, tree] of trees.entries()) {
      const root = resolve(tree);
      const assetDir = join(dir, String(index));
      const outfile = join(assetDir, 'index.mjs');
      await build(esbuildOptions(join(root, ENTRY), outfile, root, MCP_LAZY_MODULES));
      for (const name of MCP_LAZY_MODULES) await build(lazyModuleOptions(name, assetDir, root));
      outfiles.push(outfile);
    }
    const measured = outfiles.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
    for (let i = 0; i < runs; i++) {
      for (const [index, outfile] of outfiles.entries()) {
        const { wall, cpu } = coldImport(outfile);
        measured[index]?.wall.push(wall);
        measured[index]?.cpu.push(cpu);
      }
    }
    for (const [index, tree] of trees.entries()) {
      const { wall = [], cpu = [] } = measured[index] ?? {};
      console.log(`${tree.padEnd(40)} cpu p50 ${median(cpu).toFixed(1)} ms, wall p50 ${median(wall).toFixed(1)} ms (alternating, n=${runs})`);
    }
    const [a, b] = measured;
    if (a && b)
      console.log(`second - first: cpu p50 ${(median(b.cpu) - median(a.cpu)).toFixed(1)} ms, wall p50 ${(median(b.wall) - median(a.wall)).toFixed(1)} ms`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [a, b, runs] = process.argv.slice(2);
  if (!a || !b) throw new Error('usage: cold-import-ab.ts TREE_A TREE_B [RUNS]');
  await main([a, b], Number(runs ?? 21));
}
