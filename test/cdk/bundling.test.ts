/**
 * Really bundles every Lambda with the local esbuild (no Docker), once, and checks the
 * assets: ESM entry files that parse, the MCP bundle's size and contents, the tool folders
 * and the operation card inside the MCP Lambda's asset,
 * and that each bundle loads where only the AWS SDK is provided, as on Lambda (the MCP
 * bundle with the runtime's `awslambda` global, since it streams its responses).
 */
import { functionUrlEvent } from '../support/function-url-event.ts';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { IConstruct } from 'constructs';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { DURABLE_FUNCTION_ARN_PREFIX_ENV } from '../../lambdas/tools/durable-function-names.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../../lambdas/tools/state-machine-names.ts';
import { DEFINITION_FILE, DURABLE_FILE, TOOL_FILE } from '../../lambdas/tools/tool-folder.ts';
import { buildOperationCardHtml } from '../../lambdas/mcp/apps/build-operation-card.ts';
import { CARD_ASSET_FILE } from '../../lambdas/mcp/apps/card-resource.ts';
import { REQUIRED_SDK_PACKAGES } from '../../cdk/lambda-bundling.ts';
import { TRACING_SDK_PACKAGE } from '../../lambdas/observability/tracing-setup.ts';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import { BUNDLED_TOOLS_DIR } from '../../cdk/tool-asset-commands.ts';
import { bundledSynthFixture } from './bundled-synth-fixture.ts';
import { toolsWithInputFixtures } from './cdk-test-app.ts';

// With the input fixtures, so the built-in request_input worker is bundled too.
const synth = bundledSynthFixture(toolsWithInputFixtures);
const scratch: string[] = [];

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** The files a function's bundle was built from, as its source map lists them. */
function sourcesOf(fn: IConstruct): string[] {
  return (JSON.parse(readFileSync(join(synth.assetDirOf(fn), 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources;
}

/** Copies an asset where only `@aws-sdk/*` resolves, as in the Lambda Node.js runtime. */
function lambdaLikeCopy(assetDir: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'async-mcp-asset-'));
  scratch.push(dir);
  cpSync(assetDir, dir, { recursive: true });
  // The asset may hold node_modules of its own: the packages it loads lazily.
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules', '@aws-sdk'), join(dir, 'node_modules', '@aws-sdk'));
  return dir;
}

/** Runs an ES module script in a fresh Node process in `cwd`. */
function runNode(cwd: string, script: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', NODE_NO_WARNINGS: '1', ...env },
    timeout: 60_000,
  });
}

function allFunctions(): [string, IConstruct][] {
  return [
    ['mcp', synth.stack.server.mcpFunction],
    ['status-sync', synth.stack.server.statusSync!.function.function],
    ['events-delivery', synth.stack.server.events.deliveryFunction!.function],
    ...[...synth.stack.server.workerFunctions].map(([name, fn]): [string, IConstruct] => [`worker ${name}`, fn]),
    ...[...synth.stack.server.durableToolFunctions].map(([name, tool]): [string, IConstruct] => [`durable tool ${name}`, tool.function]),
  ];
}

describe('bundled assets', () => {
  it('are one ESM file per function, with a source map, that Node parses', () => {
    for (const [name, fn] of allFunctions()) {
      const dir = synth.assetDirOf(fn);
      expect(existsSync(join(dir, 'index.mjs')), name).toBe(true);
      expect(existsSync(join(dir, 'index.mjs.map')), name).toBe(true);
      const check = spawnSync(process.execPath, ['--check', join(dir, 'index.mjs')], { encoding: 'utf8' });
      expect(check.status, `${name}: ${check.stderr}`).toBe(0);
    }
  });

  it('leave the AWS SDK to the runtime, required rather than imported, and load the S3 client only when a large result needs it', () => {
    const mcp = readFileSync(join(synth.assetDirOf(synth.stack.server.mcpFunction), 'index.mjs'), 'utf8');
    // A require of CommonJS costs a cold start about half of what an ESM import of it costs.
    for (const name of REQUIRED_SDK_PACKAGES) {
      expect(mcp, name).toContain(`"${name}"`);
      expect(mcp, name).not.toMatch(new RegExp(`from\\s*"${name}"`));
    }
    // A static import would load the S3 client at every cold start (about 200 ms).
    expect(mcp).toMatch(/import\(\s*"@aws-sdk\/client-s3"\s*\)/);
    expect(mcp).not.toMatch(/from\s*"@aws-sdk\/client-s3"/);
    // The server key is read on the first request that signs state, never at init.
    expect(mcp).toMatch(/import\(\s*"@aws-sdk\/client-secrets-manager"\s*\)/);
    expect(mcp).not.toMatch(/from\s*"@aws-sdk\/client-secrets-manager"/);
  });

  it('leave the AWS SDK to the runtime in every bundle, the built-in workers included', () => {
    for (const [name, fn] of allFunctions()) {
      const code = readFileSync(join(synth.assetDirOf(fn), 'index.mjs'), 'utf8');
      // An external module stays a specifier: imported, or the name a require shim passes to the runtime.
      const mentions = [...code.matchAll(/(.{0,8})"@aws-sdk\/[a-z0-9-]+"/g)].map((match) => match[1]!);
      expect(
        mentions.every((before) => /(from\s*|import\(\s*|[\w$]=)$/.test(before)),
        name,
      ).toBe(true);
      // No SDK source in the bundle: the source map lists every bundled file.
      expect(
        sourcesOf(fn).filter((source) => source.includes('node_modules/@aws-sdk/')),
        name,
      ).toEqual([]);
    }
    const requestInput = readFileSync(join(synth.assetDirOf(synth.stack.server.workerFunctions.get('request_input')!), 'index.mjs'), 'utf8');
    expect(requestInput).toContain('"@aws-sdk/client-dynamodb"');
  });

  it('keep the MCP bundle within 623 KB, the AWS SDK left out', () => {
    const size = statSync(join(synth.assetDirOf(synth.stack.server.mcpFunction), 'index.mjs')).size;
    // 499 KB before subscriptions/listen (+8 KB), 518 KB before the operation card (+8 KB) and the
    // Events extension (+42 KB): 568 KB; 579 KB with the clients built on first need and the poll's read
    // signed from the Lambda environment (its signer ships beside the bundle); 586 KB with Events that
    // lose no end (the handover, the subscription slots, the end's own job); 595 KB with durable tools
    // (589 KB before: their engine, the routing between engines and the function names, +6 KB, the
    // Lambda client left to the runtime and loaded on first use); 597 KB with the poll's read signed
    // by its own signer (hot-read-signer.ts, +2 KB; the 16 KB signer shipped beside the bundle is
    // gone); 601 KB with polls answered by the edge itself (direct-answer.ts and the dialects' reads
    // it runs, +4 KB, a fifth of a poll's CPU); 605 KB with questions and notices never lost (the
    // events' wiring checked at startup, the end job's owed progress reports, the subscribe's second
    // read under a lagging index, Lambda's closed callbacks, +4 KB). Its cold import is measured by `npm run bench -- --only=bundle`.
    // 623 KB with one trace per operation: OpenTelemetry's API (10 KB; its SDK is never bundled here) and the request span (4 KB);
    // 628 KB with a start's writes over the hot call and the tracing wrapper, then 620 KB with the Events parts only the local
    // stack runs (webhook delivery, the in-memory log and stores, the in-process queue, 8 KB) left to its app (async-mcp-app.ts);
    // 621 KB with an answer kept for a retried ask and the hot wires' notices; 623 KB with plain starts answered
    // by the edge itself (the routing shared with the SDK path and the three dialects' start answers, +2 KB).
    expect(size).toBeLessThanOrEqual(623_000);
  });

  it("carry one JSON Schema engine in the MCP bundle: neither our Ajv nor the MCP SDK's", () => {
    const sources = sourcesOf(synth.stack.server.mcpFunction);
    expect(sources.filter((source) => /node_modules\/ajv\/|ajvProvider/.test(source))).toEqual([]);
    expect(sources.some((source) => source.includes('node_modules/@cfworker/json-schema/'))).toBe(true);
  });

  it('ship jose beside the MCP bundle, where its lazy import finds it, instead of in it', () => {
    const assetDir = synth.assetDirOf(synth.stack.server.mcpFunction);
    const mcp = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
    expect(mcp).toMatch(/import\(\s*"jose"\s*\)/);
    expect(mcp).not.toMatch(/from\s*"jose"/);
    expect(sourcesOf(synth.stack.server.mcpFunction).filter((source) => source.includes('node_modules/jose/'))).toEqual([]);
    const dir = lambdaLikeCopy(assetDir);
    const run = runNode(
      dir,
      "const jose = await import('jose'); console.log(typeof jose.jwtVerify, typeof jose.createRemoteJWKSet, import.meta.resolve('jose'));",
    );
    expect(run.stdout.trim(), run.stderr).toBe(`function function ${pathToFileURL(join(dir, 'node_modules', 'jose', 'index.js')).href}`);
    // The other functions never verify tokens.
    expect(existsSync(join(synth.assetDirOf(synth.stack.server.statusSync!.function.function), 'node_modules', 'jose'))).toBe(false);
  });

  it("ship OpenTelemetry's SDK beside every function's bundle, where its import by name finds it, and never in it", () => {
    for (const [name, fn] of allFunctions()) {
      const assetDir = synth.assetDirOf(fn);
      expect(
        sourcesOf(fn).filter((source) => /node_modules\/@opentelemetry\/(?!api\/)|observability\/tracing-sdk\.ts$/.test(source)),
        name,
      ).toEqual([]);
      expect(existsSync(join(assetDir, 'node_modules', TRACING_SDK_PACKAGE, 'index.js')), name).toBe(true);
    }
    // Loaded as the bundles load it: a CommonJS module whose named exports an ES import sees.
    const dir = lambdaLikeCopy(synth.assetDirOf(synth.stack.server.statusSync!.function.function));
    const run = runNode(dir, `const sdk = await import(${JSON.stringify(TRACING_SDK_PACKAGE)}); console.log(typeof sdk.startTracingSdk);`);
    expect(run.stdout.trim(), run.stderr).toBe('function');
  });

  it("sign a poll's GetItem without @smithy/signature-v4, neither bundled nor shipped beside the bundle", () => {
    const assetDir = synth.assetDirOf(synth.stack.server.mcpFunction);
    const mcp = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
    expect(mcp).not.toMatch(/@smithy\/signature-v4/);
    expect(mcp).toMatch(/AWS4-HMAC-SHA256/);
    expect(sourcesOf(synth.stack.server.mcpFunction).filter((source) => source.includes('node_modules/@smithy/signature-v4/'))).toEqual([]);
    expect(existsSync(join(assetDir, 'node_modules', '@smithy', 'signature-v4'))).toBe(false);
  });

  it("carry every tool's tool.json and definition.asl.json, or durable.ts, in the MCP Lambda's asset", () => {
    const bundled = join(synth.assetDirOf(synth.stack.server.mcpFunction), BUNDLED_TOOLS_DIR);
    expect(synth.tools.some((tool) => tool.durable)).toBe(true);
    for (const tool of synth.tools) {
      // The deployed loader tells a durable tool by its durable.ts.
      for (const file of [TOOL_FILE, tool.durable ? DURABLE_FILE : DEFINITION_FILE]) {
        // A tool defined in its durable.ts (defineTool) gets the tool.json synth derived from it.
        const source = file === TOOL_FILE && tool.durable?.defined ? `${JSON.stringify(tool.config, null, 2)}\n` : readFileSync(join(tool.dir, file), 'utf8');
        expect(readFileSync(join(bundled, tool.config.name, file), 'utf8'), `${tool.config.name}/${file}`).toBe(source);
      }
    }
    // Workers and status sync do not need them.
    expect(existsSync(join(synth.assetDirOf(synth.stack.server.statusSync!.function.function), BUNDLED_TOOLS_DIR))).toBe(false);
  });

  it("carry the operation card in the MCP Lambda's asset, beside the bundle, as the synth built it, and in no other", () => {
    const card = join(synth.assetDirOf(synth.stack.server.mcpFunction), CARD_ASSET_FILE);
    expect(readFileSync(card, 'utf8')).toBe(buildOperationCardHtml());
    expect(existsSync(join(synth.assetDirOf(synth.stack.server.statusSync!.function.function), CARD_ASSET_FILE))).toBe(false);
  });

  it('load with only the AWS SDK available, each exporting handler', () => {
    for (const [name, fn] of allFunctions()) {
      if (fn === synth.stack.server.mcpFunction) continue;
      const dir = lambdaLikeCopy(synth.assetDirOf(fn));
      const run = runNode(dir, "const m = await import('./index.mjs'); console.log(typeof m.handler);", {
        [ENV.tableName]: 'operations',
        [ENV.resultsBucket]: 'results',
        // The delivery function builds its job runner at init from these (nothing is sent).
        [ENV.eventsDeliveryQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/events-delivery',
        [ENV.secretArn]: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:server-key-AbCdEf',
      });
      expect(`${run.stdout}${run.stderr}`.trim(), name).toBe('function');
    }
  });

  /** Runs the MCP bundle's handler on one Function URL event, as the Lambda runtime would. */
  function runMcpBundle(authorizer: object | undefined, environment: Record<string, string> = {}) {
    const dir = lambdaLikeCopy(synth.assetDirOf(synth.stack.server.mcpFunction));
    const event = functionUrlEvent({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, authorizer);
    // The Lambda Node.js runtime's global, as far as the handler uses it.
    return runNode(
      dir,
      `import { Writable } from 'node:stream';
       let streamified = false;
       let prelude;
       globalThis.awslambda = {
         streamifyResponse: (handler) => { streamified = true; return handler; },
         HttpResponseStream: { from: (stream, metadata) => { prelude = metadata; return stream; } },
       };
       const { handler } = await import('./index.mjs');
       const chunks = [];
       const stream = new Writable({ write(chunk, _encoding, callback) { chunks.push(Buffer.from(chunk)); callback(); } });
       await handler(${JSON.stringify(event)}, stream, {});
       // The AWS SDK packages the cold start and the request loaded (the require shims fill the CommonJS cache).
       const { createRequire } = await import('node:module');
       const cached = Object.keys(createRequire(import.meta.url).cache);
       const sdk = [...new Set(cached.flatMap((path) => {
         const rest = path.split('node_modules/').at(-1) ?? '';
         return rest.startsWith('@aws-sdk/') ? [rest.split('/').slice(0, 2).join('/')] : [];
       }))].sort();
       console.log(JSON.stringify({ streamified, prelude, body: Buffer.concat(chunks).toString(), finished: stream.writableFinished, sdk }));`,
      {
        [ENV.tableName]: 'operations',
        [ENV.resultsBucket]: 'results',
        [ENV.secretArn]: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:server-key-AbCdEf',
        [STATE_MACHINE_ARN_PREFIX_ENV]: 'arn:aws:states:us-east-1:123456789012:stateMachine:Test-',
        [DURABLE_FUNCTION_ARN_PREFIX_ENV]: 'arn:aws:lambda:us-east-1:123456789012:function:Test-',
        // The same layout as /var/task on Lambda.
        [ENV.toolsDir]: join(dir, BUNDLED_TOOLS_DIR),
        ...environment,
      },
    );
  }

  // The caller an AWS_IAM Function URL verified (the default auth).
  const signedCaller = {
    iam: {
      accountId: '123456789012',
      callerId: 'AROAEXAMPLE:session',
      userArn: 'arn:aws:sts::123456789012:assumed-role/McpClient/session',
      userId: 'AROAEXAMPLE',
    },
  };

  it('refuse, from the MCP bundle, a request under AWS_IAM that carries no verified caller (403, never anonymous)', () => {
    const run = runMcpBundle(undefined);
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { prelude: { statusCode: number }; body: string };
    expect(result.prelude.statusCode).toBe(403);
    expect(JSON.parse(result.body)).toMatchObject({ error: 'forbidden' });
  });

  it('answer, from the MCP bundle with OAuth on, a request without a token with 401 naming the metadata at the Function URL', () => {
    const run = runMcpBundle(undefined, { ASYNC_MCP_AUTH: 'oauth', ASYNC_MCP_OAUTH_ISSUER: 'https://issuer.example.com' });
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { prelude: { statusCode: number; headers: Record<string, string> } };
    expect(result.prelude.statusCode).toBe(401);
    expect(result.prelude.headers['www-authenticate']).toBe(
      'Bearer resource_metadata="https://example.lambda-url.us-east-1.on.aws/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it('serve tools/list from the MCP bundle, streamed through the awslambda global, reading the bundled tool folders', () => {
    const run = runMcpBundle(signedCaller);
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
      streamified: boolean;
      prelude: { statusCode: number };
      body: string;
      finished: boolean;
    };
    expect(result.streamified).toBe(true);
    expect(result.prelude.statusCode).toBe(200);
    expect(result.finished).toBe(true);
    // Old clients see the sync and hybrid tools (async-only tools are hidden from them).
    const listed = synth.tools.filter((tool) => tool.config.invocation !== 'async').map((tool) => tool.config.name);
    for (const name of listed) expect(result.body).toContain(`"name":"${name}"`);
  });

  it('load neither the Lambda nor the Step Functions client for a cold start and tools/list, durable tools listed among the rest', () => {
    const run = runMcpBundle(signedCaller);
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { body: string; sdk: string[] };
    const durable = synth.tools.filter((tool) => tool.durable && tool.config.invocation !== 'async');
    expect(durable.length).toBeGreaterThan(0);
    for (const tool of durable) expect(result.body).toContain(`"name":"${tool.config.name}"`);
    // Each engine's client loads on its first call: a start, a cancel, an answer.
    expect(result.sdk).not.toContain('@aws-sdk/client-lambda');
    expect(result.sdk).not.toContain('@aws-sdk/client-sfn');
    // The control: util-dynamodb is required at init through the same shims, so the cache shows what loaded.
    expect(result.sdk).toContain('@aws-sdk/util-dynamodb');
  });

  it('bundle each durable tool with the durable execution SDK and the async-mcp/durable helpers inside, the AWS SDK left to the runtime', () => {
    for (const [name, tool] of synth.stack.server.durableToolFunctions) {
      const sources = sourcesOf(tool.function);
      expect(
        sources.some((source) => source.includes('node_modules/@aws/durable-execution-sdk-js/')),
        name,
      ).toBe(true);
      expect(
        sources.some((source) => source.endsWith(`state-machines/${name}/durable.ts`)),
        name,
      ).toBe(true);
      const code = readFileSync(join(synth.assetDirOf(tool.function), 'index.mjs'), 'utf8');
      expect(code, name).not.toMatch(/from\s*"async-mcp\/durable"/);
      expect(code, name).not.toMatch(/from\s*"@aws-sdk\/client-lambda"/);
    }
    // The tools that import the helpers have them inlined, as esbuild resolves async-mcp/durable through tsconfig.json's paths.
    const usingHelpers = synth.tools.filter((tool) => tool.durable && /from\s+['"]async-mcp\/durable['"]/.test(readFileSync(tool.durable.file, 'utf8')));
    expect(usingHelpers.length).toBeGreaterThan(0);
    for (const tool of usingHelpers) {
      const fn = synth.stack.server.durableToolFunctions.get(tool.config.name)!.function;
      expect(
        sourcesOf(fn).some((source) => source.includes('lambdas/durable/')),
        tool.config.name,
      ).toBe(true);
    }
  });
});
