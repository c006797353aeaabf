/**
 * The MCP bundle's cold start, import and first request together, from one or two source
 * trees, beside the minimal SDK server (bench/reference-mcp-lambda.ts, this tree's), all
 * alternating one fresh process each, so that a cut of a few milliseconds shows beside the
 * load of a shared machine. Each tree is built as bench/lambda-bundle.ts builds it
 * (cdk/lambda-bundling.ts settings, from that tree), imported, then sent one `tools/list`
 * (2025-11-25, no session): the first request a cold start answers, whose paths a lazy module
 * init leaves to it. Prints CPU and wall medians of the import, the request and both, and their
 * ratio to the reference's; asserts nothing. A tree is a checkout with `node_modules` (a symlink
 * to this one's will do).
 * Run alone with `npx tsx bench/cold-import-ab.ts TREE_A [TREE_B] [RUNS]`.
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
const REFERENCE_ENTRY = 'bench/reference-mcp-lambda.ts';
const RUNTIME_GLOBAL = 'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };';
const FIRST_REQUEST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

/** One cold start: CPU and wall ms of the import, then of the first request. */
interface ColdStart {
  importWall: number;
  importCpu: number;
  requestWall: number;
  requestCpu: number;
}

/**
 * The first request, as each bundle takes it: ours as a Function URL invocation (the runtime's
 * streaming global stood in for, the response written to a PassThrough), the reference as the
 * fetch handler a Lambda adapter would call. Either must answer a tools/list result.
 */
function requestScript(kind: 'ours' | 'reference'): string {
  const check = `if (!text.includes('"tools"')) throw new Error('the first request answered ' + text.slice(0, 300));`;
  if (kind === 'reference') {
    return `const response = await module.handler(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: ${JSON.stringify(HEADERS)}, body: ${JSON.stringify(FIRST_REQUEST)} }));
      const text = await response.text(); ${check}`;
  }
  const event = {
    version: '2.0',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: { host: 'bench.lambda-url.us-east-1.on.aws', ...HEADERS },
    requestContext: {
      http: { method: 'POST', path: '/mcp', sourceIp: '127.0.0.1', protocol: 'HTTP/1.1', userAgent: 'bench' },
      domainName: 'bench.lambda-url.us-east-1.on.aws',
      timeEpoch: 0,
    },
    body: FIRST_REQUEST,
    isBase64Encoded: false,
  };
  return `const { PassThrough } = await import('node:stream'); const stream = new PassThrough(); const chunks = []; stream.on('data', (c) => chunks.push(c));
    await module.handler(${JSON.stringify(event)}, stream, { awsRequestId: 'bench', functionName: 'bench', getRemainingTimeInMillis: () => 60000 });
    const text = Buffer.concat(chunks).toString(); ${check}`;
}

function coldStart(outfile: string, kind: 'ours' | 'reference'): ColdStart {
  const script = `${RUNTIME_GLOBAL} const c0 = process.cpuUsage(); const t0 = performance.now(); const module = await import(${JSON.stringify(pathToFileURL(outfile).href)});
    const t1 = performance.now(); const c1 = process.cpuUsage();
    ${requestScript(kind)}
    const t2 = performance.now(); const c2 = process.cpuUsage(c1); const ci = process.cpuUsage(c0);
    console.log(t1 - t0, (ci.user + ci.system - c2.user - c2.system) / 1000, t2 - t1, (c2.user + c2.system) / 1000);`;
  const env = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    NODE_OPTIONS: FUNCTION_NODE_OPTIONS,
    NODE_NO_WARNINGS: '1',
    ASYNC_MCP_AUTH: 'none',
    [ENV.tableName]: 'bench',
    [ENV.resultsBucket]: 'bench-results',
    [ENV.secretArn]: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench',
    [STATE_MACHINE_ARN_PREFIX_ENV]: 'arn:aws:states:us-east-1:000000000000:stateMachine:AsyncMcp-',
    // A tree with durable-function tools reads their prefix too.
    TOOL_DURABLE_FUNCTION_ARN_PREFIX: 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-',
    [ENV.toolsDir]: resolve(REPO_ROOT, 'state-machines'),
  };
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const [importWall = Number.NaN, importCpu = Number.NaN, requestWall = Number.NaN, requestCpu = Number.NaN] = out.toString().trim().split(' ').map(Number);
  return { importWall, importCpu, requestWall, requestCpu };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function main(trees: string[], runs: number): Promise<void> {
  // Inside this project, so the bundles' external @aws-sdk imports resolve as in Lambda's runtime.
  await mkdir(join(REPO_ROOT, 'node_modules/.cache'), { recursive: true });
  const dir = await mkdtemp(join(REPO_ROOT, 'node_modules/.cache/cold-import-ab-'));
  try {
    const bundles: { label: string; outfile: string; kind: 'ours' | 'reference' }[] = [];
    for (const [index, tree] of trees.entries()) {
      const root = resolve(tree);
      const assetDir = join(dir, String(index));
      const outfile = join(assetDir, 'index.mjs');
      await build(esbuildOptions(join(root, ENTRY), outfile, root, MCP_LAZY_MODULES));
      for (const name of MCP_LAZY_MODULES) await build(lazyModuleOptions(name, assetDir, root));
      bundles.push({ label: tree, outfile, kind: 'ours' });
    }
    const referenceFile = join(dir, 'reference', 'index.mjs');
    await build(esbuildOptions(REFERENCE_ENTRY, referenceFile, REPO_ROOT));
    bundles.push({ label: 'minimal SDK server', outfile: referenceFile, kind: 'reference' });

    const measured = bundles.map(() => [] as ColdStart[]);
    for (let i = 0; i < runs; i++) for (const [index, { outfile, kind }] of bundles.entries()) measured[index]?.push(coldStart(outfile, kind));

    const p50 = (starts: ColdStart[], pick: (start: ColdStart) => number) => median(starts.map(pick));
    const reference = measured.at(-1) ?? [];
    const refBoth = p50(reference, (s) => s.importCpu + s.requestCpu);
    const refImport = p50(reference, (s) => s.importCpu);
    console.log(`Cold start, import + first request (tools/list), cpu and wall p50, alternating one fresh process each, n=${runs}:`);
    for (const [index, { label }] of bundles.entries()) {
      const starts = measured[index] ?? [];
      const both = p50(starts, (s) => s.importCpu + s.requestCpu);
      const importCpu = p50(starts, (s) => s.importCpu);
      console.log(
        `  ${label.padEnd(40)} import ${importCpu.toFixed(1)} ms cpu (${p50(starts, (s) => s.importWall).toFixed(1)} wall), first request ${p50(starts, (s) => s.requestCpu).toFixed(1)} ms cpu (${p50(starts, (s) => s.requestWall).toFixed(1)} wall), both ${both.toFixed(1)} ms cpu (${p50(starts, (s) => s.importWall + s.requestWall).toFixed(1)} wall)  / reference: import ${(importCpu / refImport).toFixed(2)}x, both ${(both / refBoth).toFixed(2)}x`,
      );
    }
    const [a, b] = measured;
    if (trees.length === 2 && a && b) {
      const both = (starts: ColdStart[]) => p50(starts, (s) => s.importCpu + s.requestCpu);
      console.log(`  second - first: import + first request cpu p50 ${(both(b) - both(a)).toFixed(1)} ms`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const runs = /^\d+$/.test(args.at(-1) ?? '') ? Number(args.pop()) : 21;
  if (args.length < 1 || args.length > 2) throw new Error('usage: cold-import-ab.ts TREE_A [TREE_B] [RUNS]');
  await main(args, runs);
}
