/**
 * SEP-1391 long-running operations: `tools/call` with a client-generated
 * `operation.token`, `tools/async/status`, `tools/async/result`, and cancellation by
 * `notifications/cancelled`: for exactly the operation its `_operation.token` names, or
 * else for the latest `tools/call` with the original request id. A question the execution
 * asks reaches the client as a server-to-client request on the response stream of its next
 * `tools/async/status`; the client's answer is a new POST that any instance takes
 * (client-responses.ts). The only file that knows these wire names. Sentences quoted below
 * are from the SEP.
 */
import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { statusMessageFor } from '../../operations/execution-outcome.ts';
import { isTerminal, type OperationKey, type OperationRecord, type OperationStatus } from '../../operations/operation.ts';
import { OperationError } from '../../operations/operation-error.ts';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import { isObject } from '../../shared/json-values.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import { MAX_REQUEST_ID_LENGTH, requestKeyOf, type RequestView } from '../edge/request-view.ts';
import { finishBeforeResponse, readOncePerRequest } from '../edge/request-scope.ts';
import { ServerRequests } from '../input/server-requests.ts';
import { progressOf } from '../calls/run-notifications.ts';
import { finishedResult, publicCause } from '../results/tool-result.ts';
import { ANY_RESULT, directOnId, MAX_TOKEN_LENGTH, parseParams, readOwnRecord, readRecord, serveDialectMethod, withIdFastPath } from './dialect-support.ts';
import { startOperationFor, type AsyncDialect, type CallRequest, type McpDeps, type StartRequest, type ToolListing } from './dialect.ts';

/** The experimental client capability that opts a request in. */
export const CAPABILITY = 'longRunningOperations';
const RETRIEVE_PREFIX = 'Failed to retrieve operation';

type WireStatus = 'submitted' | 'working' | 'input_required' | 'completed' | 'canceled' | 'failed' | 'unknown';

const Token = z
  .string({ message: 'token must be a string' })
  .min(1, 'token must not be empty')
  .max(MAX_TOKEN_LENGTH, `token must be at most ${MAX_TOKEN_LENGTH} characters`);

const OperationParams = z.looseObject({
  token: Token,
  keepAlive: z.number().int('keepAlive must be a whole number of seconds').nonnegative('keepAlive must not be negative').nullable().optional(),
});

/** A token to look up: one past the creation bound is not refused as such, it is simply unknown. */
const TokenParams = z.looseObject({ token: z.string({ message: 'token must be a string' }).min(1, 'token must not be empty') });
const TOKEN_SCHEMAS = { params: withIdFastPath(TokenParams, 'token'), result: ANY_RESULT };

/** A status's record, read once per request: the edge's look at it (`answeredAtOnceWhen`) and the handler share the read. */
function statusRecord(deps: McpDeps, ownerId: string, token: string): Promise<OperationRecord> {
  return readOncePerRequest(`sep-1391 status ${ownerId} ${token}`, () => readOwnRecord(deps, { ownerId, token }, 'sep-1391', 'Operation'));
}

/** The `tools/async/status` result for a record, once its open `questions` have gone out. */
function statusResult(record: OperationRecord, token: string, questions: Record<string, unknown>): Record<string, unknown> {
  const error = failureReason(record);
  // Every question already being answered: the operation is back at work.
  const answering = record.status === 'input_required' && Object.keys(questions).length === 0;
  const statusMessage = answering ? statusMessageFor('working') : record.statusMessage;
  // Progress "could be mitigated by allowing the ToolsAsyncStatusResult to contain progress
  // information" (the SEP's review): the latest progress the run reported.
  const progress = progressOf(record);
  return {
    status: answering ? 'working' : wireStatus(record.status),
    ...(error === undefined ? {} : { error }),
    ...(statusMessage === undefined ? {} : { statusMessage }),
    ...(progress === undefined ? {} : { progress }),
    keepAlive: record.keepAliveSeconds,
    pollFrequency: record.pollIntervalSeconds,
    _operation: { token },
  };
}

function declares(view: RequestView): boolean {
  const experimental = view.clientCapabilities.experimental;
  return typeof experimental === 'object' && experimental !== null && CAPABILITY in experimental;
}

function invalidParams(message: string): ProtocolError {
  return new ProtocolError(JSONRPC.INVALID_PARAMS, message);
}

function wireStatus(status: OperationStatus): WireStatus {
  const map: Record<OperationStatus, WireStatus> = {
    submitted: 'submitted',
    working: 'working',
    input_required: 'input_required',
    completed: 'completed',
    canceled: 'canceled',
    failed: 'failed',
  };
  return map[status] ?? 'unknown';
}

/** "The error field SHOULD be set to the failure reason." */
function failureReason(record: OperationRecord): string | undefined {
  const outcome = record.outcome;
  if (record.status !== 'failed' || !outcome) return undefined;
  // The worker's errorType and errorMessage only: never a trace or a source path.
  if (outcome.kind === 'tool-error') return outcome.cause ? `${outcome.error}: ${publicCause(outcome.cause, outcome.error)}` : outcome.error;
  if (outcome.kind === 'protocol-error' || outcome.kind === 'internal-error') return outcome.message;
  return undefined;
}

function startedMessage(tool: ToolSpec, record: OperationRecord): string {
  return (
    `Started ${tool.name} as a long-running operation (token "${record.token}", status ${wireStatus(record.status)}). ` +
    `Check it with tools/async/status every ${record.pollIntervalSeconds} s and fetch the result with tools/async/result once it is completed.`
  );
}

/**
 * Dialects whose operations a `notifications/cancelled` may stop: tasks are cancelled with
 * `tasks/cancel` only. A handle tool's call is waited on like a synchronous one until it hands off.
 */
const CANCELLABLE_BY_NOTIFICATION: ReadonlySet<OperationRecord['dialect']> = new Set(['sep-1391', 'sync', 'handle']);

/**
 * Which operation a `notifications/cancelled` targets. "Modified Base Notification": any
 * notification may carry `_operation.token`, which names exactly one operation, so the
 * request id is then only informational. Without it, the typed request id names the latest
 * cancellable `tools/call` this principal sent with that id.
 */
async function cancelTarget(deps: McpDeps, ownerId: string, params: Record<string, unknown>): Promise<OperationKey | undefined> {
  const operation = params._operation;
  if (isObject(operation) && typeof operation.token === 'string') {
    const { token } = operation;
    return token.length > 0 && token.length <= MAX_TOKEN_LENGTH ? { ownerId, token } : undefined;
  }
  const { requestId } = params;
  // No request with a longer id was ever served, so none can be cancelled.
  if (typeof requestId === 'string' && requestId.length > MAX_REQUEST_ID_LENGTH) return undefined;
  const requestKey = requestKeyOf(requestId);
  return requestKey === undefined ? undefined : deps.operations.findByRequestId(ownerId, requestKey);
}

async function cancelByNotification(deps: McpDeps, ownerId: string, params: Record<string, unknown>): Promise<void> {
  const requestId = typeof params.requestId === 'string' || typeof params.requestId === 'number' ? String(params.requestId) : undefined;
  try {
    const key = await cancelTarget(deps, ownerId, params);
    if (!key) return;
    const record = await readRecord(deps, key);
    if (!CANCELLABLE_BY_NOTIFICATION.has(record.dialect) || isTerminal(record.status)) return;
    // The id goes into StopExecution's cause (32,768 characters at most) only when it is short.
    const named = requestId !== undefined && requestId.length <= MAX_REQUEST_ID_LENGTH;
    await deps.operations.cancel(key, named ? `Canceled by notifications/cancelled for request ${requestId}` : 'Canceled by notifications/cancelled');
  } catch (error) {
    if (error instanceof OperationError && (error.code === 'NOT_FOUND' || error.code === 'EXPIRED')) return;
    deps.logger.error('cancel by notification failed', { requestId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
}

/** A call's `operation` and its tool checked; then its start: an operation's `tools/call` never sends anything first. */
function startOperation(request: StartRequest, deps: McpDeps): () => Promise<Record<string, unknown>> {
  const { tool } = request;
  const operation = parseParams(OperationParams, request.params.operation, 'operation');
  if (tool.invocation === 'sync') {
    throw invalidParams(`Tool ${tool.name} is not long-running (invocationMode "sync"): call it without params.operation`);
  }
  return async () => {
    let record: OperationRecord;
    try {
      // "The server MUST validate that this token is unique before accepting new operations."
      record = await startOperationFor(request, deps, 'sep-1391', { token: operation.token, keepAliveSeconds: operation.keepAlive });
    } catch (error) {
      if (error instanceof OperationError && error.code === 'TOKEN_REUSED') {
        throw invalidParams('Invalid operation.token: token already used for a different tool call');
      }
      throw error;
    }
    return {
      content: [{ type: 'text', text: startedMessage(tool, record) }],
      // "MUST return its final value in the operation.keepAlive field in the CallToolResult."
      operation: { status: wireStatus(record.status), keepAlive: record.keepAliveSeconds, pollFrequency: record.pollIntervalSeconds },
      _operation: { token: record.token },
    };
  };
}

export const sep1391Dialect: AsyncDialect = {
  name: 'sep-1391',
  statusMethods: ['tools/async/status'],
  // Not tools/async/status: it streams open questions before its result.
  answeredAtOnce: ['tools/async/result'],
  answeredDirectly: {
    legacy: {
      // A status with an open question sends it first: the SDK serves that one, on an SSE stream.
      'tools/async/status': directOnId('token', async (token, view, deps) => {
        const record = await statusRecord(deps, view.ownerId, token);
        const questions = deps.operations.inputs.pending(record);
        if (Object.keys(questions).length > 0) throw new Error('open questions go out before the status');
        return statusResult(record, token, questions);
      }),
    },
  },
  answeredAtOnceWhen: {
    // A status with no open question sends nothing before its result: one JSON object, as
    // Streamable HTTP allows any client that accepts both (the SDK refuses a POST that does not).
    // With questions, they go out first on an SSE stream. A read that fails is answered as an error, at once.
    'tools/async/status': async (params, ownerId, deps) => {
      if (typeof params.token !== 'string' || params.token.length === 0) return true;
      try {
        return Object.keys(deps.operations.inputs.pending(await statusRecord(deps, ownerId, params.token))).length === 0;
      } catch {
        return true;
      }
    },
  },

  /** "SDKs MUST NOT show LRO-only tools or the invocationMode field to clients on old protocol versions." */
  claimsListing: declares,

  listTool(tool: ToolSpec, base: ToolListing): ToolListing {
    // Hybrid tools are async for clients that can: "Clients that can see this property should assume async-only execution."
    return { ...base, invocationMode: tool.invocation === 'sync' ? 'sync' : 'async' };
  },

  /** A `tools/call` that carries `params.operation` declares support implicitly. */
  claimsCall(params: Record<string, unknown>): boolean {
    return params.operation !== undefined;
  },

  refuseAsyncOnly(tool: ToolSpec, view: RequestView): Error | undefined {
    if (!declares(view)) return undefined;
    return invalidParams(`Tool ${tool.name} is long-running: call it with params.operation { token } (invocationMode "async")`);
  },

  async call(request: CallRequest, deps: McpDeps): Promise<Record<string, unknown>> {
    return startOperation(request, deps)();
  },

  plainStart: startOperation,

  register(server: Server, deps: McpDeps, era, ownerId): void {
    const scope = { deps, era, ownerId, errorPrefix: RETRIEVE_PREFIX };

    server.setRequestHandler('tools/async/status', TOKEN_SCHEMAS, (params, ctx) =>
      serveDialectMethod(scope, ctx, params, async (view) => {
        const { token } = params;
        const record = await statusRecord(deps, view.ownerId, token);
        const questions = deps.operations.inputs.pending(record);
        // "If a server sends the client a request ... associated with a long-running operation, the request
        // MUST contain an _operation.token associated with the originating operation and move it into the
        // "input_required" status." Every open question goes out, on this call's stream, before its result.
        await new ServerRequests(server, ctx.mcpReq.id, (p) => ({ ...p, _operation: { token } })).send(token, questions);
        return statusResult(record, token, questions);
      }),
    );

    server.setRequestHandler('tools/async/result', TOKEN_SCHEMAS, (params, ctx) =>
      serveDialectMethod(scope, ctx, params, async (view) => {
        const { token } = params;
        const record = await readOwnRecord(deps, { ownerId: view.ownerId, token }, 'sep-1391', 'Operation');
        if (record.status === 'canceled') throw invalidParams('Operation was canceled');
        if (!record.outcome) {
          throw invalidParams(`Operation is not finished (status ${wireStatus(record.status)}): poll tools/async/status until it is completed or failed`);
        }
        // The result stored at completion, whatever has been deployed since.
        return { result: finishedResult(record.outcome, record.tool, deps.catalog.get(record.tool)), _operation: { token } };
      }),
    );

    // "Receivers of notifications/cancelled notifications for the request ID associated with the original
    // CallToolRequest SHOULD ... immediately move the operation to the "canceled" status." The params
    // are read raw: the SDK's own schema would drop `_operation`.
    server.setNotificationHandler('notifications/cancelled', { params: ANY_RESULT }, (params) => {
      finishBeforeResponse(cancelByNotification(deps, ownerId, params));
    });
  },
};
