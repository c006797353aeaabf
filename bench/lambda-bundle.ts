/**
 * Size and cold import time of the Lambda bundles, built with the very settings the CDK
 * construct deploys (cdk/lambda-bundling.ts), beside two references built the same way: the
 * smallest stateless MCP server of the SDK (reference-mcp-lambda.ts), and the same server
 * loading and building a DynamoDB client at init (reference-mcp-dynamodb-lambda.ts). Imports
 * alternate between the bundles, so a busy machine slows each alike, and our MCP bundle's
 * cold import is printed as a ratio to each reference's: the first holds the whole cold
 * start to the SDK's own, the second to a DynamoDB-backed MCP Lambda that loads its client
 * at init (ours loads it on the first request that needs it). Prints figures; asserts nothing.
 * Run alone with `npx tsx bench/lambda-bundle.ts`.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { esbuildOptions, FUNCTION_NODE_OPTIONS, lazyModuleOptions, lazyModulesOf } from '../cdk/lambda-bundling.ts';
import { REPO_ROOT } from '../cdk/repo-paths.ts';
import { ENV } from '../lambdas/handlers/environment.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../lambdas/tools/state-machine-names.ts';

/** What one bundle measured. */
export interface BundleFigures {
  name: string;
  bytes: number;
  /** Bytes in the bundle per npm package, or per source folder of ours, largest first. */
  byPackage: [string, number][];
  /** Bytes of each package shipped beside the bundle and loaded only when needed. */
  lazyBytes: [string, number][];
  /** Milliseconds of `await import(bundle)` in fresh processes, sorted. */
  importMs: number[];
  /** CPU milliseconds of the same imports, sorted: steadier than wall time on a busy machine. */
  importCpuMs: number[];
}

interface BundleSpec {
  name: string;
  entry: string;
  /** The environment the construct gives the function, with stand-in values. */
  environment: Record<string, string>;
}

/** The references our MCP bundle's cold import is read against. */
const REFERENCE = 'minimal SDK server';
/** The same server, also loading and building a DynamoDB client at init: what any DynamoDB-backed MCP Lambda pays. */
const DYNAMODB_REFERENCE = 'minimal SDK server + DynamoDB client';

const BUNDLES: BundleSpec[] = [
  {
    name: 'MCP Lambda',
    entry: 'lambdas/handlers/mcp-http.ts',
    environment: {
      [ENV.tableName]: 'bench',
      [ENV.resultsBucket]: 'bench-results',
      [ENV.secretArn]: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench',
      [STATE_MACHINE_ARN_PREFIX_ENV]: 'arn:aws:states:us-east-1:000000000000:stateMachine:AsyncMcp-',
      // Durable-function tools are found by their prefix too.
      TOOL_DURABLE_FUNCTION_ARN_PREFIX: 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-',
      [ENV.toolsDir]: resolve(REPO_ROOT, 'state-machines'),
    },
  },
  {
    name: 'status-sync Lambda',
    entry: 'lambdas/handlers/status-sync.ts',
    environment: { [ENV.tableName]: 'bench', [ENV.resultsBucket]: 'bench-results' },
  },
  {
    name: 'webhook delivery Lambda',
    entry: 'lambdas/handlers/events-delivery.ts',
    environment: {
      [ENV.tableName]: 'bench',
      [ENV.secretArn]: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench',
      [ENV.eventsDeliveryQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench',
    },
  },
  { name: REFERENCE, entry: 'bench/reference-mcp-lambda.ts', environment: {} },
  { name: DYNAMODB_REFERENCE, entry: 'bench/reference-mcp-dynamodb-lambda.ts', environment: { TABLE_NAME: 'bench' } },
];

/**
 * The Node that runs the cold imports: BENCH_NODE, when set, so that the figures can be taken
 * on the functions' runtime (Node 24) whatever Node runs the bench; which Node builtins a
 * module loads, and what they cost, differ between Node versions.
 */
const IMPORT_NODE = process.env.BENCH_NODE ?? process.execPath;

// The Lambda runtime's streaming global, which the MCP handler needs at import, stood in for here.
const RUNTIME_GLOBAL = 'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };';

/** Builds and times each Lambda bundle, printing one line per figure; `runs` cold imports each. */
export async function lambdaBundles(runs = Number(process.env.BENCH_IMPORT_RUNS ?? 9)): Promise<BundleFigures[]> {
  // Inside the project, so the bundle's external @aws-sdk imports resolve as they do in Lambda's runtime.
  await mkdir(join(REPO_ROOT, 'node_modules/.cache'), { recursive: true });
  const dir = await mkdtemp(join(REPO_ROOT, 'node_modules/.cache/bench-bundle-'));
  const built: { spec: BundleSpec; outfile: string; sizes: Omit<BundleFigures, 'importMs' | 'importCpuMs'> }[] = [];
  try {
    for (const spec of BUNDLES) {
      const assetDir = join(dir, spec.name.replace(/\W+/g, '-'));
      const outfile = join(assetDir, 'index.mjs');
      const lazyModules = lazyModulesOf(spec.entry);
      const result = await build({ ...esbuildOptions(spec.entry, outfile, REPO_ROOT, lazyModules), metafile: true });
      const lazyBytes: [string, number][] = [];
      for (const name of lazyModules) {
        const options = lazyModuleOptions(name, assetDir, REPO_ROOT);
        await build(options);
        if (options.outfile === undefined) throw new Error(`the lazy module ${name} has no outfile`);
        lazyBytes.push([name, (await stat(options.outfile)).size]);
      }
      const { size } = await stat(outfile);
      built.push({ spec, outfile, sizes: { name: spec.name, bytes: size, byPackage: byPackage(result.metafile, outfile), lazyBytes } });
    }
    const timings = built.map(() => ({ importMs: [] as number[], importCpuMs: [] as number[] }));
    // Round-robin, one fresh process each: load from other work falls on every bundle alike.
    for (let i = 0; i < runs; i++) {
      for (const [index, { spec, outfile }] of built.entries()) {
        const { wall, cpu } = coldImport(outfile, spec);
        timings[index]?.importMs.push(wall);
        timings[index]?.importCpuMs.push(cpu);
      }
    }
    const figures = built.map(({ sizes }, index) => {
      const { importMs = [], importCpuMs = [] } = timings[index] ?? {};
      return { ...sizes, importMs: importMs.sort((a, b) => a - b), importCpuMs: importCpuMs.sort((a, b) => a - b) };
    });
    const version = execFileSync(IMPORT_NODE, ['--version']).toString().trim();
    console.log(`cold imports run by node ${version}${process.env.BENCH_NODE ? ' (BENCH_NODE)' : ''}`);
    for (const measured of figures) print(measured);
    printRatio(figures);
    return figures;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function byPackage(metafile: Metafile, outfile: string): [string, number][] {
  const output = Object.entries(metafile.outputs).find(([path]) => resolve(REPO_ROOT, path) === outfile)?.[1];
  if (!output) throw new Error(`esbuild's metafile has no output ${outfile}`);
  const sizes = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const inPackage = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
    const key = inPackage?.[1] ?? input.split('/').slice(0, 2).join('/');
    sizes.set(key, (sizes.get(key) ?? 0) + bytesInOutput);
  }
  return [...sizes].sort((a, b) => b[1] - a[1]);
}

function coldImport(outfile: string, spec: BundleSpec): { wall: number; cpu: number } {
  const url = JSON.stringify(pathToFileURL(outfile).href);
  const script = `${RUNTIME_GLOBAL} const c = process.cpuUsage(); const t = performance.now(); await import(${url});
    const wall = performance.now() - t; const cpu = process.cpuUsage(c); console.log(wall, (cpu.user + cpu.system) / 1000);`;
  const env = { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', NODE_OPTIONS: FUNCTION_NODE_OPTIONS, NODE_NO_WARNINGS: '1', ...spec.environment };
  // A fresh process: what a Lambda cold start pays for module init.
  const out = execFileSync(IMPORT_NODE, ['--input-type=module', '-e', script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const [wall = Number.NaN, cpu = Number.NaN] = out.toString().trim().split(' ').map(Number);
  return { wall, cpu };
}

const median = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;

/**
 * Our MCP bundle's cold import over each reference's, wall and CPU medians, and where our
 * CPU goes: what the minimal server spends, and the rest, which is our own module init. Our
 * bundle leaves the DynamoDB client to the first request that needs it (a start, a write;
 * not a poll), so what loading and building it costs, read off the second reference, is
 * printed apart: a cold start pays it on such a request, not at init.
 */
function printRatio(figures: BundleFigures[]): void {
  const ours = figures.find(({ name }) => name === 'MCP Lambda');
  const reference = figures.find(({ name }) => name === REFERENCE);
  const withDynamoDb = figures.find(({ name }) => name === DYNAMODB_REFERENCE);
  if (!ours || !reference || !withDynamoDb) return;
  const ratio = (a: number[], b: number[]) => (median(a) / median(b)).toFixed(2);
  const n = `alternating, n=${ours.importMs.length} each`;
  for (const [label, against] of [
    ['MCP cold import / minimal SDK server', reference],
    ['MCP cold import / the same + DynamoDB client', withDynamoDb],
  ] as const) {
    console.log(`${label.padEnd(44)} ${ratio(ours.importMs, against.importMs)}x wall, ${ratio(ours.importCpuMs, against.importCpuMs)}x cpu (${n})`);
  }
  const minimal = median(reference.importCpuMs);
  const dynamoDb = median(withDynamoDb.importCpuMs);
  const total = median(ours.importCpuMs);
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  console.log(`${'MCP cold import cpu p50, by whose work'.padEnd(44)} ${ms(total)}: minimal SDK server ${ms(minimal)}, our own init ${ms(total - minimal)}`);
  console.log(
    `${'DynamoDB client, left to the first write'.padEnd(44)} ${ms(dynamoDb - minimal)} cpu p50 (loading and building it, beside the minimal server)`,
  );
}

function print({ name, bytes, byPackage: packages, lazyBytes, importMs, importCpuMs }: BundleFigures): void {
  const kb = (n: number) => `${(n / 1000).toFixed(0)} KB`;
  const at = (sorted: number[], q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN).toFixed(0);
  const lazy = lazyBytes.map(([module, size]) => `${module} ${kb(size)}`).join(', ');
  console.log(`${`${name} bundle (AWS SDK external)`.padEnd(44)} ${kb(bytes)} (${bytes} bytes)${lazy ? `; loaded when needed: ${lazy}` : ''}`);
  console.log(
    `${`${name} bundle, largest parts`.padEnd(44)} ${packages
      .slice(0, 6)
      .map(([key, size]) => `${key} ${kb(size)}`)
      .join(', ')}`,
  );
  console.log(
    `${`${name} cold import (module init)`.padEnd(44)} n=${String(importMs.length).padEnd(5)} p50=${at(importMs, 0.5)}ms p95=${at(importMs, 0.95)}ms cpu p50=${at(importCpuMs, 0.5)}ms`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await lambdaBundles();
