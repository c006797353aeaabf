/**
 * `events/stream` in a Lambda invocation: it sends heartbeats carrying the cursor (not SSE
 * comments), ends cleanly with its final frame before the invocation's deadline so the
 * client reconnects with its cursor, and gives its lease back within the invocation.
 */
import { describe, expect, it } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { withInvocationDeadline } from '../../lambdas/mcp/listen/listen-deadline.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { buildToolCatalog } from '../../lambdas/tools/tool-catalog.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';

const MODERN = '2026-07-28';

function streamRequest(id: number): Request {
  const body = {
    jsonrpc: '2.0',
    id,
    method: 'events/stream',
    params: {
      name: 'operation.finished',
      cursor: null,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
      },
    },
  };
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'events/stream',
    },
    body: JSON.stringify(body),
  });
}

describe("events/stream near the invocation's deadline", () => {
  it('heartbeats with the cursor, ends with its final frame before the deadline, and gives its lease back within the invocation', async () => {
    const store = new InMemoryRecordStore();
    const app = createAsyncMcpApp({
      store,
      engine: new FakeWorkflowEngine(),
      catalog: buildToolCatalog([], () => 'arn:aws:states:us-east-1:000000000000:stateMachine:none'),
      secretKey: TEST_SECRET_KEY,
      logger: { error: () => undefined, warn: () => undefined },
      events: { log: new InMemoryEventLog(), heartbeatMs: 100, streamReadMs: 50, deadlineMarginMs: 5000, maxStreamsPerPrincipal: 1 },
    });
    const text = await withInvocationDeadline(Date.now() + 5600, async () => (await app.fetch(streamRequest(1), 'iam:arn:aws:iam::1:role/r')).text());
    const messages = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    expect(text).not.toContain(': keepalive');
    expect(messages[0]).toMatchObject({
      method: 'notifications/events/active',
      params: { truncated: false, _meta: { 'io.modelcontextprotocol/subscriptionId': 1 } },
    });
    const heartbeats = messages.filter((m) => m.method === 'notifications/events/heartbeat');
    expect(heartbeats.length).toBeGreaterThan(0);
    for (const beat of heartbeats) expect(beat.params).toEqual({ cursor: expect.any(String), _meta: { 'io.modelcontextprotocol/subscriptionId': 1 } });
    expect(messages.at(-1)).toEqual({ jsonrpc: '2.0', id: 1, result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 1 } } });
    // The lease (one stream per principal here) was given back before the invocation returned: a new stream opens at once.
    const again = await withInvocationDeadline(Date.now() + 5200, async () => (await app.fetch(streamRequest(2), 'iam:arn:aws:iam::1:role/r')).text());
    expect(again).toContain('notifications/events/active');
  });
});
