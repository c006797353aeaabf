/**
 * SEP-1391's `tools/async/status` read as a client that answers questions reads it: each call
 * declares long-running operations and elicitation in `_meta`, and its stream carries the
 * server-to-client requests before the status result.
 */
import { randomUUID } from 'node:crypto';
import { expect, vi } from 'vitest';
import { type JsonRpcMessage, openStream } from './sse-reader.ts';

/** The capabilities a client that answers questions declares. */
export const SEP_1391_CAPABILITIES = { experimental: { longRunningOperations: {} }, elicitation: {} };

export interface StatusRead {
  /** The requests on the status call's stream, in order. */
  requests: JsonRpcMessage[];
  result: { status?: string; content?: Array<{ text?: string }>; [member: string]: unknown };
}

/** One `tools/async/status` call: the requests on its stream, then its result. */
export async function sep1391Status(url: URL, token: string): Promise<StatusRead> {
  const stream = await openStream(url, {
    jsonrpc: '2.0',
    id: `status-${randomUUID()}`,
    method: 'tools/async/status',
    params: { token, _meta: { 'io.modelcontextprotocol/clientCapabilities': SEP_1391_CAPABILITIES } },
  });
  const messages = await stream.rest();
  const response = messages.at(-1);
  if (!response) throw new Error('the status stream closed without a response');
  return { requests: messages.slice(0, -1), result: response.result };
}

/** Reads status until it reports input_required, and returns that read. */
export function untilAskedOnStatus(url: URL, token: string): Promise<StatusRead> {
  return vi.waitFor(
    async () => {
      const polled = await sep1391Status(url, token);
      expect(polled.result.status).toBe('input_required');
      return polled;
    },
    { interval: 100, timeout: 15_000 },
  );
}
