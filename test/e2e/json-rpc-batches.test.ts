/**
 * JSON-RPC batches per protocol revision, on the local stack: "Remove support for
 * JSON-RPC batching" (2025-06-18 changelog), so batches are refused from that revision
 * on (and on 2026-07-28); 2025-03-26 and older still get them, up to 10 messages.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest, MODERN_VERSION, postRaw } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
const batchOf = (size: number) => Array.from({ length: size }, (_, i) => list(i + 1));

function postBatch(batch: unknown[], version?: string, headers: Record<string, string> = {}) {
  return postRaw(stack.url, JSON.stringify(batch), { ...(version ? { 'mcp-protocol-version': version } : {}), ...headers });
}

/** Every JSON-RPC response in an SSE or JSON body. */
function responsesIn(text: string): Array<{ id: unknown; result: { tools: Array<{ name: string }> }; error?: unknown }> {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) return [JSON.parse(trimmed)].flat();
  return trimmed
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)))
    .filter((message) => 'result' in message || 'error' in message);
}

describe.each([
  ['2025-03-26', '2025-03-26'],
  ['2024-11-05', '2024-11-05'],
  ['no MCP-Protocol-Version header (taken as 2025-03-26)', undefined],
])('batches for %s', (_label, version) => {
  it('are served: every request gets its response', async () => {
    const response = await postBatch(batchOf(2), version);
    expect(response.status).toBe(200);
    const responses = responsesIn(response.text);
    expect(responses.map((r) => r.id).sort()).toEqual([1, 2]);
    for (const r of responses) expect(r.result.tools.map((t: { name: string }) => t.name)).toContain('quick_calculation');
  });

  it('hold at most 10 messages: 11 are refused with HTTP 400 and -32600', async () => {
    expect((await postBatch(batchOf(10), version)).status).toBe(200);
    const refused = await postBatch(batchOf(11), version);
    expect(refused.status).toBe(400);
    expect(rpcError(refused)).toEqual({ code: -32600, message: 'Invalid Request: a JSON-RPC batch may hold at most 10 messages' });
  });
});

describe.each(['2025-06-18', '2025-11-25'])('batches for %s', (version) => {
  it('are refused with HTTP 400 and -32600: the revision removed them', async () => {
    const refused = await postBatch(batchOf(2), version);
    expect(refused.status).toBe(400);
    expect(rpcError(refused)).toEqual({
      code: -32600,
      message: `Invalid Request: JSON-RPC batches are not supported in protocol revision ${version} (removed in 2025-06-18); send one message per request`,
    });
    // One message per request still works.
    expect(ok(await legacyRequest(stack.url, 'tools/list', {}, { version })).tools.length).toBeGreaterThan(0);
  });
});

describe('batches for 2026-07-28', () => {
  it('are refused with HTTP 400 and -32600, with or without the per-request envelope', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
      'io.modelcontextprotocol/clientInfo': { name: 'batch-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const modern = [1, 2].map((id) => ({ ...list(id), params: { _meta: envelope } }));
    for (const batch of [modern, batchOf(2)]) {
      const refused = await postBatch(batch, MODERN_VERSION, { 'mcp-method': 'tools/list' });
      expect(refused.status).toBe(400);
      expect(rpcError(refused)).toMatchObject({ code: -32600, message: expect.stringContaining(`protocol revision ${MODERN_VERSION}`) });
    }
  });
});

describe('a 2025-03-26 batch', () => {
  it('of notifications is acknowledged with 202 after its work is done: a cancel in it has stopped the operation', async () => {
    const headers = { authorization: `Bearer ${randomUUID()}`, 'mcp-protocol-version': '2025-03-26' };
    const token = `tok-${randomUUID()}`;
    const started = await legacyRequest(
      stack.url,
      'tools/call',
      { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 600 }, operation: { token } },
      { headers, version: '2025-03-26' },
    );
    expect(ok(started).operation.status).toBe('working');
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0, _operation: { token } } };
    const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } };
    expect((await postBatch([progress, cancel], '2025-03-26', headers)).status).toBe(202);
    expect(ok(await legacyRequest(stack.url, 'tools/async/status', { token }, { headers, version: '2025-03-26' })).status).toBe('canceled');
  });
});
