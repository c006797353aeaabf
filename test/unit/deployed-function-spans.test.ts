/**
 * A worker and a durable tool as deployed, exporting their spans in the operation's trace: each
 * bundled as the stack bundles it (the worker around worker-entry.ts, the durable tool with the
 * durable SDK's tracing plugin beside it), loaded in a Node process of its own with a Lambda's
 * tracing environment, and invoked once with an execution input carrying `operation.trace`.
 * The spans must reach the OTLP receiver before the invocation's promise settles: the batch
 * processor's delay is far longer than the test, so only the invocation's own flush sends them.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DURABLE_LAZY_MODULES,
  DURABLE_PLUGINS_ENV,
  DURABLE_TRACING_PLUGIN,
  durableTracingEnvironment,
  lazyModuleBuildOptions,
} from '../../cdk/durable-tracing-bundling.ts';
import { esbuildOptions } from '../../cdk/lambda-bundling.ts';
import { DEFAULT_WORKERS_DIR, REPO_ROOT } from '../../cdk/repo-paths.ts';
import { workerBundling } from '../../cdk/worker-bundling.ts';
import { TRACING_SDK_PACKAGE } from '../../lambdas/observability/tracing-setup.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const START_SPAN_ID = '00f067aa0ba902b7';
const TRACE = { traceparent: `00-${TRACE_ID}-${START_SPAN_ID}-01` };
const OPERATION = { token: 'tok-1', tool: 'some_tool', ownerId: 'owner-1', trace: TRACE };
const RESOLVED = 'invocation resolved';

let dir: string;
let receiver: OtlpReceiver;

/** Bundles `entry` into `assetDir` with the lazy modules beside it, as BundledFunction does. */
async function bundle(
  assetDir: string,
  entry: string,
  lazyModules: readonly string[],
  extra: { alias?: Record<string, string>; define?: Record<string, string> } = {},
) {
  const options = esbuildOptions(entry, join(assetDir, 'index.mjs'), REPO_ROOT, lazyModules);
  await build({ ...options, alias: { ...options.alias, ...extra.alias }, define: { ...options.define, ...extra.define } });
  for (const name of lazyModules) await build(lazyModuleBuildOptions(name, assetDir, REPO_ROOT));
  // Only the AWS SDK beside it, as the Lambda runtime provides.
  mkdirSync(join(assetDir, 'node_modules'), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules', '@aws-sdk'), join(assetDir, 'node_modules', '@aws-sdk'));
}

/** An import of `file` for a script written elsewhere. */
const importOf = (file: string) => JSON.stringify(pathToFileURL(file).href);

/**
 * Runs `script` (an ES module, written as a file beside the bundle: the testing SDK's worker
 * thread would run an `-e` script again) with a Lambda's tracing environment; resolves with the
 * spans received by the time it printed {@link RESOLVED}, and its last line of output.
 */
function invokeInProcess(assetDir: string, script: string, env: Record<string, string> = {}): Promise<{ spans: ReceivedSpan[]; output: string }> {
  const file = join(assetDir, 'invoke.mjs');
  writeFileSync(file, script);
  const child = spawn(process.execPath, [file], {
    cwd: assetDir,
    env: {
      PATH: process.env.PATH ?? '',
      TMPDIR: tmpdir(),
      NODE_NO_WARNINGS: '1',
      AWS_REGION: 'us-east-1',
      AWS_LAMBDA_FUNCTION_NAME: 'traced-function',
      LAMBDA_TASK_ROOT: assetDir,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  let spansAtResolve: ReceivedSpan[] | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    // The export's request was answered before the child's promise settled, so it is recorded by now.
    if (spansAtResolve === undefined && stdout.includes(RESOLVED)) spansAtResolve = [...receiver.spans];
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 || spansAtResolve === undefined) reject(new Error(`the invocation exited with ${code}: ${stderr}${stdout}`));
      else resolve({ spans: spansAtResolve, output: stdout.trim().split('\n').at(-1) ?? '' });
    });
  });
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  dir = mkdtempSync(join(tmpdir(), 'async-mcp-traced-bundles-'));
  const calculate = workerBundling('calculate', join(DEFAULT_WORKERS_DIR, 'calculate.ts'));
  await bundle(join(dir, 'worker'), calculate.entry, [TRACING_SDK_PACKAGE], { alias: { ...calculate.aliases }, define: { ...calculate.define } });
  await bundle(join(dir, 'durable'), join(REPO_ROOT, 'test', 'fixtures', 'durable-tools', 'wait_and_sum', 'durable.ts'), DURABLE_LAZY_MODULES);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a deployed worker, with tracing on', () => {
  it("exports its span, the child of the operation's trace its event carries, before its invocation resolves", async () => {
    receiver.spans.length = 0;
    const event = { a: 6, b: 3, op: 'div', operation: OPERATION };
    const { spans, output } = await invokeInProcess(
      join(dir, 'worker'),
      `const { handler } = await import(${importOf(join(dir, 'worker', 'index.mjs'))});
       const result = await handler(${JSON.stringify(event)}, { functionName: 'traced-function' });
       console.log(${JSON.stringify(RESOLVED)});
       console.log(JSON.stringify(result));
       process.exit(0);`,
    );
    // The worker's own answer, untouched by the entry around it.
    expect(JSON.parse(output)).toEqual({ result: 2 });
    expect(spans).toEqual([
      expect.objectContaining({
        name: 'invoke calculate',
        traceId: TRACE_ID,
        parentSpanId: START_SPAN_ID,
        attributes: expect.objectContaining({ 'faas.invoked_name': 'calculate', 'gen_ai.tool.name': 'some_tool' }),
      }),
    ]);
  }, 60_000);
});

describe('a deployed durable tool, with tracing on', () => {
  it('turns the durable SDK’s plugin on only where the functions export spans', () => {
    expect(durableTracingEnvironment({})).toEqual({});
    expect(durableTracingEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' })).toEqual({ [DURABLE_PLUGINS_ENV]: DURABLE_TRACING_PLUGIN });
  });

  it("exports each invocation's span in the operation's trace, and its steps' within it, before the invocation resolves", async () => {
    receiver.spans.length = 0;
    // A step, then a wait: the execution takes two invocations.
    const payload = { arguments: { numbers: [1, 2, 3], waitSeconds: 5 }, operation: OPERATION };
    const { spans, output } = await invokeInProcess(
      join(dir, 'durable'),
      `import { LocalDurableTestRunner } from ${importOf(createRequire(join(REPO_ROOT, 'package.json')).resolve('@aws/durable-execution-sdk-js-testing'))};
       const { handler } = await import(${importOf(join(dir, 'durable', 'index.mjs'))});
       await LocalDurableTestRunner.setupTestEnvironment({ skipTime: true });
       const execution = await new LocalDurableTestRunner({ handlerFunction: handler }).run({ payload: ${JSON.stringify(payload)} });
       console.log(${JSON.stringify(RESOLVED)});
       console.log(JSON.stringify({ status: execution.getStatus(), result: execution.getResult() }));
       process.exit(0);`,
      durableTracingEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }),
    );
    expect(JSON.parse(output)).toMatchObject({ status: 'SUCCEEDED', result: { structuredContent: { sum: 6 } } });
    const invocations = spans.filter((span) => span.name === 'invoke traced-function');
    expect(invocations).toHaveLength(2);
    for (const invocation of invocations) {
      expect(invocation).toMatchObject({ traceId: TRACE_ID, parentSpanId: START_SPAN_ID, attributes: { 'gen_ai.tool.name': 'some_tool' } });
    }
    // The step ran in the first invocation only: the second replays it from its checkpoint.
    const steps = spans.filter((span) => span.name.startsWith('step '));
    expect(steps).toEqual([expect.objectContaining({ name: 'step 1', traceId: TRACE_ID })]);
    expect(invocations.map((invocation) => invocation.spanId)).toContain(steps[0]!.parentSpanId);
  }, 60_000);
});
