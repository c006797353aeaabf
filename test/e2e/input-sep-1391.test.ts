/**
 * Input mid-run in SEP-1391 long-running operations, on the local stack over raw HTTP:
 * `tools/async/status` reports `input_required`, each open question reaches the client as a
 * server-to-client request carrying `params._operation.token` on the response stream of its
 * status call, and the client's response, carrying `result._operation.token`, is taken by any
 * instance. Test names quote the SEP.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseInputRequestId } from '../../lambdas/mcp/input/server-requests.ts';
import { postTo, startInputStack, type InputStack } from '../support/input-stack.ts';
import { legacyNotification, legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';
import { openStream, postAnswer, type JsonRpcMessage } from '../support/sse-reader.ts';

const CAPABILITIES = { experimental: { longRunningOperations: {} }, elicitation: {} };
const META = { 'io.modelcontextprotocol/clientCapabilities': CAPABILITIES };

let input: InputStack;
beforeAll(async () => {
  input = await startInputStack();
});
afterAll(async () => {
  await input?.close();
});

async function startOperation(name: string, args: Record<string, unknown>, token = `tok-${randomUUID()}`): Promise<string> {
  const started = ok(await legacyRequest(input.stack.url, 'tools/call', { name, arguments: args, operation: { token } }, { capabilities: CAPABILITIES }));
  expect(started.operation.status).toMatch(/^(submitted|working|input_required)$/);
  return token;
}

/** One `tools/async/status` call: the requests on its stream, then its result. */
async function status(token: string): Promise<{ requests: JsonRpcMessage[]; result: { status?: string; content?: unknown; structuredContent?: unknown } }> {
  const stream = await openStream(input.stack.url, {
    jsonrpc: '2.0',
    id: `status-${randomUUID()}`,
    method: 'tools/async/status',
    params: { token, _meta: META },
  });
  const messages = await stream.rest();
  const response = messages.at(-1)!;
  expect(response.error).toBeUndefined();
  return { requests: messages.slice(0, -1), result: response.result };
}

/** Polls status until it reports input_required, and returns that call's requests. */
function untilAsked(token: string) {
  return vi.waitFor(
    async () => {
      const polled = await status(token);
      expect(polled.result.status).toBe('input_required');
      return polled;
    },
    { interval: 100, timeout: 10_000 },
  );
}

const answer = (question: JsonRpcMessage, result: Record<string, unknown>) => postAnswer(input.stack.url, { jsonrpc: '2.0', id: question.id, result });

function untilStatus(token: string, statuses: string[]) {
  return pollUntilStatus(() => legacyRequest(input.stack.url, 'tools/async/status', { token }, { capabilities: CAPABILITIES }), statuses);
}

describe('the flow', () => {
  it('"input_required"; the request carries _operation.token on the status stream before its result; a fresh instance takes the response and the operation completes', async () => {
    const token = await startOperation('ask_confirm', { subject: 'the rollout' });
    const { requests, result } = await untilAsked(token);
    expect(result).toMatchObject({ status: 'input_required', _operation: { token } });
    // "the request MUST contain an _operation.token associated with the originating operation"
    expect(requests).toEqual([
      {
        jsonrpc: '2.0',
        id: expect.any(String),
        method: 'elicitation/create',
        params: { message: 'Go ahead with the rollout?', requestedSchema: expect.any(Object), _operation: { token } },
      },
    ]);
    expect(parseInputRequestId(requests[0]!.id)).toEqual({ token, key: 'confirm' });
    // "the client MUST respond with the same _operation.token for association"
    const reply = { jsonrpc: '2.0', id: requests[0]!.id, result: { action: 'accept', content: { comment: 'go' }, _operation: { token } } };
    expect(await postTo(input.freshInstance(), input.stack.url, reply)).toEqual({ status: 202, text: '' });
    expect((await untilStatus(token, ['completed'])).status).toBe('completed');
    const final = ok(await legacyRequest(input.stack.url, 'tools/async/result', { token }, { capabilities: CAPABILITIES }));
    expect(final.result.structuredContent).toEqual({ action: 'accept', content: { comment: 'go' } });
  });

  it('every status call while the question is open carries it again, with the same id; once answered, none does', async () => {
    const token = await startOperation('ask_confirm', { subject: 'x' });
    const first = await untilAsked(token);
    const second = await status(token);
    expect(second.requests.map((r) => r.id)).toEqual(first.requests.map((r) => r.id));
    expect((await answer(first.requests[0]!, { action: 'decline', _operation: { token } })).status).toBe(202);
    await untilStatus(token, ['completed']);
    expect((await status(token)).requests).toEqual([]);
    const final = ok(await legacyRequest(input.stack.url, 'tools/async/result', { token }, { capabilities: CAPABILITIES }));
    expect(final.result.content).toEqual([{ type: 'text', text: 'declined' }]);
  });

  it("a response whose _operation.token is another operation's is HTTP 400, and the question stays open", async () => {
    const token = await startOperation('ask_confirm', { subject: 'x' });
    const { requests } = await untilAsked(token);
    const refused = await answer(requests[0]!, { action: 'accept', content: {}, _operation: { token: 'someone-else' } });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text).error.message).toContain('_operation.token is not the token of the operation that asked');
    expect((await status(token)).result.status).toBe('input_required');
    expect((await answer(requests[0]!, { action: 'accept', content: {}, _operation: { token } })).status).toBe(202);
    await untilStatus(token, ['completed']);
  });

  it('a client token too long to fit in the request id: the response names its operation by _operation.token', async () => {
    const token = `long-${'t'.repeat(240)}`;
    await startOperation('ask_confirm', { subject: 'x' }, token);
    const { requests } = await untilAsked(token);
    expect(parseInputRequestId(requests[0]!.id)).toEqual({ key: 'confirm' });
    expect((await answer(requests[0]!, { action: 'accept', content: {} })).status).toBe(400);
    expect((await answer(requests[0]!, { action: 'accept', content: {}, _operation: { token } })).status).toBe(202);
    await untilStatus(token, ['completed']);
  });

  it('cancel while waiting: notifications/cancelled with _operation.token moves it to "canceled", and no question is sent any more', async () => {
    const token = await startOperation('ask_confirm', { subject: 'x' });
    await untilAsked(token);
    expect((await legacyNotification(input.stack.url, 'notifications/cancelled', { requestId: 'any', _operation: { token } })).status).toBe(202);
    const after = await status(token);
    expect(after.result.status).toBe('canceled');
    expect(after.requests).toEqual([]);
  });

  it('declares support per request in the 2026-07-28 envelope too: the status answer streams the request first', async () => {
    const token = `tok-${randomUUID()}`;
    ok(
      await modernRequest(
        input.stack.url,
        'tools/call',
        { name: 'ask_confirm', arguments: { subject: 'x' }, operation: { token } },
        { capabilities: CAPABILITIES },
      ),
    );
    const messages = await vi.waitFor(
      async () => {
        const polled = await modernRequest(input.stack.url, 'tools/async/status', { token }, { capabilities: CAPABILITIES });
        expect(polled.message?.result?.status).toBe('input_required');
        return polled.text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => JSON.parse(line.slice(5)) as JsonRpcMessage);
      },
      { interval: 100, timeout: 10_000 },
    );
    expect(messages[0]).toMatchObject({ method: 'elicitation/create', params: { _operation: { token } } });
    expect((await answer(messages[0]!, { action: 'accept', content: {}, _operation: { token } })).status).toBe(202);
    await untilStatus(token, ['completed']);
  });
});
