/**
 * Server-to-client requests for the questions an execution asks (elicitation, sampling,
 * roots) on the wires that carry them on a response stream: initialize-era synchronous
 * calls, 2025-11-25 `tasks/result` and SEP-1391 `tools/async/status`.
 *
 * The request id names the operation and the question, so the client's answer (a new POST
 * that any instance may take, see client-responses.ts) is routed by its id alone: nothing
 * waits in memory and no store lookup maps ids. The answering principal scopes the id, so
 * an id copied to another principal names nothing of theirs.
 */
import type { Server } from '@modelcontextprotocol/server';
import type { InputRequestMessage } from '../../operations/operation.ts';
import { decodeBase64UrlJson, encodeBase64UrlJson } from '../../shared/json-values.ts';
import { MAX_REQUEST_ID_LENGTH } from '../edge/request-view.ts';

/** Every id this server gives a server-to-client request starts with this. */
export const INPUT_REQUEST_ID_PREFIX = 'asyncmcp-input:';

/** What an input request id names. `token` is absent when it did not fit: the answer then names it (SEP-1391 `_operation.token`). */
export interface InputRequestRef {
  token?: string;
  key: string;
}

/** A JSON-RPC id as the SDK transport takes it. */
export type JsonRpcId = string | number;

/**
 * The id of the request that asks question `key` of operation `token`. Ids longer than the
 * server accepts back leave the token out; only client-chosen SEP-1391 tokens are that long.
 */
export function inputRequestId(token: string, key: string): string {
  const full = INPUT_REQUEST_ID_PREFIX + encodeBase64UrlJson({ t: token, k: key });
  return full.length <= MAX_REQUEST_ID_LENGTH ? full : INPUT_REQUEST_ID_PREFIX + encodeBase64UrlJson({ k: key });
}

/** What an id of ours names; `undefined` for any other id. */
export function parseInputRequestId(id: unknown): InputRequestRef | undefined {
  if (typeof id !== 'string' || !id.startsWith(INPUT_REQUEST_ID_PREFIX)) return undefined;
  const decoded = decodeBase64UrlJson(id.slice(INPUT_REQUEST_ID_PREFIX.length));
  if (!decoded || typeof decoded.k !== 'string' || decoded.k === '') return undefined;
  if (decoded.t !== undefined && (typeof decoded.t !== 'string' || decoded.t === '')) return undefined;
  return { key: decoded.k, ...(typeof decoded.t === 'string' ? { token: decoded.t } : {}) };
}

/** Adds a wire's own fields to a question's params (related-task `_meta`, `_operation`). */
export type DecorateParams = (params: Record<string, unknown>) => Record<string, unknown>;

/**
 * The questions sent on one response stream: each goes out at most once per stream, as a
 * JSON-RPC request related to the request whose stream it is. The SDK mints its own ids for
 * `ctx.mcpReq.send` and waits for the answer in memory, which cannot work when the answer
 * reaches another instance, so the request is written to the transport directly.
 */
export class ServerRequests {
  readonly #sent = new Set<string>();

  constructor(
    private readonly server: Server,
    private readonly relatedRequestId: JsonRpcId,
    private readonly decorate: DecorateParams = (params) => params,
  ) {}

  /** Whether any of `questions` was not sent on this stream yet. */
  hasUnsent(questions: Record<string, InputRequestMessage>): boolean {
    return Object.keys(questions).some((key) => !this.#sent.has(key));
  }

  /** Sends the questions of operation `token` not sent on this stream yet; nothing once the stream is closed. */
  async send(token: string, questions: Record<string, InputRequestMessage>): Promise<void> {
    for (const [key, question] of Object.entries(questions)) {
      if (this.#sent.has(key)) continue;
      this.#sent.add(key);
      const transport = this.server.transport;
      // The client went away: nobody reads this stream any more, and the wait ends at its bound.
      if (!transport) continue;
      const message = { jsonrpc: '2.0' as const, id: inputRequestId(token, key), method: question.method, params: this.decorate({ ...question.params }) };
      await transport.send(message, { relatedRequestId: this.relatedRequestId });
    }
  }
}
