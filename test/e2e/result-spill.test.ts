/**
 * Issue 10, "Results of any size": the server spills outputs on its own. Over the local
 * stack (dynalite records, s3rver results), a state machine whose output JSON is exactly
 * the threshold (64 KiB) is answered inline; one byte more and the answer is a
 * resource_link whose resources/read gives back the very output. A synchronous call is
 * answered inline whatever the size: no client can read its record later.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { DEFAULT_SPILL_THRESHOLD_BYTES } from '../../lambdas/operations/result-store.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

let toolsDir: string;
let stack: LocalStack;

/** A hybrid STANDARD tool whose output is `{"echo":<text>}`: its size is the text's plus 11 bytes. */
async function writeEchoTool(dir: string) {
  await mkdir(join(dir, 'echo_text'));
  await writeFile(
    join(dir, 'echo_text', 'tool.json'),
    JSON.stringify({
      name: 'echo_text',
      description: 'Echoes its text as { echo }.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      invocation: 'both',
      workflowType: 'STANDARD',
      syncTimeoutSeconds: 30,
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

const OVERHEAD = '{"echo":""}'.length;

/** The tool's result for an output of `outputBytes`, as an operation a client polls (SEP-1391). */
async function echo(outputBytes: number) {
  const text = 'x'.repeat(outputBytes - OVERHEAD);
  const token = `spill-${outputBytes}-${Math.random()}`;
  ok(await legacyRequest(stack.url, 'tools/call', { name: 'echo_text', arguments: { text }, operation: { token, keepAlive: 600 } }));
  await pollUntilStatus(() => legacyRequest(stack.url, 'tools/async/status', { token }), ['completed']);
  return { text, result: ok(await legacyRequest(stack.url, 'tools/async/result', { token })).result };
}

beforeAll(async () => {
  toolsDir = await mkdtemp(join(tmpdir(), 'async-mcp-spill-'));
  await writeEchoTool(toolsDir);
  stack = await startTestStack({ toolsDir });
});
afterAll(async () => {
  await stack?.close();
  await rm(toolsDir, { recursive: true, force: true });
});

describe('server-side spill at the threshold (output JSON > 65,536 UTF-8 bytes is stored)', () => {
  it('an output of exactly the threshold comes back inline', async () => {
    const { text, result } = await echo(DEFAULT_SPILL_THRESHOLD_BYTES);
    expect(result.structuredContent).toEqual({ echo: text });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify({ echo: text }) }]);
  });

  it('an output of threshold + 1 bytes comes back as a resource_link, and resources/read returns exactly that output', async () => {
    const { text, result } = await echo(DEFAULT_SPILL_THRESHOLD_BYTES + 1);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content).toEqual([expect.objectContaining({ type: 'resource_link', mimeType: 'application/json', size: DEFAULT_SPILL_THRESHOLD_BYTES + 1 })]);
    const read = ok(await legacyRequest(stack.url, 'resources/read', { uri: result.content[0].uri }));
    expect(read.contents).toEqual([{ uri: result.content[0].uri, mimeType: 'application/json', text: JSON.stringify({ echo: text }) }]);
  });

  it('a synchronous call (an old client) gets an output over the threshold inline: its record is read by the call alone, so nothing is stored', async () => {
    const text = 'x'.repeat(DEFAULT_SPILL_THRESHOLD_BYTES + 1 - OVERHEAD);
    const result = ok(await legacyRequest(stack.url, 'tools/call', { name: 'echo_text', arguments: { text } }));
    expect(result.structuredContent).toEqual({ echo: text });
  });
});
