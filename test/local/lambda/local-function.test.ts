/**
 * A function's bundled asset runs as Lambda runs it: its own environment only, the AWS SDK
 * from the runtime, one cold start per sandbox, its Timeout enforced, the runtime's error
 * shape and context, and its console lines in the runtime's format.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lambdaErrorPayload } from '../../../local/stepfunctions/lambda-function-error.ts';
import { LambdaFunctionError, startLocalFunction, type LocalFunction, type LocalFunctionOptions } from '../../../local/lambda/local-function.ts';
import { assetRoot, writeAsset } from './lambda-assets.ts';

let root: string;
let removeRoot: () => Promise<void>;
const started: LocalFunction[] = [];

beforeAll(async () => {
  ({ root, remove: removeRoot } = await assetRoot());
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((fn) => fn.close()));
});
afterAll(async () => {
  await removeRoot();
});

async function start(options: Omit<LocalFunctionOptions, 'onLog' | 'runtimeEnvironment'> & Partial<LocalFunctionOptions>): Promise<LocalFunction> {
  const fn = await startLocalFunction({ runtimeEnvironment: {}, onLog: () => undefined, ...options });
  started.push(fn);
  return fn;
}

const ECHO_ENV = 'export const handler = async () => ({ ...process.env });';

describe('a local function', () => {
  it('sees exactly its template variables and the runtime variables, none of another function or of the server process', async () => {
    process.env.SERVER_ONLY_SECRET = 'must-not-leak';
    try {
      const a = await start({
        fn: await writeAsset(root, 'EnvA', { 'index.mjs': ECHO_ENV }, { environment: { TABLE: 'table-a', ONLY_A: 'yes' }, memorySize: 1024 }),
        runtimeEnvironment: {
          AWS_ACCESS_KEY_ID: 'ASIAROLEA',
          AWS_SECRET_ACCESS_KEY: 'secret-a',
          AWS_SESSION_TOKEN: 'token-a',
          AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1',
        },
      });
      const b = await start({ fn: await writeAsset(root, 'EnvB', { 'index.mjs': ECHO_ENV }, { environment: { TABLE: 'table-b' } }) });
      const [envA, envB] = (await Promise.all([a.invoke({}), b.invoke({})])) as [Record<string, string>, Record<string, string>];
      expect(envA).toMatchObject({
        TABLE: 'table-a',
        ONLY_A: 'yes',
        AWS_REGION: 'us-east-1',
        AWS_DEFAULT_REGION: 'us-east-1',
        AWS_LAMBDA_FUNCTION_NAME: 'AsyncMcp-EnvA-ABCDEF123456',
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
        AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/AsyncMcp-EnvA-ABCDEF123456',
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
        LAMBDA_TASK_ROOT: join(root, 'EnvA'),
        TZ: ':UTC',
        AWS_ACCESS_KEY_ID: 'ASIAROLEA',
        AWS_SECRET_ACCESS_KEY: 'secret-a',
        AWS_SESSION_TOKEN: 'token-a',
        AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1',
      });
      expect(envA.SERVER_ONLY_SECRET).toBeUndefined();
      expect(envA.HOME).toBeUndefined();
      expect(envB.TABLE).toBe('table-b');
      expect(envB.ONLY_A).toBeUndefined();
      expect(envB.AWS_ACCESS_KEY_ID).toBeUndefined();
    } finally {
      delete process.env.SERVER_ONLY_SECRET;
    }
  });

  it('resolves the AWS SDK the runtime provides, by ESM import and by require, when the asset does not ship it', async () => {
    const fn = await start({
      fn: await writeAsset(root, 'Sdk', {
        'index.mjs': [
          "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
          "import { createRequire } from 'node:module';",
          'const require = createRequire(import.meta.url);',
          "const sfn = require('@aws-sdk/client-sfn');",
          "const { HttpRequest } = require('@smithy/protocol-http');",
          'export const handler = async () => [typeof DynamoDBClient, typeof sfn.SFNClient, typeof HttpRequest];',
        ].join('\n'),
      }),
    });
    expect(await fn.invoke({})).toEqual(['function', 'function', 'function']);
  });

  it('fails every invocation with Runtime.ImportModuleError when the bundle imports a package it does not ship, even one installed above the asset', async () => {
    // A package beside the asset's folder: plain Node would find it walking up; Lambda has only /var/task and /var/runtime.
    await mkdir(join(root, 'node_modules', 'left-behind'), { recursive: true });
    await writeFile(join(root, 'node_modules', 'left-behind', 'package.json'), '{"name":"left-behind","main":"index.js"}');
    await writeFile(join(root, 'node_modules', 'left-behind', 'index.js'), 'module.exports = 1;');
    const fn = await start({
      fn: await writeAsset(root, 'Forgot', { 'index.mjs': "import value from 'left-behind';\nexport const handler = async () => value;" }),
    });
    for (const _attempt of [1, 2]) {
      const error = (await fn.invoke({}).catch((thrown: unknown) => thrown)) as LambdaFunctionError;
      expect(error).toBeInstanceOf(LambdaFunctionError);
      expect((error as LambdaFunctionError).payload).toMatchObject({
        errorType: 'Runtime.ImportModuleError',
        errorMessage: expect.stringContaining("Cannot find package 'left-behind'"),
      });
    }
    const required = await start({
      fn: await writeAsset(root, 'ForgotCjs', {
        'index.js': "const value = require('left-behind');\nexports.handler = async () => value;",
        'package.json': '{"type":"commonjs"}',
      }),
    });
    const error = (await required.invoke({}).catch((thrown: unknown) => thrown)) as LambdaFunctionError;
    expect(error.payload).toMatchObject({ errorType: 'Runtime.ImportModuleError', errorMessage: expect.stringContaining("Cannot find module 'left-behind'") });
  });

  it('runs a handler from .mjs, .js and .cjs, and names a missing export Runtime.HandlerNotFound', async () => {
    const cjs = await start({
      fn: await writeAsset(root, 'Cjs', { 'main.cjs': "exports.go = async (event) => ({ got: event.x, kind: 'cjs' });" }, { handler: 'main.go' }),
    });
    expect(await cjs.invoke({ x: 1 })).toEqual({ got: 1, kind: 'cjs' });
    const js = await start({
      fn: await writeAsset(root, 'Js', { 'index.js': 'export const handler = async () => "js";', 'package.json': '{"type":"module"}' }),
    });
    expect(await js.invoke({})).toBe('js');
    const missing = await start({ fn: await writeAsset(root, 'NoExport', { 'index.mjs': 'export const other = 1;' }) });
    const error = (await missing.invoke({}).catch((thrown: unknown) => thrown)) as LambdaFunctionError;
    expect(error.payload).toMatchObject({ errorType: 'Runtime.HandlerNotFound', errorMessage: 'index.handler is undefined or not exported' });
  });

  it('fails an invocation past its Timeout with the runtime error, and replaces the sandbox (the next one cold-starts)', async () => {
    const fn = await start({
      fn: await writeAsset(
        root,
        'Slow',
        {
          'index.mjs':
            'const sandbox = Math.random();\nexport const handler = async (event) => { await new Promise((r) => setTimeout(r, event.waitMs)); return sandbox; };',
        },
        { timeoutSeconds: 1 },
      ),
    });
    const first = await fn.invoke({ waitMs: 0 });
    const began = Date.now();
    const error = (await fn.invoke({ waitMs: 5_000 }).catch((thrown: unknown) => thrown)) as LambdaFunctionError;
    expect(Date.now() - began).toBeLessThan(2_500);
    expect(error).toBeInstanceOf(LambdaFunctionError);
    expect(error.payload.errorType).toBe('Sandbox.Timedout');
    expect(error.payload.errorMessage).toMatch(/^RequestId: [0-9a-f-]{36} Error: Task timed out after 1\.00 seconds$/);
    expect(lambdaErrorPayload(error)).toEqual(error.payload);
    const after = await fn.invoke({ waitMs: 0 });
    expect(after).not.toBe(first);
  });

  it("returns a thrown error in the runtime's shape: errorType, errorMessage and the stack as trace lines", async () => {
    const fn = await start({
      fn: await writeAsset(root, 'Throws', { 'index.mjs': "export const handler = async () => { throw new TypeError('bad input'); };" }),
    });
    const error = (await fn.invoke({}).catch((thrown: unknown) => thrown)) as LambdaFunctionError;
    expect(error.name).toBe('TypeError');
    expect(error.payload.errorType).toBe('TypeError');
    expect(error.payload.errorMessage).toBe('bad input');
    expect(error.payload.trace?.[0]).toBe('TypeError: bad input');
    expect(error.payload.trace?.some((line) => line.includes('index.mjs'))).toBe(true);
    // What the Step Functions facade makes of a thrown worker error is this very payload.
    expect(lambdaErrorPayload(error)).toEqual(error.payload);
  });

  it('gives the handler a Lambda-shaped context', async () => {
    const fn = await start({
      fn: await writeAsset(
        root,
        'Context',
        { 'index.mjs': 'export const handler = async (event, context) => ({ ...context, remaining: context.getRemainingTimeInMillis() });' },
        { timeoutSeconds: 7, memorySize: 512 },
      ),
    });
    const context = (await fn.invoke({})) as Record<string, unknown>;
    expect(context).toMatchObject({
      functionName: 'AsyncMcp-Context-ABCDEF123456',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-Context-ABCDEF123456',
      memoryLimitInMB: '512',
      logGroupName: '/aws/lambda/AsyncMcp-Context-ABCDEF123456',
      callbackWaitsForEmptyEventLoop: true,
    });
    expect(context.awsRequestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(context.logStreamName).toMatch(/^\d{4}\/\d{2}\/\d{2}\/\[\$LATEST\][0-9a-f]{32}$/);
    expect(context.remaining).toBeGreaterThan(6_000);
    expect(context.remaining).toBeLessThanOrEqual(7_000);
  });

  it('runs concurrent invocations in separate sandboxes, each initialized once, and reuses a warm one after', async () => {
    const fn = await start({
      fn: await writeAsset(root, 'Concurrent', {
        'index.mjs':
          "const sandbox = Math.random();\nconsole.log('init');\nexport const handler = async () => { await new Promise((r) => setTimeout(r, 300)); return sandbox; };",
      }),
      onLog: (line) => void (line.endsWith('\tINFO\tinit') && inits++),
    });
    let inits = 0;
    const [one, two] = await Promise.all([fn.invoke({}), fn.invoke({})]);
    expect(one).not.toBe(two);
    expect([one, two]).toContain(await fn.invoke({}));
    expect(inits).toBe(2);
  });

  it("sends console lines in the runtime's format, with the platform's START, END and REPORT lines", async () => {
    const lines: string[] = [];
    const fn = await start({
      fn: await writeAsset(root, 'Logs', {
        'index.mjs':
          "export const handler = async () => { console.log('hello %s', 'world'); console.error('oops'); process.stdout.write('raw line\\n'); return 1; };",
      }),
      onLog: (line) => lines.push(line),
    });
    await fn.invoke({});
    const first = lines.findIndex((line) => line.startsWith('START RequestId: '));
    const requestId = /START RequestId: (\S+) Version: \$LATEST/.exec(lines[first]!)![1]!;
    const after = lines.slice(first);
    expect(after[1]).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z\\t${requestId}\\tINFO\\thello world$`));
    expect(after[2]).toMatch(new RegExp(`\\t${requestId}\\tERROR\\toops$`));
    expect(after[3]).toBe('raw line');
    expect(after[4]).toBe(`END RequestId: ${requestId}`);
    expect(after[5]).toMatch(
      new RegExp(`^REPORT RequestId: ${requestId}\\tDuration: [\\d.]+ ms\\tBilled Duration: \\d+ ms\\tMemory Size: 256 MB\\tInit Duration: [\\d.]+ ms$`),
    );
  });

  it('gives the Init Duration of each cold start on its REPORT line and in coldStarts, and none for a warm invocation', async () => {
    const reports: string[] = [];
    const fn = await start({
      fn: await writeAsset(root, 'InitDuration', { 'index.mjs': 'export const handler = async () => 1;' }),
      onLog: (line) => void (line.startsWith('REPORT ') && reports.push(line)),
    });
    expect(fn.coldStarts).toEqual([]);
    await fn.invoke({});
    await fn.invoke({});
    expect(reports).toHaveLength(2);
    const reported = Number(/\tInit Duration: ([\d.]+) ms$/.exec(reports[0] ?? '')?.[1]);
    expect(fn.coldStarts).toHaveLength(1);
    const [coldStart] = fn.coldStarts;
    expect(coldStart?.initDurationMs.toFixed(2)).toBe(reported.toFixed(2));
    // The handler's import is part of the init, never more than it.
    expect(coldStart?.handlerImportMs).toBeGreaterThan(0);
    expect(coldStart?.handlerImportMs).toBeLessThanOrEqual(coldStart?.initDurationMs ?? 0);
    expect(reports[1]).not.toContain('Init Duration');
  });

  it('reads /var/task paths from the asset, as the function sees its asset mounted there', async () => {
    const fn = await start({
      fn: await writeAsset(root, 'TaskRoot', {
        'index.mjs':
          "import { readdir, readFile } from 'node:fs/promises';\nexport const handler = async () => ({ names: await readdir('/var/task/data'), text: await readFile('/var/task/data/a.txt', 'utf8') });",
        'data/a.txt': 'from the asset',
      }),
    });
    expect(await fn.invoke({})).toEqual({ names: ['a.txt'], text: 'from the asset' });
  });

  it('fails the invocation of an uncaught asynchronous error with that error, and replaces the sandbox', async () => {
    const fn = await start({
      fn: await writeAsset(root, 'Uncaught', {
        'index.mjs':
          "const sandbox = Math.random();\nexport const handler = async (event) => { if (event.crash) setTimeout(() => { throw new RangeError('late'); }, 10); else return sandbox; await new Promise((r) => setTimeout(r, 1000)); };",
      }),
    });
    const before = await fn.invoke({});
    const error = (await fn.invoke({ crash: true }).catch((thrown: unknown) => thrown)) as LambdaFunctionError;
    expect(error.payload).toMatchObject({ errorType: 'RangeError', errorMessage: 'late' });
    expect(await fn.invoke({})).not.toBe(before);
  });

  it('fails each invocation with the error a module throws at init, running the init again each time as a fresh sandbox would', async () => {
    let inits = 0;
    const fn = await start({
      fn: await writeAsset(root, 'InitThrows', { 'index.mjs': "console.log('init');\nthrow new Error('no config');\nexport const handler = async () => 1;" }),
      onLog: (line) => void (line.endsWith('\tINFO\tinit') && inits++),
    });
    for (const _attempt of [1, 2]) {
      const error = (await fn.invoke({}).catch((thrown: unknown) => thrown)) as LambdaFunctionError;
      expect(error.payload).toMatchObject({ errorType: 'Error', errorMessage: 'no config' });
    }
    expect(inits).toBe(2);
  });

  it('queues invocations past its concurrency cap until a sandbox is free', async () => {
    const fn = await start({
      fn: await writeAsset(root, 'Capped', {
        'index.mjs': 'const sandbox = Math.random();\nexport const handler = async () => { await new Promise((r) => setTimeout(r, 200)); return sandbox; };',
      }),
      maxConcurrency: 1,
    });
    const results = await Promise.all([fn.invoke({}), fn.invoke({}), fn.invoke({})]);
    expect(new Set(results).size).toBe(1);
  });

  it('returns what a streaming handler wrote as the payload of a plain invoke', async () => {
    const fn = await start({
      fn: await writeAsset(root, 'StreamPlain', {
        'index.mjs': "export const handler = awslambda.streamifyResponse(async (event, stream) => { stream.write('{\"ok\":'); stream.end('true}'); });",
      }),
    });
    expect(await fn.invoke({})).toEqual({ ok: true });
  });

  it('passes the event and the result as JSON, as an Invoke payload carries them, and fails a result over 6 MB', async () => {
    const fn = await start({
      fn: await writeAsset(root, 'Json', {
        'index.mjs': "export const handler = async (event) => event.big ? 'x'.repeat(6_300_000) : ({ event, at: new Date(0), gone: undefined });",
      }),
    });
    expect(await fn.invoke({ when: new Date(0), missing: undefined })).toEqual({ event: { when: '1970-01-01T00:00:00.000Z' }, at: '1970-01-01T00:00:00.000Z' });
    const error = (await fn.invoke({ big: true }).catch((thrown: unknown) => thrown)) as LambdaFunctionError;
    expect(error.payload.errorType).toBe('Function.ResponseSizeTooLarge');
  });

  it('streams what a streamifyResponse handler writes: the HttpResponseStream prelude, then each chunk as it is written', async () => {
    const fn = await start({
      fn: await writeAsset(root, 'Streams', {
        'index.mjs': [
          'export const handler = awslambda.streamifyResponse(async (event, responseStream) => {',
          "  const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: 201, headers: { 'content-type': 'text/event-stream' }, cookies: ['a=1'] });",
          "  stream.write('data: one\\n\\n');",
          '  await new Promise((r) => setTimeout(r, 300));',
          "  stream.write('data: two\\n\\n');",
          '  stream.end();',
          '});',
        ].join('\n'),
      }),
    });
    const { prelude, body, result } = await fn.invokeStreaming({});
    expect(result).toBeUndefined();
    expect(prelude).toEqual({ statusCode: 201, headers: { 'content-type': 'text/event-stream' }, cookies: ['a=1'] });
    const reader = body.getReader();
    const first = await reader.read();
    const firstAt = Date.now();
    expect(new TextDecoder().decode(first.value)).toBe('data: one\n\n');
    let rest = '';
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest += new TextDecoder().decode(next.value);
    expect(rest).toBe('data: two\n\n');
    // The first chunk came while the handler still waited to write the second.
    expect(Date.now() - firstAt).toBeGreaterThanOrEqual(250);
  });
  it('a reader that goes away mid-stream (a client that disconnected) leaves the invocation to finish: its later writes go nowhere, nothing throws', async () => {
    const fn = await start({
      fn: await writeAsset(root, 'StreamsAfterCancel', {
        'index.mjs': [
          'export const handler = awslambda.streamifyResponse(async (event, responseStream) => {',
          "  const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: 200, headers: { 'content-type': 'text/event-stream' } });",
          "  stream.write('data: one\\n\\n');",
          '  await new Promise((r) => setTimeout(r, 300));',
          "  stream.write('data: two\\n\\n');",
          '  stream.end();',
          '});',
        ].join('\n'),
      }),
    });
    const { body } = await fn.invokeStreaming({});
    const reader = body.getReader();
    await reader.read();
    await reader.cancel();
    // The sandbox finishes the invocation and is reused: the next one runs and ends normally.
    const again = await fn.invokeStreaming({});
    expect(await new Response(again.body).text()).toBe('data: one\n\ndata: two\n\n');
  });
});
