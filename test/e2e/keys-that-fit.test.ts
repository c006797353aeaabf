/**
 * Keys that fit: a SEP-1391 token may be up to 1,000 bytes, and result keys once embedded
 * it. 256 CJK characters (768 bytes, 1,024 in base64url) made a key of 1,088 bytes, past
 * S3's 1,024; locally s3rver then failed to create a file whose name was too long, and the
 * unhandled stream error ended the server process. Over the local stack, a result of
 * such a token, spilled by the server or written by a worker, is readable, and the server
 * still answers afterwards.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { datasetCsv } from '../../lambdas/examples/dataset-csv.ts';
import { DEFAULT_SPILL_THRESHOLD_BYTES } from '../../lambdas/operations/result-store.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

let toolsDir: string;
let stack: LocalStack;

/** A long-running tool whose output is `{"echo":<text>}`. */
async function writeEchoTool(dir: string) {
  await mkdir(join(dir, 'echo_text'));
  await writeFile(
    join(dir, 'echo_text', 'tool.json'),
    JSON.stringify({
      name: 'echo_text',
      description: 'Echoes its text as { echo }.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      invocation: 'async',
      workflowType: 'STANDARD',
    }),
  );
  await writeFile(
    join(dir, 'echo_text', 'definition.asl.json'),
    JSON.stringify({
      StartAt: 'Echo',
      TimeoutSeconds: 60,
      States: { Echo: { Type: 'Pass', Parameters: { 'echo.$': '$.arguments.text' }, End: true } },
    }),
  );
}

beforeAll(async () => {
  toolsDir = await mkdtemp(join(tmpdir(), 'async-mcp-keys-'));
  await writeEchoTool(toolsDir);
  await cp(join('state-machines', 'export_dataset'), join(toolsDir, 'export_dataset'), { recursive: true });
  stack = await startTestStack({ toolsDir });
});
afterAll(async () => {
  await stack?.close();
  await rm(toolsDir, { recursive: true, force: true });
});

/** A SEP-1391 token of 256 CJK characters: 768 UTF-8 bytes, within the 1,000 the server accepts. */
const longToken = (n: number) => `${n}`.padEnd(256, '長');

/** Starts `name` as a SEP-1391 operation of `token`, waits for it and returns its result. */
async function runToCompletion(name: string, args: Record<string, unknown>, token: string) {
  const started = ok(await legacyRequest(stack.url, 'tools/call', { name, arguments: args, operation: { token, keepAlive: 600 } }));
  expect(started.operation).toMatchObject({ status: 'working' });
  await pollUntilStatus(() => legacyRequest(stack.url, 'tools/async/status', { token }), ['completed', 'failed'], { timeout: 30_000 });
  // SEP-1391: the CallToolResult is the `result` of tools/async/result.
  return ok(await legacyRequest(stack.url, 'tools/async/result', { token })).result;
}

async function serverStillAnswers() {
  expect(ok(await legacyRequest(stack.url, 'ping'))).toEqual({});
  const tools = ok(await legacyRequest(stack.url, 'tools/list', {}, { capabilities: { experimental: { longRunningOperations: {} } } })).tools;
  expect(tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['echo_text', 'export_dataset']);
}

describe('a result of a 256-CJK-character token', () => {
  it('spilled by the server (output over the threshold) is readable through resources/read, and the server still answers', async () => {
    const token = longToken(1);
    expect(Buffer.byteLength(token)).toBeGreaterThan(700);
    const text = 'x'.repeat(DEFAULT_SPILL_THRESHOLD_BYTES);
    const result = await runToCompletion('echo_text', { text }, token);
    expect(result.content).toEqual([expect.objectContaining({ type: 'resource_link', mimeType: 'application/json' })]);
    const read = ok(await legacyRequest(stack.url, 'resources/read', { uri: result.content[0].uri }));
    expect(read.contents).toEqual([{ uri: result.content[0].uri, mimeType: 'application/json', text: JSON.stringify({ echo: text }) }]);
    await serverStillAnswers();
  });

  it('written by a worker (writeResult) is readable through resources/read, and the server still answers', async () => {
    const token = longToken(2);
    const result = await runToCompletion('export_dataset', { rows: 50, seed: 3 }, token);
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([expect.objectContaining({ type: 'resource_link', mimeType: 'text/csv' })]);
    const read = ok(await legacyRequest(stack.url, 'resources/read', { uri: result.content[0].uri }));
    expect(read.contents[0].text).toBe(datasetCsv(50, 3));
    await serverStillAnswers();
  });

  it('an ASCII token of 200 characters (one path segment past 255 bytes under the old keys) spills and reads back too', async () => {
    const token = 'k'.repeat(200);
    const text = 'y'.repeat(DEFAULT_SPILL_THRESHOLD_BYTES);
    const result = await runToCompletion('echo_text', { text }, token);
    const read = ok(await legacyRequest(stack.url, 'resources/read', { uri: result.content[0].uri }));
    expect(JSON.parse(read.contents[0].text)).toEqual({ echo: text });
    await serverStillAnswers();
  });
});
