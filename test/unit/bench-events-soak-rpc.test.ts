/**
 * The Events soak's client sends a request again when its connection closes before the
 * answer (fetch's "other side closed"), a bounded number of times, so one closed keep-alive
 * connection no longer stops the soak before its question check.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CLOSED_CONNECTION_ATTEMPTS, soakRpc } from '../../bench/events-soak-rpc.ts';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server on 127.0.0.1 that closes the connection of its first `closes` requests unanswered, then acks. */
async function closingServer(closes: number): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      if (requests <= closes) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { resultType: 'complete' } }));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, requests: () => requests };
}

const ANSWER = { taskId: 't-1', inputResponses: { confirm: { action: 'accept', content: {} } } };

describe('the Events soak client', () => {
  it('sends an answer again when the server closed its connection, and takes the ack of the resend', async () => {
    const { url, requests } = await closingServer(1);
    const { rpc, tally } = soakRpc(url, {});
    const ack = await rpc('tasks/update', ANSWER);
    expect(ack?.message?.result).toEqual({ resultType: 'complete' });
    expect(requests()).toBe(2);
    expect(Object.fromEntries(tally.resent)).toEqual({ 'tasks/update': 1 });
    expect(tally.failed).toBe(0);
  });

  it(`stops after ${CLOSED_CONNECTION_ATTEMPTS} sends, tallies the failure with its cause and answers nothing, so the caller's loop goes on`, async () => {
    const { url, requests } = await closingServer(Number.MAX_SAFE_INTEGER);
    const { rpc, tally } = soakRpc(url, {});
    expect(await rpc('tasks/update', ANSWER)).toBeUndefined();
    expect(requests()).toBe(CLOSED_CONNECTION_ATTEMPTS);
    expect(tally.failed).toBe(1);
    expect(tally.lastFailure).toMatch(/^tasks\/update: TypeError: fetch failed \(.+\)$/);
  });

  it('does not send again a request the server answered, even with an error', async () => {
    let requests = 0;
    server = createServer((_req, res) => {
      requests++;
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error' } }));
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { rpc, tally } = soakRpc(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {});
    expect((await rpc('tasks/update', ANSWER))?.message?.error?.code).toBe(-32603);
    expect(requests).toBe(1);
    expect(tally.resent.size).toBe(0);
  });
});
