/**
 * Which npm packages each Lambda bundle may carry, read from esbuild's metafile of a build
 * with the deployed settings (cdk/lambda-bundling.ts). Sizes and cold imports are figures
 * for `npm run bench -- --only=bundle`; this holds what goes in.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { esbuildOptions, lazyModuleOptions, lazyModulesOf } from '../../cdk/lambda-bundling.ts';
import { MCP_HTTP_ENTRY, REPO_ROOT, STATUS_SYNC_ENTRY } from '../../cdk/repo-paths.ts';
import { toolFileManifest } from '../../cdk/tool-asset-commands.ts';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { TRACING_SDK_PACKAGE } from '../../lambdas/observability/tracing-setup.ts';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { DURABLE_FUNCTION_ARN_PREFIX_ENV } from '../../lambdas/tools/durable-function-names.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../../lambdas/tools/state-machine-names.ts';
import { iamFunctionUrlEvent } from '../support/function-url-event.ts';
import { invokeInProcess } from '../support/lambda-invocation-process.ts';
import { startOtlpReceiver } from '../support/otlp-receiver.ts';

const SHAPING_ENTRY = join(REPO_ROOT, 'lambdas/mcp/results/result-shaping.ts');

/** Bytes of the bundle of `entry` per npm package, and in all, our modules in it, and what it imports at module init. */
async function bundleContents(entry: string): Promise<{ bytes: number; packages: Map<string, number>; modules: string[]; staticImports: string[] }> {
  const result = await build({
    ...esbuildOptions(entry, 'bundle-contents/index.mjs', REPO_ROOT, lazyModulesOf(entry)),
    write: false,
    metafile: true,
    sourcemap: false,
  });
  const output = Object.values((result.metafile as Metafile).outputs).find((candidate) => candidate.entryPoint !== undefined);
  if (!output) throw new Error(`esbuild's metafile has no output for ${entry}`);
  const packages = new Map<string, number>();
  const modules: string[] = [];
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1];
    if (name && bytesInOutput > 0) packages.set(name, (packages.get(name) ?? 0) + bytesInOutput);
    if (!name && bytesInOutput > 0) modules.push(input);
  }
  const staticImports = output.imports.filter(({ kind }) => kind === 'import-statement').map(({ path }) => path);
  return { bytes: output.bytes, packages, modules, staticImports };
}

describe('the Lambda bundles carry only the packages their handler uses', () => {
  it('the result shaping status sync uses carries neither the MCP server SDK nor zod', async () => {
    const { packages } = await bundleContents(SHAPING_ENTRY);
    // An EventBridge handler has no use for an MCP server: it checks an output against the
    // tool's outputSchema and the CallToolResult shape, with the one JSON Schema engine.
    expect([...packages.keys()]).toEqual(['@cfworker/json-schema']);
  }, 60_000);

  it('status sync carries neither the MCP server SDK nor zod, and stays within 200 KB', async () => {
    const { bytes, packages } = await bundleContents(STATUS_SYNC_ENTRY);
    expect([...packages.keys()].sort()).toEqual([...LOGGING_PACKAGES, '@cfworker/json-schema'].sort());
    expect(bytes, `${bytes} bytes`).toBeLessThanOrEqual(200_000);
  }, 60_000);

  it('the MCP function carries the MCP server SDK, zod and one JSON Schema engine, and no Ajv', async () => {
    const { packages } = await bundleContents(MCP_HTTP_ENTRY);
    expect([...packages.keys()].filter((name) => !MCP_PACKAGES.includes(name))).toEqual([]);
    for (const name of ['@modelcontextprotocol/server', 'zod', '@cfworker/json-schema']) expect(packages.has(name), name).toBe(true);
  }, 60_000);

  it('the MCP function carries none of the Events parts only one process runs: the log and stores in memory, the in-process queue and the job it runs', async () => {
    const { modules } = await bundleContents(MCP_HTTP_ENTRY);
    // The function composes its app from AWS parts only (compose-async-mcp-app.ts); the local stack's app adds these.
    expect(modules).toContain('lambdas/app/compose-async-mcp-app.ts');
    expect(modules.filter((module) => IN_PROCESS_ONLY.includes(module) || /\/(?:in-memory|local)-[^/]+\.ts$/.test(module))).toEqual([]);
  }, 60_000);
});

describe('the Lambda bundles import at module init only what a cold start needs', () => {
  it.each([
    ['the MCP function', MCP_HTTP_ENTRY],
    ['status sync', STATUS_SYNC_ENTRY],
    ['the webhook delivery function', join(REPO_ROOT, 'lambdas/handlers/events-delivery.ts')],
  ])(
    '%s does not import node:http at init: the AWS SDK loads it only for an http endpoint, and https callbacks never need it',
    async (_name, entry) => {
      const { staticImports } = await bundleContents(entry);
      expect(staticImports).not.toContain('node:http');
      expect(staticImports).not.toContain('http');
    },
    60_000,
  );

  it('the MCP function does not import node:dns at init: only a webhook subscribe looks a callback host up', async () => {
    const { staticImports } = await bundleContents(MCP_HTTP_ENTRY);
    expect(staticImports).not.toContain('node:dns/promises');
    expect(staticImports).not.toContain('node:dns');
  }, 60_000);
});

/**
 * Builds the bundle of `entry` with the deployed settings into a scratch asset inside the
 * project (so its external @aws-sdk imports resolve as they do in Lambda's runtime), with the
 * tool folders of `toolsDir` and the lazy modules named, runs `use` on it, and removes it.
 */
async function withBuiltAsset<T>(
  entry: string,
  options: { toolsDir?: string; lazyModules?: readonly string[] },
  use: (asset: { dir: string; outfile: string; env: Record<string, string> }) => Promise<T>,
): Promise<T> {
  await mkdir(join(REPO_ROOT, 'node_modules/.cache'), { recursive: true });
  const dir = await mkdtemp(join(REPO_ROOT, 'node_modules/.cache/bundle-asset-'));
  try {
    const outfile = join(dir, 'index.mjs');
    await build({ ...esbuildOptions(entry, outfile, REPO_ROOT, lazyModulesOf(entry)), sourcemap: false });
    for (const name of options.lazyModules ?? []) await build(lazyModuleOptions(name, dir, REPO_ROOT));
    const env: Record<string, string> = {};
    if (options.toolsDir) {
      // What the synth copies into the asset: each tool's tool.json (derived, for a defineTool one) and its definition or durable.ts.
      for (const { target, files, write = {} } of toolFileManifest(await loadToolFolders(options.toolsDir))) {
        await mkdir(join(dir, target), { recursive: true });
        for (const file of files) await cp(file, join(dir, target, basename(file)));
        for (const [name, text] of Object.entries(write)) await writeFile(join(dir, target, name), text);
      }
      env[ENV.toolsDir] = join(dir, 'state-machines');
    }
    return await use({ dir, outfile, env });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The packages the built bundle of `entry` loads with `require` (the AWS SDK, through its
 * require shims) while a fresh Node imports it: its module init, as a cold start runs it.
 */
function requiredAtInit(entry: string, environment: Record<string, string>, toolsDir?: string): Promise<string[]> {
  return withBuiltAsset(entry, toolsDir ? { toolsDir } : {}, async ({ outfile, env: assetEnv }) => {
    const script = `import Module from 'node:module';
      const load = Module._load; const required = [];
      Module._load = function (request, ...rest) { required.push(request); return load.call(this, request, ...rest); };
      globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };
      await import(${JSON.stringify(pathToFileURL(outfile).href)});
      console.log(JSON.stringify(required));`;
    const env = { PATH: process.env.PATH ?? '', NODE_NO_WARNINGS: '1', ...environment, ...assetEnv };
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    return (JSON.parse(out.toString()) as string[]).filter((request) => !request.startsWith('node:'));
  });
}

describe("the MCP function's module init leaves the DynamoDB client to the first request that needs it", () => {
  it('importing the MCP bundle requires no @aws-sdk/client-dynamodb: initialize, tools/list and a poll need none of it', async () => {
    const required = await requiredAtInit(
      MCP_HTTP_ENTRY,
      {
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'AKIDBUNDLEINIT',
        AWS_SECRET_ACCESS_KEY: 'bundle-init-secret',
        AWS_SESSION_TOKEN: 'bundle-init-token',
        [ENV.tableName]: 'bundle-init',
        [ENV.resultsBucket]: 'bundle-init-results',
        [ENV.secretArn]: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bundle-init',
        [STATE_MACHINE_ARN_PREFIX_ENV]: 'arn:aws:states:us-east-1:000000000000:stateMachine:AsyncMcp-',
        [DURABLE_FUNCTION_ARN_PREFIX_ENV]: 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-',
      },
      resolve(REPO_ROOT, 'state-machines'),
    );
    // The spy saw the module init's requires: the item codec's, which a poll decodes with.
    expect(required).toContain('@aws-sdk/util-dynamodb');
    expect(required).not.toContain('@aws-sdk/client-dynamodb');
  }, 60_000);
});

describe('with the tracing setting, the MCP bundle loads the SDK shipped beside it and exports its spans', () => {
  it('carries no part of the SDK in index.mjs, only its import by name', async () => {
    const result = await build({
      ...esbuildOptions(MCP_HTTP_ENTRY, 'bundle-contents/index.mjs', REPO_ROOT, lazyModulesOf(MCP_HTTP_ENTRY)),
      write: false,
      metafile: true,
      sourcemap: false,
    });
    const output = Object.values((result.metafile as Metafile).outputs).find((candidate) => candidate.entryPoint !== undefined);
    const inputs = Object.keys(output?.inputs ?? {});
    expect(inputs.filter((input) => /node_modules\/@opentelemetry\/(?!api\/)/.test(input) || input.endsWith('observability/tracing-sdk.ts'))).toEqual([]);
    // Imported by its name, which Node resolves beside the bundle (the import's specifier is a variable esbuild leaves alone).
    expect(result.outputFiles[0]?.text).toContain(JSON.stringify(TRACING_SDK_PACKAGE));
  }, 60_000);

  it('exports the request span of tools/list, under the service name, before the invocation returns, in both OTLP protocols, and never loads the SDK with tracing off', async () => {
    const otlp = await startOtlpReceiver();
    try {
      const outcomes = await withBuiltAsset(
        MCP_HTTP_ENTRY,
        { toolsDir: resolve(REPO_ROOT, 'state-machines'), lazyModules: lazyModulesOf(MCP_HTTP_ENTRY) },
        async ({ dir, outfile, env }) => {
          // Nothing but the SDK shipped beside the bundle could have sent spans.
          expect(readFileSync(outfile, 'utf8')).not.toMatch(/BatchSpanProcessor|OTLPTraceExporter/);
          expect(existsSync(join(dir, 'node_modules', TRACING_SDK_PACKAGE, 'index.js'))).toBe(true);
          const invoke = (serviceName: string, protocol?: string) =>
            invokeInProcess({
              module: outfile,
              cwd: dir,
              streaming: true,
              event: iamFunctionUrlEvent({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
              env: {
                ...env,
                AWS_REGION: 'us-east-1',
                [ENV.tableName]: 'operations',
                [ENV.resultsBucket]: 'results',
                [ENV.secretArn]: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:server-key-AbCdEf',
                [STATE_MACHINE_ARN_PREFIX_ENV]: 'arn:aws:states:us-east-1:123456789012:stateMachine:Test-',
                [DURABLE_FUNCTION_ARN_PREFIX_ENV]: 'arn:aws:lambda:us-east-1:123456789012:function:Test-',
                AWS_LAMBDA_FUNCTION_NAME: serviceName,
                OTEL_SERVICE_NAME: serviceName,
                ...(protocol
                  ? {
                      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
                      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
                      // Only the invocation's flush can export within the test.
                      OTEL_BSP_SCHEDULE_DELAY: '600000',
                    }
                  : {}),
              },
            });
          // One after the other: each export must be in before its own invocation returns.
          return [await invoke('bundled-mcp-json', 'http/json'), await invoke('bundled-mcp-protobuf', 'http/protobuf'), await invoke('bundled-mcp-off')];
        },
      );
      for (const outcome of outcomes) {
        expect(outcome.ok, `${outcome.error}\n${outcome.output}`).toBe(true);
        expect((outcome.result as { prelude: { statusCode: number } }).prelude.statusCode).toBe(200);
      }
      // The SDK is loaded from beside the bundle where tracing is on, and never where it is off.
      const shipped = (outcome: (typeof outcomes)[number]) => outcome.commonJs.some((file) => file.includes(`/node_modules/${TRACING_SDK_PACKAGE}/`));
      expect(outcomes.map(shipped)).toEqual([true, true, false]);
      expect(otlp.spans.map(({ serviceName, name }) => ({ serviceName, name }))).toContainEqual({ serviceName: 'bundled-mcp-json', name: 'tools/list' });
      // http/protobuf, the setting's default: protobuf keeps strings as they are, so the body names the service and the span.
      const protobuf = otlp.bodies.filter((body) => body.includes('bundled-mcp-protobuf'));
      expect(protobuf.length).toBe(1);
      expect(protobuf[0]).toContain('tools/list');
    } finally {
      await otlp.close();
    }
  }, 120_000);
});

/** Structured logs and EMF metrics, with the runtime's invoke store they read the request id from. */
const LOGGING_PACKAGES: readonly string[] = [
  '@aws-lambda-powertools/commons',
  '@aws-lambda-powertools/logger',
  '@aws-lambda-powertools/metrics',
  '@aws/lambda-invoke-store',
  // OpenTelemetry's API alone: its SDK is loaded only where tracing is on (lambdas/observability/tracing-setup.ts).
  '@opentelemetry/api',
];

/**
 * What only a single process runs (lambdas/mcp/events/in-process-events.ts), passed by the local
 * stack's and the testing kit's app (async-mcp-app.ts) and never by the MCP function; any
 * in-memory or local module is held out by its name as well.
 */
const IN_PROCESS_ONLY: readonly string[] = [
  'lambdas/app/async-mcp-app.ts',
  'lambdas/mcp/events/in-process-events.ts',
  'lambdas/events/in-memory-event-log.ts',
  'lambdas/events/in-memory-event-handover.ts',
  'lambdas/events/in-memory-webhook-subscriptions.ts',
  'lambdas/events/local-webhook-delivery-queue.ts',
  // One try of a job, which the delivery function runs from its own bundle (webhook-job-runner.ts).
  'lambdas/events/webhook-delivery.ts',
  'lambdas/events/webhook-subscription-end.ts',
];

/** What the MCP bundle may hold: the SDK, zod and the MCP Apps helpers, the one schema engine, the logging. */
const MCP_PACKAGES: readonly string[] = [
  ...LOGGING_PACKAGES,
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/core',
  '@modelcontextprotocol/ext-apps',
  'zod',
  '@cfworker/json-schema',
];
