/**
 * The per-principal limit on active operations (issue 8 §5), on a local stack that
 * allows two: the next start gets HTTP 429 with Retry-After and a JSON-RPC error naming
 * the limit, in every dialect; other principals are unaffected; ending one frees a slot.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-service.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyNotification, legacyRequest, modernRequest, postRaw, type RawResponse } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

const LIMIT = 2;
const LONG = { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 600 } };
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ limits: { ...DEFAULT_LIMITS, maxActiveOperations: LIMIT } });
});
afterAll(async () => {
  await stack?.close();
});

function principal() {
  const headers = { authorization: `Bearer ${randomUUID()}` };
  return {
    headers,
    /** Starts a SEP-1391 operation of the long tool; returns the raw answer and its token. */
    async startOperation() {
      const token = `tok-${randomUUID()}`;
      return { token, response: await legacyRequest(stack.url, 'tools/call', { ...LONG, operation: { token } }, { headers }) };
    },
    cancel: (token: string) => legacyNotification(stack.url, 'notifications/cancelled', { _operation: { token } }, headers),
  };
}

/** HTTP 429, a whole number of seconds in Retry-After, and the error that names the limit. */
function expectLimitAnswer(response: RawResponse) {
  expect(response.status).toBe(429);
  expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const error = rpcError(response);
  expect(error).toMatchObject({ code: -32029, data: { limit: LIMIT, retryAfterSeconds: Number(response.headers.get('retry-after')) } });
  expect(error.message).toMatch(new RegExp(`Too many active operations: at most ${LIMIT} `));
}

describe('a principal at its limit of active operations', () => {
  it('gets HTTP 429 with Retry-After on the next start, while another principal starts as usual', async () => {
    const alice = principal();
    const running = [await alice.startOperation(), await alice.startOperation()];
    for (const { response } of running) expect(ok(response).operation.status).toBe('working');

    const third = await alice.startOperation();
    expectLimitAnswer(third.response);
    expect(rpcError(await legacyRequest(stack.url, 'tools/async/status', { token: third.token }, { headers: alice.headers })).message).toMatch(/not found/);

    const bob = principal();
    const bobs = await bob.startOperation();
    expect(ok(bobs.response).operation.status).toBe('working');

    // Cancelling one of Alice's operations frees its slot.
    await alice.cancel(running[0]!.token);
    const retried = await alice.startOperation();
    expect(ok(retried.response).operation.status).toBe('working');
    await Promise.all([running[1]!.token, retried.token].map((t) => alice.cancel(t)));
    await bob.cancel(bobs.token);
  });

  it('gets the same answer in the task dialects, 2025-11-25 and 2026-07-28', async () => {
    const alice = principal();
    const a = await alice.startOperation();
    const b = await alice.startOperation();
    expectLimitAnswer(await legacyRequest(stack.url, 'tools/call', { ...LONG, task: {} }, { headers: alice.headers }));
    expectLimitAnswer(await modernRequest(stack.url, 'tools/call', LONG, { headers: alice.headers, capabilities: TASKS }));
    await Promise.all([a.token, b.token].map((t) => alice.cancel(t)));
  });

  it('retrying a start already accepted is answered, not refused: it needs no new slot', async () => {
    const alice = principal();
    const a = await alice.startOperation();
    const b = await alice.startOperation();
    const again = await legacyRequest(stack.url, 'tools/call', { ...LONG, operation: { token: a.token } }, { headers: alice.headers });
    expect(ok(again).operation.status).toBe('working');
    await Promise.all([a.token, b.token].map((t) => alice.cancel(t)));
  });

  it('in a 2025-03-26 batch, gets the error in its own response, without turning the batch into an HTTP error', async () => {
    const alice = principal();
    const tokens = [1, 2, 3].map(() => `tok-${randomUUID()}`);
    const batch = tokens.map((token, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { ...LONG, operation: { token } } }));
    const response = await postRaw(stack.url, JSON.stringify(batch), { ...alice.headers, 'mcp-protocol-version': '2025-03-26' });
    expect(response.status).toBe(200);
    const answers = response.text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)))
      .filter((m) => 'result' in m || 'error' in m);
    expect(answers).toHaveLength(3);
    expect(answers.filter((m) => m.error?.code === -32029)).toHaveLength(1);
    await Promise.all(tokens.map((t) => alice.cancel(t)));
  });
});
