/**
 * The Events soak's MCP client: 2026-07-28 requests over the process's fetch, each sent again
 * (a bounded number of times) when the connection was closed or reset before an answer came.
 *
 * Why a connection can close under the soak: the local stack's server drops a keep-alive
 * connection after 5 s idle (node:http's keepAliveTimeout) and says so (`Keep-Alive:
 * timeout=5`); fetch stops reusing it 2 s before that, by timers that fire late when the
 * event loop is busy. Server and client share this one process, so a loop held up for
 * seconds can send a request on a connection the server is closing: fetch then fails with
 * "other side closed" and, a POST not being idempotent to it, does not send it again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { modernRequest, type RawResponse } from '../test/support/raw-mcp.ts';

/** One request's answer, or undefined when it failed even after its resends (the caller tries again, as a host would). */
export type SoakRpc = (method: string, params: Record<string, unknown>) => Promise<RawResponse | undefined>;

/** How many times one request is sent in all when its connection keeps closing. */
export const CLOSED_CONNECTION_ATTEMPTS = 5;

/** undici's socket error ("other side closed") and the kernel's reset and broken pipe. */
const CLOSED_CONNECTION_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** Whether fetch failed because the connection closed under the request, not for an answer of the server. */
export function isClosedConnection(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return error instanceof TypeError && typeof cause?.code === 'string' && CLOSED_CONNECTION_CODES.has(cause.code);
}

/** What the soak's client went through: resends by method, and the requests that failed after them. */
export interface ClientTally {
  resent: Map<string, number>;
  failed: number;
  lastFailure?: string;
}

/**
 * A client of `url` whose requests are sent again when their connection closed. Every method
 * the soak sends takes a resend: reads, a repeated answer (acked and ignored once its key is
 * answered) and a subscribe alike; a start sent again may start a second operation, which the
 * soak does not count. A request that still fails is tallied and answers undefined, so one
 * lost request cannot stop a subscriber's loop.
 */
export function soakRpc(url: URL | string, capabilities: Record<string, unknown>): { rpc: SoakRpc; tally: ClientTally } {
  const tally: ClientTally = { resent: new Map(), failed: 0 };
  const rpc: SoakRpc = async (method, params) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await modernRequest(url, method, params, { capabilities });
      } catch (error) {
        if (isClosedConnection(error) && attempt < CLOSED_CONNECTION_ATTEMPTS) {
          tally.resent.set(method, (tally.resent.get(method) ?? 0) + 1);
          await sleep(100 * attempt);
          continue;
        }
        tally.failed++;
        tally.lastFailure = `${method}: ${String(error)}${isClosedConnection(error) ? ` (${(error as { cause: Error }).cause.message})` : ''}`;
        return undefined;
      }
    }
  };
  return { rpc, tally };
}
