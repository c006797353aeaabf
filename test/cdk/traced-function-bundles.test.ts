/**
 * What a user's worker and a durable tool are bundled with, so that they export their spans in
 * AWS without a change to their code: the worker's bundle starts from worker-entry.ts around the
 * user's module, and the durable tool's ships the durable SDK's tracing plugin, which its
 * environment names where the functions export spans. Both ship OpenTelemetry's SDK beside the
 * bundle. Only the worker and durable tool stacks are bundled: the rest would cost minutes.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogStacks } from '../../cdk/catalog-stacks.ts';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { DurableToolFunction } from '../../cdk/durable-tool-function.ts';
import { DURABLE_PLUGINS_ENV, DURABLE_TRACING_PLUGIN } from '../../cdk/durable-tracing-bundling.ts';
import { OperationsTable } from '../../cdk/operations-table.ts';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import { ResultsBucket } from '../../cdk/results-bucket.ts';
import { type FunctionTracing, NO_TRACING, resolveServerTracing } from '../../cdk/server-tracing.ts';
import { WORKER_ENTRY } from '../../cdk/worker-bundling.ts';
import { createWorkerFunctions } from '../../cdk/worker-functions.ts';
import { TRACING_SDK_PACKAGE } from '../../lambdas/observability/tracing-setup.ts';
import { loadToolFolders, type ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { writeWordCountExample } from '../support/markdown-blocks.ts';
import { CDK_JSON_CONTEXT, logicalIdOf, resourcesOf } from './cdk-test-app.ts';

const DURABLE_FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'cdk-durable-tools');
const OTLP_ENDPOINT = 'http://collector.internal:4318';
const OTLP = resolveServerTracing({ exporter: 'otlp', endpoint: OTLP_ENDPOINT });

let project: string;
const outdirs: string[] = [];
let tools: ToolFolder[];

/** The user's worker and a durable tool, as the construct makes them, in a stack of their own. */
function synthFunctions(tracing: FunctionTracing, bundle: boolean) {
  const outdir = mkdtempSync(join(tmpdir(), 'async-mcp-cdk-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { ...CDK_JSON_CONTEXT, ...(bundle ? {} : { 'aws:cdk:bundling-stacks': [] }) } });
  const stack = new Stack(app, 'TracedBundles');
  const operations = new OperationsTable(stack, 'Operations');
  const results = new ResultsBucket(stack, 'Results', { maxLifetimeSeconds: undefined });
  const workers = createWorkerFunctions({
    tools,
    workersDir: join(project, 'workers'),
    stacks: new CatalogStacks(stack, 'Workers', { count: 1, holds: 'worker Lambdas', countProp: 'workerStackCount' }),
    operations,
    results,
    memorySize: 512,
    timeout: Duration.seconds(30),
    logRetention: RetentionDays.ONE_WEEK,
    tracing,
    reservedConcurrentExecutions: undefined,
  });
  const durableTool = tools.find((tool) => tool.durable)!;
  const durable = new DurableToolFunction(stack, 'Durable', {
    tool: durableTool,
    functionName: 'traced-durable',
    operations,
    results,
    logRetention: RetentionDays.ONE_WEEK,
    tracing,
  });
  app.synth();
  const functions = { ...resourcesOf(Template.fromStack(stack), 'AWS::Lambda::Function') };
  for (const child of stack.node.findAll()) {
    if (child instanceof Stack && child !== stack) Object.assign(functions, resourcesOf(Template.fromStack(child), 'AWS::Lambda::Function'));
  }
  const resourceOf = (fn: IConstruct) => functions[logicalIdOf(fn)]!;
  return {
    worker: workers.get('count_words')!,
    durable: durable.function,
    environmentOf: (fn: IConstruct) => resourceOf(fn).Properties.Environment.Variables as Record<string, string>,
    assetDirOf: (fn: IConstruct) => join(outdir, `asset.${(resourceOf(fn).Properties.Code.S3Key as string).replace(/\.zip$/, '')}`),
  };
}

let bundled: ReturnType<typeof synthFunctions>;

beforeAll(async () => {
  // A user's tool as the README adds it, its worker in a workers folder of its own, under the
  // repository (git-ignored .scratch/), where the CDK takes function entries from.
  mkdirSync(join(REPO_ROOT, '.scratch'), { recursive: true });
  project = mkdtempSync(join(REPO_ROOT, '.scratch', 'traced-bundles-'));
  writeWordCountExample('README.md', join(project, 'tools'), join(project, 'workers'));
  const durable = (await loadToolFolders(DURABLE_FIXTURES)).find((tool) => tool.durable);
  tools = [...(await loadToolFolders(join(project, 'tools'))), durable!];
  bundled = synthFunctions(OTLP, true);
}, 240_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

/** The files a bundle was built from, relative to the repository, as its source map lists them. */
function sourcesOf(assetDir: string): string[] {
  const map = JSON.parse(readFileSync(join(assetDir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
  return map.sources.map((source) => relative(REPO_ROOT, join(assetDir, source)));
}

describe("a user's worker, bundled", () => {
  it('starts from the tracing entry around the user’s own module, and ships the OpenTelemetry SDK beside it', () => {
    const assetDir = bundled.assetDirOf(bundled.worker);
    const sources = sourcesOf(assetDir);
    expect(sources).toContain(relative(REPO_ROOT, WORKER_ENTRY));
    expect(sources).toContain(relative(REPO_ROOT, join(project, 'workers', 'count-words.ts')));
    // Loaded only with tracing on: beside the bundle, never in it.
    expect(existsSync(join(assetDir, 'node_modules', TRACING_SDK_PACKAGE, 'index.js'))).toBe(true);
    expect(sources.filter((source) => source.includes('@opentelemetry/sdk-trace'))).toEqual([]);
  });
});

describe('a durable tool, bundled', () => {
  it('ships the durable SDK’s tracing plugin and the OpenTelemetry SDK beside its bundle, and names the plugin in its environment', () => {
    const assetDir = bundled.assetDirOf(bundled.durable);
    expect(existsSync(join(assetDir, 'node_modules', DURABLE_TRACING_PLUGIN, 'index.js'))).toBe(true);
    expect(existsSync(join(assetDir, 'node_modules', TRACING_SDK_PACKAGE, 'index.js'))).toBe(true);
    expect(bundled.environmentOf(bundled.durable)).toMatchObject({ [DURABLE_PLUGINS_ENV]: DURABLE_TRACING_PLUGIN, OTEL_EXPORTER_OTLP_ENDPOINT: OTLP_ENDPOINT });
  });

  it('loads no plugin where the functions export no spans', () => {
    const untraced = synthFunctions(NO_TRACING, false);
    expect(untraced.environmentOf(untraced.durable)).not.toHaveProperty(DURABLE_PLUGINS_ENV);
    expect(untraced.environmentOf(untraced.durable)).toHaveProperty(ENV.tableName);
  });
});
