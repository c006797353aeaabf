/**
 * The real MCP Lambda bundle, built with the settings `cdk deploy` uses (cdk/lambda-bundling.ts)
 * into a folder outside the repository, runs in a local sandbox behind an AWS_IAM,
 * RESPONSE_STREAM Function URL: a real MCP client signing with the local key lists the
 * repository's tools. The AWS SDK comes from the runtime stand-in, the tools from
 * /var/task/state-machines as the template's TOOLS_DIR says.
 */
import { cp, mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esbuildOptions, FUNCTION_NODE_OPTIONS, lazyModuleOptions, MCP_LAZY_MODULES } from '../../../cdk/lambda-bundling.ts';
import { DEFAULT_TOOLS_DIR, MCP_HTTP_ENTRY, REPO_ROOT } from '../../../cdk/repo-paths.ts';
import { toolFileManifest } from '../../../cdk/tool-asset-commands.ts';
import { loadToolFolders } from '../../../lambdas/tools/tool-folder.ts';
import { sigV4Fetch } from '../../../client/index.ts';
import { serveFunctionUrl, type FunctionUrlAuthority } from '../../../local/lambda/function-url-server.ts';
import { startLocalFunction, type LocalFunction } from '../../../local/lambda/local-function.ts';
import { assetRoot, writeAsset } from './lambda-assets.ts';

const CALLER_ARN = 'arn:aws:sts::000000000000:assumed-role/async-mcp-local-caller/local';
const authority: FunctionUrlAuthority = {
  localCaller: { accessKeyId: 'local', secretAccessKey: 'local', assumedRoleArn: CALLER_ARN, userId: 'AROALOCALCALLER:local', accountId: '000000000000' },
  authorize: () => ({ allowed: true }),
};

let removeRoot: () => Promise<void>;
let fn: LocalFunction | undefined;
let served: { url: URL; close(): Promise<void> } | undefined;
const logs: string[] = [];

beforeAll(async () => {
  const assets = await assetRoot();
  removeRoot = assets.remove;
  const deployed = await writeAsset(
    assets.root,
    'Mcp',
    {},
    {
      timeoutSeconds: 75,
      memorySize: 1024,
      environment: {
        NODE_OPTIONS: FUNCTION_NODE_OPTIONS,
        OPERATIONS_TABLE_NAME: 'AsyncMcp-ServerOperationsTable-ABCDEF123456',
        TOOL_STATE_MACHINE_ARN_PREFIX: 'arn:aws:states:us-east-1:000000000000:stateMachine:AsyncMcp-Server-02456313-',
        TOOL_DURABLE_FUNCTION_ARN_PREFIX: 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-Server-02456313-',
        TOOLS_DIR: '/var/task/state-machines',
        RESULTS_BUCKET_NAME: 'asyncmcp-results-abcdef123456',
        ASYNC_MCP_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:ServerKey-AbCdEf',
        ASYNC_MCP_AUTH: 'iam',
        POWERTOOLS_SERVICE_NAME: 'async-mcp',
      },
    },
  );
  await mkdir(deployed.assetDir, { recursive: true });
  await build(esbuildOptions(MCP_HTTP_ENTRY, join(deployed.assetDir, 'index.mjs'), REPO_ROOT, MCP_LAZY_MODULES));
  for (const name of MCP_LAZY_MODULES) await build(lazyModuleOptions(name, deployed.assetDir, REPO_ROOT));
  // What the synth copies into the asset: each tool's tool.json (derived, for a defineTool one), and its definition or durable.ts.
  for (const { target, files, write = {} } of toolFileManifest(await loadToolFolders(DEFAULT_TOOLS_DIR))) {
    await mkdir(join(deployed.assetDir, target), { recursive: true });
    for (const file of files) await cp(file, join(deployed.assetDir, target, basename(file)));
    for (const [name, text] of Object.entries(write)) await writeFile(join(deployed.assetDir, target, name), text);
  }
  fn = await startLocalFunction({
    fn: deployed,
    // No service is reached to list tools; the endpoints point nowhere on purpose.
    runtimeEnvironment: {
      AWS_ACCESS_KEY_ID: 'ASIALOCALMCP',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'token',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
    },
    onLog: (line) => logs.push(line),
  });
  served = await serveFunctionUrl({
    url: { logicalId: 'McpUrl', targetFunctionLogicalId: deployed.logicalId, authType: 'AWS_IAM', invokeMode: 'RESPONSE_STREAM' },
    fn,
    functionArn: deployed.arn,
    host: '127.0.0.1',
    port: 0,
    path: '/mcp',
    iam: authority,
  });
}, 120_000);

afterAll(async () => {
  await served?.close();
  await fn?.close();
  await removeRoot?.();
});

describe('the MCP bundle as deployed', () => {
  it('serves a SigV4-signing MCP client the repository tools, read from /var/task/state-machines', async () => {
    const client = new Client({ name: 'bundle-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const signed = sigV4Fetch({ region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    await client.connect(new StreamableHTTPClientTransport(served!.url, { fetch: (input, init) => signed(String(input), init ?? {}) }));
    try {
      const { tools } = await client.listTools();
      // A client that declares no long-running support sees every tool, and the handle tools
      // (on by default) to collect the long ones with.
      const visible: string[] = ['operation_cancel', 'operation_list', 'operation_result', 'operation_status'];
      for (const entry of await readdir(DEFAULT_TOOLS_DIR, { withFileTypes: true })) {
        if (entry.isDirectory()) visible.push(entry.name);
      }
      expect(visible.length).toBeGreaterThan(0);
      expect(tools.map((tool) => tool.name).sort()).toEqual(visible.sort());
    } finally {
      await client.close();
    }
    expect(logs.some((line) => line.startsWith('REPORT RequestId: '))).toBe(true);
  });

  it('refuses the same request unsigned, with 403 Forbidden', async () => {
    const response = await fetch(served!.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toBe('{"Message":"Forbidden"}');
  });
});
