/**
 * Server-to-client requests for questions: ids that name the operation and the question,
 * and each question sent once per response stream, in the wire's own decoration.
 */
import type { Server } from '@modelcontextprotocol/server';
import { describe, expect, it, vi } from 'vitest';
import { MAX_REQUEST_ID_LENGTH } from '../../lambdas/mcp/edge/request-view.ts';
import { INPUT_REQUEST_ID_PREFIX, inputRequestId, parseInputRequestId, ServerRequests } from '../../lambdas/mcp/input/server-requests.ts';
import type { InputRequestMessage } from '../../lambdas/operations/operation.ts';

const confirm: InputRequestMessage = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object' } } };
const roots: InputRequestMessage = { method: 'roots/list', params: {} };

describe('input request ids', () => {
  it('name the operation and the question, and read back to both', () => {
    const id = inputRequestId('tok-1', 'confirm');
    expect(id.startsWith(INPUT_REQUEST_ID_PREFIX)).toBe(true);
    expect(parseInputRequestId(id)).toEqual({ token: 'tok-1', key: 'confirm' });
  });

  it('stay short enough to be accepted back: a client token too long for the id is left out', () => {
    const token = 'x'.repeat(256);
    const id = inputRequestId(token, 'confirm');
    expect(id.length).toBeLessThanOrEqual(MAX_REQUEST_ID_LENGTH);
    expect(parseInputRequestId(id)).toEqual({ key: 'confirm' });
  });

  it('any other id names nothing', () => {
    for (const id of [7, 'abc', `${INPUT_REQUEST_ID_PREFIX}not-base64!`, `${INPUT_REQUEST_ID_PREFIX}${Buffer.from('[1]').toString('base64url')}`, null]) {
      expect(parseInputRequestId(id)).toBeUndefined();
    }
  });
});

describe('sending questions on a stream', () => {
  it('sends each question once per stream, related to the request whose stream it is, as the wire decorates it', async () => {
    const send = vi.fn(async () => undefined);
    const stream = new ServerRequests({ transport: { send } } as unknown as Server, 'req-1', (params) => ({ ...params, _operation: { token: 'op' } }));
    expect(stream.hasUnsent({ confirm })).toBe(true);
    await stream.send('op', { confirm });
    await stream.send('op', { confirm, roots });
    expect(stream.hasUnsent({ confirm, roots })).toBe(false);
    expect(send.mock.calls).toEqual([
      [
        { jsonrpc: '2.0', id: inputRequestId('op', 'confirm'), method: 'elicitation/create', params: { ...confirm.params, _operation: { token: 'op' } } },
        { relatedRequestId: 'req-1' },
      ],
      [{ jsonrpc: '2.0', id: inputRequestId('op', 'roots'), method: 'roots/list', params: { _operation: { token: 'op' } } }, { relatedRequestId: 'req-1' }],
    ]);
    expect(confirm.params._operation).toBeUndefined();
  });

  it('on a stream the client left, sends nothing and counts the questions as handled, so a wait does not spin on them', async () => {
    const stream = new ServerRequests({ transport: undefined } as unknown as Server, 1);
    await stream.send('op', { confirm });
    expect(stream.hasUnsent({ confirm })).toBe(false);
  });
});
