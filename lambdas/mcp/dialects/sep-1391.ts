/**
 * SEP-1391 long-running operations: `tools/call` with a client-generated
 * `operation.token`, `tools/async/status`, `tools/async/result`, and cancellation by
 * `notifications/cancelled` for the original request id. The only file that knows
 * these wire names. Sentences quoted below are from the SEP.
 */
import { ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { OperationRecord, OperationStatus } from '../../operations/operation.ts';
import { OperationError } from '../../operations/operation-error.ts';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import { JSONRPC, toProtocolError } from '../json-rpc-errors.ts';
import { requestViewOf, type RequestView } from '../request-view.ts';
import { finishBeforeResponse } from '../request-scope.ts';
import { toCallToolResult } from '../tool-result.ts';
import { parseParams } from './dialect-support.ts';
import type { AsyncDialect, CallRequest, McpDeps, ToolListing } from './dialect.ts';

/** The experimental client capability that opts a request in. */
export const CAPABILITY = 'longRunningOperations';
const MAX_TOKEN_LENGTH = 256;
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

const TokenParams = z.looseObject({ token: Token });

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
  if (outcome.kind === 'tool-error') return outcome.cause ? `${outcome.error}: ${outcome.cause}` : outcome.error;
  if (outcome.kind === 'protocol-error') return outcome.message;
  return undefined;
}

function startedMessage(tool: ToolSpec, record: OperationRecord): string {
  return (
    `Started ${tool.name} as a long-running operation (token "${record.token}", status ${wireStatus(record.status)}). ` +
    `Check it with tools/async/status every ${record.pollIntervalSeconds} s and fetch the result with tools/async/result once it is completed.`
  );
}

async function cancelByRequestId(deps: McpDeps, ownerId: string, requestId: string): Promise<void> {
  try {
    const key = await deps.operations.findByRequestId(ownerId, requestId);
    if (key) await deps.operations.cancel(key, `Canceled by notifications/cancelled for request ${requestId}`);
  } catch (error) {
    if (error instanceof OperationError && (error.code === 'NOT_FOUND' || error.code === 'EXPIRED')) return;
    deps.logger.error('cancel by request id failed', { requestId, error: String(error) });
  }
}

export const sep1391Dialect: AsyncDialect = {
  name: 'sep-1391',

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
    const { tool, view } = request;
    const operation = parseParams(OperationParams, request.params.operation, 'operation');
    if (tool.invocation === 'sync') {
      throw invalidParams(`Tool ${tool.name} is not long-running (invocationMode "sync"): call it without params.operation`);
    }
    let record: OperationRecord;
    try {
      // "The server MUST validate that this token is unique before accepting new operations."
      record = await deps.operations.start({
        ownerId: view.ownerId,
        tool,
        arguments: request.arguments,
        token: operation.token,
        dialect: 'sep-1391',
        ...(operation.keepAlive === undefined ? {} : { keepAliveSeconds: operation.keepAlive }),
        requestId: view.requestId,
      });
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
  },

  register(server: Server, deps: McpDeps, era, ownerId): void {
    const handle = <T>(ctx: ServerContext, params: unknown, work: (view: RequestView) => Promise<T>): Promise<T> => {
      const view = requestViewOf(era, ownerId, params as never, ctx);
      return work(view).catch((error: unknown) => {
        throw toProtocolError(error, view.requestId, deps.logger, RETRIEVE_PREFIX);
      });
    };

    server.setRequestHandler('tools/async/status', { params: TokenParams.loose(), result: z.looseObject({}) }, (params, ctx) =>
      handle(ctx, params, async (view) => {
        const { token } = parseParams(TokenParams, params, 'params');
        const record = await deps.operations.get({ ownerId: view.ownerId, token });
        const error = failureReason(record);
        return {
          status: wireStatus(record.status),
          ...(error === undefined ? {} : { error }),
          ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
          keepAlive: record.keepAliveSeconds,
          pollFrequency: record.pollIntervalSeconds,
          _operation: { token },
        };
      }),
    );

    server.setRequestHandler('tools/async/result', { params: TokenParams.loose(), result: z.looseObject({}) }, (params, ctx) =>
      handle(ctx, params, async (view) => {
        const { token } = parseParams(TokenParams, params, 'params');
        const record = await deps.operations.get({ ownerId: view.ownerId, token });
        if (record.status === 'canceled') throw invalidParams('Operation was canceled');
        if (!record.outcome) {
          throw invalidParams(
            `Operation is not finished (status ${wireStatus(record.status)}): poll tools/async/status until it is completed or failed`,
          );
        }
        const tool = deps.catalog.get(record.tool);
        if (!tool) throw new OperationError('INTERNAL', `Tool ${record.tool} is no longer served`);
        return { result: toCallToolResult(record.outcome, tool), _operation: { token } };
      }),
    );

    // "Receivers of notifications/cancelled notifications for the request ID associated with the original
    // CallToolRequest SHOULD ... immediately move the operation to the "canceled" status."
    server.setNotificationHandler('notifications/cancelled', (notification) => {
      const requestId = (notification.params as { requestId?: unknown } | undefined)?.requestId;
      if (requestId === undefined || requestId === null) return;
      finishBeforeResponse(cancelByRequestId(deps, ownerId, String(requestId)));
    });
  },
};
