/**
 * Poll (`events/poll`) and push (`events/stream`) on the local stack with raw JSON-RPC:
 * occurrences appended by status sync and the run-report worker, replay from a cursor,
 * `truncated`, the same eventIds in both modes, principal isolation, the per-operation
 * progress stream ending with its operation, and `eventSource` in CreateTaskResult.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { expectStatsOf } from '../support/expected-stats.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { MODERN_VERSION, modernRequest } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';
import { openStream, type JsonRpcMessage, type OpenStream } from '../support/sse-reader.ts';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const TASKS_AND_EVENTS = { extensions: { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/events': {} } };
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const alice = { authorization: 'Bearer alice-events' };
const bob = { authorization: 'Bearer bob-events' };

let stack: LocalStack;

beforeAll(async () => {
  // Two push streams per principal, so the cap is reached with a few.
  stack = await startTestStack({ waitTimeScale: 0.01, events: { maxStreamsPerPrincipal: 2 } });
});
afterAll(async () => {
  await stack?.drainEvents();
  await stack?.close();
});

async function startTask(tool: string, args: Record<string, unknown>, headers: Record<string, string>, capabilities = TASKS) {
  return ok(await modernRequest(stack.url, 'tools/call', { name: tool, arguments: args }, { headers, capabilities }));
}

async function poll(headers: Record<string, string>, params: Record<string, unknown>) {
  return ok(await modernRequest(stack.url, 'events/poll', params, { headers }));
}

/** Polls from `cursor` until an event for `operationId` arrives; returns it with the cursor after it. */
async function pollUntil(headers: Record<string, string>, name: string, cursor: string, operationId: string) {
  let position = cursor;
  return vi.waitFor(
    async () => {
      const result = await poll(headers, { name, arguments: { operationId }, cursor: position });
      position = result.cursor;
      expect(result.events.length).toBeGreaterThan(0);
      return { events: result.events, cursor: result.cursor };
    },
    { timeout: 30_000, interval: 200 },
  );
}

let streamIds = 1000;
function openEventStream(headers: Record<string, string>, params: Record<string, unknown>): Promise<OpenStream> {
  const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };
  return openStream(
    stack.url,
    { jsonrpc: '2.0', id: ++streamIds, method: 'events/stream', params: { ...params, _meta: meta } },
    {
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'events/stream',
      ...headers,
    },
  );
}

/** Reads a stream until a notification of `method` comes; heartbeats on the way are kept in `seen`. */
async function nextOf(stream: OpenStream, method: string, seen: JsonRpcMessage[] = []): Promise<JsonRpcMessage> {
  for (;;) {
    const message = await stream.next();
    seen.push(message);
    if (message.method === method) return message;
  }
}

describe('operation.finished by poll and by push', () => {
  it('delivers the same occurrence, with the same eventId, by poll and by push, with the statistics inline; replays it from a cursor', async () => {
    const start = await poll(alice, { name: 'operation.finished', arguments: {}, cursor: null });
    const created = await startTask('analyze_dataset', { rows: 200, seed: 7 }, alice);
    const polled = await pollUntil(alice, 'operation.finished', start.cursor, created.taskId);
    expect(polled.events).toHaveLength(1);
    const [event] = polled.events;
    expect(event).toMatchObject({
      name: 'operation.finished',
      data: { operationId: created.taskId, tool: 'analyze_dataset', dialect: 'tasks-2026-07-28', status: 'completed', isError: false },
    });
    expect(Date.parse(event.timestamp)).not.toBeNaN();
    expectStatsOf(event.data.result.structuredContent, 200, 7);
    expect(event.data.fetch).toEqual({ method: 'tasks/get', params: { taskId: created.taskId } });

    // Replay: the same cursor gives the same occurrence again; the one after it, nothing more.
    const again = await poll(alice, { name: 'operation.finished', arguments: { operationId: created.taskId }, cursor: start.cursor });
    expect(again.events.map((e: { eventId: string }) => e.eventId)).toEqual([event.eventId]);
    expect((await poll(alice, { name: 'operation.finished', arguments: { operationId: created.taskId }, cursor: polled.cursor })).events).toEqual([]);

    // Push from the same cursor: active first, then the same event with its cursor, every message stamped.
    const stream = await openEventStream(alice, { name: 'operation.finished', arguments: { tool: 'analyze_dataset' }, cursor: start.cursor });
    try {
      expect(stream.status).toBe(200);
      const active = await stream.next();
      expect(active).toMatchObject({ method: 'notifications/events/active', params: { truncated: false, _meta: { [SUBSCRIPTION_ID]: streamIds } } });
      const pushed = await nextOf(stream, 'notifications/events/event');
      expect(pushed.params).toMatchObject({
        eventId: event.eventId,
        name: 'operation.finished',
        timestamp: event.timestamp,
        data: event.data,
        _meta: { [SUBSCRIPTION_ID]: streamIds },
      });
      expect(typeof pushed.params.cursor).toBe('string');
      // The pushed cursor resumes a poll past the event.
      expect((await poll(alice, { name: 'operation.finished', arguments: { operationId: created.taskId }, cursor: pushed.params.cursor })).events).toEqual([]);
    } finally {
      await stream.cancel();
    }
  });

  it('"truncated: true" when maxAgeMs passes the cursor, with a fresh cursor and no error', async () => {
    const start = await poll(alice, { name: 'operation.finished', cursor: null });
    const created = await startTask('summarize_numbers', { numbers: [1, 2, 3] }, alice);
    await pollUntil(alice, 'operation.finished', start.cursor, created.taskId);
    const truncated = await poll(alice, { name: 'operation.finished', cursor: start.cursor, maxAgeMs: 1 });
    expect(truncated).toMatchObject({ events: [], truncated: true, hasMore: false });
    expect(truncated.cursor).not.toBe(start.cursor);

    const stream = await openEventStream(alice, { name: 'operation.finished', cursor: start.cursor, maxAgeMs: 1 });
    try {
      expect((await stream.next()).params).toMatchObject({ truncated: true });
    } finally {
      await stream.cancel();
    }
  });

  it("isolation: bob never sees alice's events, by poll or by push, even from her cursor", async () => {
    const start = await poll(alice, { name: 'operation.finished', cursor: null });
    const bobStream = await openEventStream(bob, { name: 'operation.finished', cursor: start.cursor });
    try {
      await nextOf(bobStream, 'notifications/events/active');
      const hers = await startTask('summarize_numbers', { numbers: [4] }, alice);
      await pollUntil(alice, 'operation.finished', start.cursor, hers.taskId);
      const his = await startTask('summarize_numbers', { numbers: [5] }, bob);
      // His own event reaches his stream; hers, which ended first, never does.
      const seen: JsonRpcMessage[] = [];
      const pushed = await nextOf(bobStream, 'notifications/events/event', seen);
      expect(pushed.params.data.operationId).toBe(his.taskId);
      expect(seen.filter((m) => m.method === 'notifications/events/event')).toHaveLength(1);
      const bobPolled = await poll(bob, { name: 'operation.finished', cursor: start.cursor });
      expect(bobPolled.events.map((e: { data: { operationId: string } }) => e.data.operationId)).not.toContain(hers.taskId);
    } finally {
      await bobStream.cancel();
    }
  });
});

describe('operation.progress and operation.input_required', () => {
  it('a task of a client that declared events carries eventSource, and its progress arrives by poll from initialCursor and by a push stream that ends with the task', async () => {
    const created = await startTask('analyze_dataset', { rows: 300_000, seed: 3 }, alice, TASKS_AND_EVENTS);
    expect(created.eventSource).toEqual({ name: 'operation.progress', input: { operationId: created.taskId }, initialCursor: expect.any(String) });
    const { name, input, initialCursor } = created.eventSource;
    const polled = await pollUntil(alice, name, initialCursor, input.operationId);
    expect(polled.events[0].data).toMatchObject({ operationId: created.taskId, kind: 'progress', seq: 1 });

    const stream = await openEventStream(alice, { name, arguments: input, cursor: initialCursor });
    const messages = await stream.rest();
    const events = messages.filter((m) => m.method === 'notifications/events/event');
    expect(events.map((m) => m.params.eventId).slice(0, polled.events.length)).toEqual(polled.events.map((e: { eventId: string }) => e.eventId));
    expect(events.map((m) => m.params.data.seq)).toEqual(events.map((_, i) => i + 1));
    // "The server MUST terminate the event stream when the task reaches a terminal status"
    const terminated = messages.find((m) => m.method === 'notifications/events/terminated');
    expect(terminated?.params.error).toMatchObject({ code: -32023, data: { reason: 'operation_ended', status: 'completed' } });
    expect(messages.at(-1)).toMatchObject({ id: streamIds, result: { resultType: 'complete' } });
  });

  it('no eventSource for a client that did not declare events', async () => {
    const created = await startTask('summarize_numbers', { numbers: [1] }, alice);
    expect(created.eventSource).toBeUndefined();
  });

  it('operation.input_required carries the question tasks/get shows and how to answer it', async () => {
    const start = await poll(alice, { name: 'operation.input_required', cursor: null });
    const caps = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: { form: {} } };
    const created = await startTask('approve_deployment', { environment: 'staging', changes: ['a'] }, alice, caps);
    const polled = await pollUntil(alice, 'operation.input_required', start.cursor, created.taskId);
    const task = ok(await modernRequest(stack.url, 'tasks/get', { taskId: created.taskId }, { headers: alice, capabilities: caps }));
    expect(polled.events[0].data).toMatchObject({
      operationId: created.taskId,
      tool: 'approve_deployment',
      inputRequests: task.inputRequests,
      answer: { method: 'tasks/update', params: { taskId: created.taskId } },
    });
    ok(await modernRequest(stack.url, 'tasks/cancel', { taskId: created.taskId }, { headers: alice, capabilities: caps }));
  });
});

describe('limits', () => {
  it('a principal past its cap on open streams gets ResourceExhausted naming the limit, and may open another once one closes', async () => {
    const carol = { authorization: 'Bearer carol-events' };
    const first = await openEventStream(carol, { name: 'operation.finished', cursor: null });
    const second = await openEventStream(carol, { name: 'operation.finished', cursor: null });
    try {
      await nextOf(first, 'notifications/events/active');
      await nextOf(second, 'notifications/events/active');
      const refused = await openEventStream(carol, { name: 'operation.finished', cursor: null });
      const [answer] = await refused.rest();
      expect(answer?.error).toMatchObject({ code: -32025, data: { limit: 'streams', max: 2 } });
      // Another principal is not counted against carol's.
      const dave = await openEventStream({ authorization: 'Bearer dave-events' }, { name: 'operation.finished', cursor: null });
      expect((await dave.next()).method).toBe('notifications/events/active');
      await dave.cancel();
      await first.cancel();
      const third = await vi.waitFor(
        async () => {
          const stream = await openEventStream(carol, { name: 'operation.finished', cursor: null });
          const message = await stream.next();
          if (message.method !== 'notifications/events/active') throw new Error(`still refused: ${JSON.stringify(message.error)}`);
          return stream;
        },
        { timeout: 10_000, interval: 100 },
      );
      await third.cancel();
    } finally {
      await second.cancel();
    }
  });
});
