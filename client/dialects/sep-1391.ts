/**
 * SEP-1391 long-running operations, client side: the client picks the token and sends it in
 * `params.operation`; `tools/async/status` polls every `pollFrequency` seconds,
 * `tools/async/result` reads the outcome, and `notifications/cancelled` with
 * `_operation.token` cancels exactly that operation. Open questions arrive as server-to-client
 * requests on the stream of each `tools/async/status`, before its result, and are answered by
 * a POSTed response carrying the same `_operation.token`.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { isObject } from '../../lambdas/shared/json-values.ts';
import { CallCancelledError, CallFailedError, type CallState } from '../call-handle.ts';
import { McpRpcError, type ServerRequest } from '../mcp-connection.ts';
import { askedIn, CallToolResultSchema, parseAnswer, progressMeta, type DialectAdapter, type RemoteStatus } from './dialect-adapter.ts';

const WireStatus = z.enum(['submitted', 'working', 'input_required', 'completed', 'canceled', 'failed', 'unknown']);
const StatusSchema = z.looseObject({
  status: WireStatus,
  statusMessage: z.string().optional(),
  error: z.string().optional(),
  pollFrequency: z.number().optional(),
});
const StartedSchema = z.looseObject({
  operation: z.looseObject({ status: WireStatus, pollFrequency: z.number().optional() }),
});

const STATES: Record<z.infer<typeof WireStatus>, CallState> = {
  submitted: 'working',
  working: 'working',
  input_required: 'input_required',
  completed: 'completed',
  canceled: 'cancelled',
  failed: 'failed',
  unknown: 'unknown',
};

function toStatus(wire: {
  status: z.infer<typeof WireStatus>;
  statusMessage?: string | undefined;
  error?: string | undefined;
  pollFrequency?: number | undefined;
}): RemoteStatus {
  return {
    state: STATES[wire.status],
    ...(wire.statusMessage === undefined ? {} : { statusMessage: wire.statusMessage }),
    ...(wire.error === undefined ? {} : { error: wire.error }),
    ...(wire.pollFrequency === undefined ? {} : { pollIntervalMs: wire.pollFrequency * 1000 }),
  };
}

/** The `tools/call` request id, derived from the token so that any process can name it when cancelling. */
function requestIdOf(token: string): string {
  return `call-${token}`;
}

export const sep1391: DialectAdapter = {
  async start(connection, tool, args, options) {
    // Ours to choose; "The server MUST validate that this token is unique".
    const token = randomUUID();
    const operation = { token, ...(options.keepAliveSeconds === undefined ? {} : { keepAlive: options.keepAliveSeconds }) };
    const answer = await connection.legacy(
      'tools/call',
      { name: tool, arguments: args, operation, ...progressMeta(options) },
      { ...options, id: requestIdOf(token), declareOperations: true },
    );
    return { kind: 'async', remoteId: token, status: toStatus(parseAnswer(StartedSchema, answer, 'tools/call').operation) };
  },

  async status(connection, remoteId, signal) {
    // The server repeats every open question on each status call's stream, with the same id.
    const requests: ServerRequest[] = [];
    const answer = await connection.legacy(
      'tools/async/status',
      { token: remoteId },
      { declareOperations: true, onRequest: (request) => requests.push(request), ...(signal ? { signal } : {}) },
    );
    const status = toStatus(parseAnswer(StatusSchema, answer, 'tools/async/status'));
    // A request "MUST contain an _operation.token associated with the originating operation": only this operation's.
    const own = requests.filter((r) => isObject(r.params._operation) && r.params._operation.token === remoteId);
    return status.state === 'input_required' ? { ...status, questions: askedIn(own) } : status;
  },

  async result(connection, remoteId, status, signal) {
    if (status.state === 'cancelled') throw new CallCancelledError(status.statusMessage);
    if (status.state === 'unknown') throw new CallFailedError(status.error ?? 'The server no longer knows the operation (status unknown)');
    try {
      const answer = await connection.legacy('tools/async/result', { token: remoteId }, { declareOperations: true, ...(signal ? { signal } : {}) });
      return parseAnswer(z.looseObject({ result: CallToolResultSchema }), answer, 'tools/async/result').result;
    } catch (error) {
      if (error instanceof McpRpcError) throw new CallFailedError(status.error ?? error.message, { code: error.code, data: error.data }, { cause: error });
      throw error;
    }
  },

  async questions(connection, remoteId, signal, current) {
    return (current?.questions ? current : await this.status(connection, remoteId, signal)).questions ?? [];
  },

  async answer(connection, remoteId, asked, answer, signal) {
    if (asked.requestId === undefined) throw new Error(`The question "${asked.question.key}" has no request to answer`);
    // "In the case of requests, the client MUST respond with the same _operation.token for association."
    await connection.respond(asked.requestId, { ...answer, _operation: { token: remoteId } }, signal);
  },

  async cancel(connection, remoteId) {
    // The "Modified Base Notification": `_operation.token` names exactly this operation, so the
    // request id is informational only.
    await connection.notify('notifications/cancelled', {
      requestId: requestIdOf(remoteId),
      reason: 'Cancelled by the client',
      _operation: { token: remoteId },
    });
  },
};
