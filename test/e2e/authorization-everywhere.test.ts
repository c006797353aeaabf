/**
 * Whose work they see (issue "Who may call"): with two principals, every method of every
 * dialect answers another principal's id exactly as it answers an id that does not exist,
 * and nothing the other principal does reaches the owner's operation.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyNotification, legacyRequest, modernRequest, type RawResponse } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ waitTimeScale: 0.01 });
});
afterAll(async () => stack?.close());

const alice = { authorization: 'Bearer alice' };
const bob = { authorization: 'Bearer bob' };
const LRO = { experimental: { longRunningOperations: {} } };
const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const LONG = { rows: 1000, delaySeconds: 60_000 };

/** What a client reads from an answer: the HTTP status and the JSON-RPC error, if any. */
function answerOf(response: RawResponse) {
  return { status: response.status, error: response.message?.error && { code: response.message.error.code, message: response.message.error.message } };
}

describe('another principal reads nothing and changes nothing', () => {
  it('SEP-1391: status, result and cancellation by token or by request id', async () => {
    const token = `alice-${randomUUID()}`;
    ok(
      await legacyRequest(
        stack.url,
        'tools/call',
        { name: 'analyze_dataset', arguments: LONG, operation: { token } },
        { capabilities: LRO, headers: alice, id: 4242 },
      ),
    );
    const unknown = `nobody-${randomUUID()}`;
    for (const method of ['tools/async/status', 'tools/async/result']) {
      const foreign = answerOf(await legacyRequest(stack.url, method, { token }, { headers: bob }));
      expect(foreign, method).toEqual(answerOf(await legacyRequest(stack.url, method, { token: unknown }, { headers: bob })));
      expect(foreign.error?.code, method).toBe(-32602);
    }
    await legacyNotification(stack.url, 'notifications/cancelled', { requestId: 4242 }, bob);
    await legacyNotification(stack.url, 'notifications/cancelled', { requestId: 4242, _operation: { token } }, bob);
    expect(ok(await legacyRequest(stack.url, 'tools/async/status', { token }, { headers: alice })).status).toBe('working');
    await legacyNotification(stack.url, 'notifications/cancelled', { requestId: 4242, _operation: { token } }, alice);
  });

  it('Tasks extension: get, update and cancel', async () => {
    const { taskId } = ok(await modernRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: LONG }, { capabilities: EXT, headers: alice }));
    const unknown = randomUUID();
    const calls: Array<[string, (id: string) => Record<string, unknown>]> = [
      ['tasks/get', (id) => ({ taskId: id })],
      ['tasks/update', (id) => ({ taskId: id, inputResponses: { any: { action: 'accept' } } })],
      ['tasks/cancel', (id) => ({ taskId: id })],
    ];
    for (const [method, params] of calls) {
      const foreign = answerOf(await modernRequest(stack.url, method, params(taskId), { capabilities: EXT, headers: bob }));
      expect(foreign, method).toEqual(answerOf(await modernRequest(stack.url, method, params(unknown), { capabilities: EXT, headers: bob })));
      expect(foreign.error?.code, method).toBe(-32602);
    }
    expect(ok(await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: EXT, headers: alice })).status).toBe('working');
    ok(await modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: EXT, headers: alice }));
  });

  it('2025-11-25 tasks: get, result, cancel and list', async () => {
    const { task } = ok(await legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: LONG, task: {} }, { headers: alice }));
    const unknown = randomUUID();
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const foreign = answerOf(await legacyRequest(stack.url, method, { taskId: task.taskId }, { headers: bob }));
      expect(foreign, method).toEqual(answerOf(await legacyRequest(stack.url, method, { taskId: unknown }, { headers: bob })));
      expect(foreign.error?.code, method).toBe(-32602);
    }
    const listed = ok(await legacyRequest(stack.url, 'tasks/list', {}, { headers: bob })).tasks as Array<{ taskId: string }>;
    expect(listed.map((t) => t.taskId)).not.toContain(task.taskId);
    expect(ok(await legacyRequest(stack.url, 'tasks/get', { taskId: task.taskId }, { headers: alice })).status).toBe('working');
    ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId: task.taskId }, { headers: alice }));
  });

  it("resources/read: another principal's stored result reads like an unknown URI", async () => {
    const token = `export-${randomUUID()}`;
    ok(
      await legacyRequest(
        stack.url,
        'tools/call',
        { name: 'export_dataset', arguments: { rows: 20_000 }, operation: { token } },
        { capabilities: LRO, headers: alice },
      ),
    );
    let uri: string | undefined;
    for (let i = 0; i < 100 && !uri; i++) {
      const result = await legacyRequest(stack.url, 'tools/async/result', { token }, { headers: alice });
      uri = result.message?.result?.result?.content?.[0]?.uri;
      if (!uri) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(uri).toMatch(/^async-mcp:\/\/results\//);
    const foreign = answerOf(await legacyRequest(stack.url, 'resources/read', { uri }, { headers: bob }));
    const unknownUri = uri!.replace(/[^/]+$/, 'nothing-here');
    expect(foreign).toEqual(answerOf(await legacyRequest(stack.url, 'resources/read', { uri: unknownUri }, { headers: bob })));
    expect(ok(await legacyRequest(stack.url, 'resources/read', { uri }, { headers: alice })).contents[0].text).toMatch(/^index,value\n/);
  });
});
