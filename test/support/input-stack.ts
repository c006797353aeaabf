/**
 * The local stack with the input fixture tools, plus what the input tests need around it:
 * a second, fresh app instance over the same stores and secret (an answer it takes proves
 * nothing waits in memory), and an initialize-era session that declares capabilities.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAsyncMcpApp, type AsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { DynamoDbRecordStore } from '../../lambdas/aws/dynamodb-record-store.ts';
import { StepFunctionsEngine } from '../../lambdas/aws/step-functions-engine.ts';
import { localSecretKey } from '../../local/secretsmanager/local-secret.ts';
import type { LocalStack, LocalStackOptions } from '../../local/local-stack.ts';
import { startTestStack } from './local-stack-fixture.ts';
import { openStream } from './sse-reader.ts';

export interface InputStack {
  stack: LocalStack;
  /** A second app instance over the same table, engine and secret, built fresh. */
  freshInstance(): AsyncMcpApp;
  close(): Promise<void>;
}

/**
 * The stack on a data directory of its own, so a second instance can share its secret.
 * Handle tools are off unless asked: the input tests check the synchronous calls of
 * clients without async support (handle-tools-input.test.ts covers the default).
 */
export async function startInputStack(options: Pick<LocalStackOptions, 'handleTools'> = {}): Promise<InputStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'async-mcp-input-'));
  const handleTools = options.handleTools ?? false;
  const stack = await startTestStack({ toolsDir: 'test/fixtures/input-tools', dataDir, handleTools });
  const secretKey = localSecretKey(join(dataDir, 'secret.key'));
  return {
    stack,
    freshInstance: () =>
      createAsyncMcpApp({
        store: new DynamoDbRecordStore({ client: stack.awsClients.dynamodb, tableName: stack.dynamo.tableName }),
        engine: new StepFunctionsEngine(stack.awsClients.sfn),
        catalog: stack.catalog,
        secretKey,
        logger: { error: () => undefined, warn: () => undefined },
        // The same settings as the stack's: the fresh instance serves what the first one served.
        handleTools,
      }),
    close: async () => {
      await stack.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** POSTs a JSON-RPC message to an app instance directly, as the local principal (no bearer token). */
export async function postTo(app: AsyncMcpApp, url: URL, message: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const request = new Request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(message),
  });
  const response = await app.fetch(request, 'local');
  return { status: response.status, text: await response.text() };
}

/** Initializes with `capabilities` and returns the session id the server answered (absent when none). */
export async function initialize(
  url: URL,
  capabilities: Record<string, unknown>,
  headers: Record<string, string> = {},
  version = '2025-11-25',
): Promise<string | undefined> {
  const params = { protocolVersion: version, capabilities, clientInfo: { name: 'raw-input-test', version: '1.0.0' } };
  const stream = await openStream(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params }, { 'mcp-protocol-version': version, ...headers });
  const [answer] = await stream.rest();
  if (!answer?.result) throw new Error(`initialize failed: ${JSON.stringify(answer)}`);
  return stream.headers.get('mcp-session-id') ?? undefined;
}
