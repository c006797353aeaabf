/**
 * The MCP Events extension (SEP-3415) on the local stack, as raw JSON-RPC sees it: what is
 * advertised, `events/list`, a first poll, and every way a request can be wrong. Poll, push
 * and webhook delivery have their own files (events-*.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

const EVENTS = 'io.modelcontextprotocol/events';
const alice = { headers: { authorization: 'Bearer alice-token' } };
const bob = { headers: { authorization: 'Bearer bob-token' } };
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack({ waitTimeScale: 0.01 });
});
afterAll(async () => {
  await stack?.close();
});

describe('capabilities', () => {
  it('server/discover advertises capabilities.extensions["io.modelcontextprotocol/events"] and the top-level capabilities.events the AI SDK and ChatGPT read', async () => {
    const { capabilities } = ok(await modernRequest(stack.url, 'server/discover'));
    expect(capabilities.extensions[EVENTS]).toEqual({});
    expect(capabilities.events).toEqual({});
  });

  it('"a server that does not offer it answers any events/* request with -32601": a 2025-11-25 request, for which the extension is not defined', async () => {
    for (const method of ['events/list', 'events/poll', 'events/subscribe', 'events/unsubscribe']) {
      expect(rpcError(await legacyRequest(stack.url, method, { name: 'operation.finished' })).code, method).toBe(-32601);
    }
  });
});

describe('events/list', () => {
  it("lists the three event types about the caller's operations, with their schemas and poll and push delivery", async () => {
    const result = ok(await modernRequest(stack.url, 'events/list'));
    expect(result.resultType).toBe('complete');
    expect(result.events.map((e: { name: string }) => e.name)).toEqual(['operation.finished', 'operation.input_required', 'operation.progress']);
    for (const type of result.events) {
      expect(type.delivery).toEqual(expect.arrayContaining(['poll', 'push']));
      expect(type.inputSchema.type).toBe('object');
      expect(type.payloadSchema.type).toBe('object');
    }
    const finished = result.events[0];
    expect(finished.description).toContain('Subscribe with the operationId a long tool call gave you, to be told when it finishes');
    expect(result.events[2].inputSchema.required).toEqual(['operationId']);
  });
});

describe('events/poll', () => {
  it('"null means start from now": no events, a fresh cursor, and the server\'s nextPollMs', async () => {
    const result = ok(await modernRequest(stack.url, 'events/poll', { name: 'operation.finished', arguments: {}, cursor: null }));
    expect(result).toMatchObject({ resultType: 'complete', events: [], truncated: false, hasMore: false });
    expect(typeof result.cursor).toBe('string');
    expect(result.nextPollMs).toBeGreaterThanOrEqual(1000);
  });
});

describe('bad requests', () => {
  it('an unknown event name is NotFound (-32023) with data.kind "event"', async () => {
    const error = rpcError(await modernRequest(stack.url, 'events/poll', { name: 'no.such.event', cursor: null }));
    expect(error).toMatchObject({ code: -32023, data: { kind: 'event' } });
  });

  it('arguments that fail the inputSchema are InvalidParams naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'operation.finished', arguments: { operationId: 7 } }, 'arguments.operationId'],
      [{ name: 'operation.finished', arguments: { colour: 'red' } }, 'arguments.colour'],
      [{ name: 'operation.progress', arguments: {} }, 'arguments.operationId'],
      [{ name: 'operation.finished', cursor: 'forged' }, 'params.cursor'],
      [{ name: 'operation.finished', maxEvents: 0 }, 'params.maxEvents'],
      [{ name: 'operation.finished', maxAgeMs: -1 }, 'params.maxAgeMs'],
      [{ name: 42 }, 'params.name'],
    ];
    for (const [params, field] of cases) {
      const error = rpcError(await modernRequest(stack.url, 'events/poll', params));
      expect(error.code, field).toBe(-32602);
      expect(error.message, field).toContain(field);
      expect(error.data, field).toEqual({ field });
    }
  });

  it("an operationId that is not the caller's is NotFound, exactly as an unknown one", async () => {
    const created = ok(
      await modernRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 3000 } }, { ...alice, capabilities: TASKS }),
    );
    const taskId: string = created.taskId;
    const asBob = rpcError(
      await modernRequest(stack.url, 'events/poll', { name: 'operation.progress', arguments: { operationId: taskId }, cursor: null }, bob),
    );
    const unknown = rpcError(
      await modernRequest(stack.url, 'events/poll', { name: 'operation.progress', arguments: { operationId: 'no-such-operation' }, cursor: null }, bob),
    );
    expect(asBob).toEqual(unknown);
    expect(asBob).toMatchObject({ code: -32023, message: 'Operation not found', data: { kind: 'operation' } });
    expect(
      ok(await modernRequest(stack.url, 'events/poll', { name: 'operation.progress', arguments: { operationId: taskId }, cursor: null }, alice)).events,
    ).toEqual([]);
    ok(await modernRequest(stack.url, 'tasks/cancel', { taskId }, { ...alice, capabilities: TASKS }));
  });
});

describe('webhooks need an authenticated principal', () => {
  it('"Servers MUST reject calls without an authorized principal with Forbidden": npm start without OAuth refuses subscribe and unsubscribe, and poll still works', async () => {
    const delivery = { mode: 'webhook', url: 'http://127.0.0.1:9/hook', secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}` };
    for (const headers of [{}, alice.headers]) {
      const subscribe = rpcError(await modernRequest(stack.url, 'events/subscribe', { name: 'operation.finished', arguments: {}, delivery }, { headers }));
      expect(subscribe).toMatchObject({ code: -32024, data: { reason: 'unauthenticated' } });
      const unsubscribe = rpcError(
        await modernRequest(stack.url, 'events/unsubscribe', { name: 'operation.finished', arguments: {}, delivery: { url: delivery.url } }, { headers }),
      );
      expect(unsubscribe.code).toBe(-32024);
    }
    expect(ok(await modernRequest(stack.url, 'events/poll', { name: 'operation.finished', cursor: null })).events).toEqual([]);
  });

  it('events/list still lists webhook among the modes: an authenticated client of the same server may use it', async () => {
    const { events } = ok(await modernRequest(stack.url, 'events/list'));
    expect(events[0].delivery).toEqual(['poll', 'push', 'webhook']);
  });
});
