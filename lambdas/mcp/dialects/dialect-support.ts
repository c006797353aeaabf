/**
 * Helpers every dialect file uses, kept out of the dialects themselves so that no
 * dialect imports another. Nothing here knows a wire name.
 */
import { ProtocolError, type ServerContext, type StandardSchemaV1 } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { OperationKey, OperationRecord } from '../../operations/operation.ts';
import { OperationError } from '../../operations/operation-error.ts';
import { JSONRPC, toProtocolError } from '../edge/json-rpc-errors.ts';
import { requestViewOf, type Era, type RequestView } from '../edge/request-view.ts';
import { isObject } from '../../shared/json-values.ts';
import { finishedResult, type CallToolResultShape } from '../results/tool-result.ts';
import type { DirectMethod, McpDeps } from './dialect.ts';

/**
 * The longest operation token or taskId (characters) that is looked up. Minted ids are far
 * shorter and SEP-1391 tokens are refused past it, so a longer one names nothing.
 */
export const MAX_TOKEN_LENGTH = 256;
/** The longest listing cursor accepted (characters); the store's own are well under it. */
export const MAX_CURSOR_LENGTH = 4096;

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * Any result object. Handlers return exactly what goes on the wire; the schema only
 * satisfies `setRequestHandler`. Built once: a server is built per request, and zod
 * schemas are costly to construct.
 */
export const ANY_RESULT = z.looseObject({});

/**
 * `schema` (params naming one operation by `field`: a `taskId`, a `token`) with a fast path
 * for a poll: params whose `field` is a non-empty string pass as they are, since the schema
 * checks nothing else of them; anything else is `schema`'s to answer, with its own messages.
 * A poll's params skip zod's parse, which the SDK runs for every request of the method.
 */
export function withIdFastPath<S extends z.ZodType<Record<string, unknown>>>(schema: S, field: string): StandardSchemaV1<z.input<S>, z.output<S>> {
  const full = schema['~standard'];
  return {
    '~standard': {
      version: 1,
      vendor: 'async-mcp',
      validate: (value) => {
        if (isObject(value) && typeof value[field] === 'string' && value[field].length > 0) return { value: value as z.output<S> };
        return full.validate(value);
      },
    },
  };
}

/**
 * A direct method (edge/direct-answer.ts) over the id in `field`: params without a non-empty
 * string there fail as `withIdFastPath` would send them to the registered handler's schema,
 * so the SDK answers them.
 */
export function directOnId(field: string, answer: (id: string, view: RequestView, deps: McpDeps) => Promise<Record<string, unknown>>): DirectMethod {
  const method = async (params: Record<string, unknown>, view: RequestView, deps: McpDeps) => {
    const id = params[field];
    if (typeof id !== 'string' || id === '') throw new ProtocolError(JSONRPC.INVALID_PARAMS, `Invalid params: ${field}`);
    return answer(id, view, deps);
  };
  return Object.assign(method, { idField: field });
}

/** Who a dialect's own methods serve on one per-request server, and how their errors are worded. */
export interface DialectMethodScope {
  deps: McpDeps;
  era: Era;
  ownerId: string;
  /** Put before a "not found" or "expired" message ("Failed to retrieve task"). */
  errorPrefix: string;
  /** The dialect's noun for a missing operation ("Task"); without it, the core's own words. */
  missingNoun?: string;
}

/**
 * Serves one request of a dialect's own methods (`tasks/get`, `tools/async/status`...): its
 * request view, then `work`, whose errors become the wire error (internal ones logged with
 * the request id). One function for every dialect, so none words an error apart.
 */
export async function serveDialectMethod<T>(
  scope: DialectMethodScope,
  ctx: ServerContext,
  params: unknown,
  work: (view: RequestView) => Promise<T> | T,
): Promise<T> {
  const view = requestViewOf(scope.era, scope.ownerId, params as never, ctx);
  try {
    return await work(view);
  } catch (error) {
    const worded = scope.missingNoun === undefined ? error : renameMissing(error, scope.missingNoun);
    throw toProtocolError(worded, view.requestId, scope.deps.logger, scope.errorPrefix);
  }
}

/** Parses wire params; the first failure becomes -32602 naming the field (`what.path`). */
export function parseParams<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  if (!issue) throw new ProtocolError(JSONRPC.INVALID_PARAMS, `Invalid ${what}`);
  const field = issue.path.length ? `${what}.${issue.path.join('.')}` : what;
  throw new ProtocolError(JSONRPC.INVALID_PARAMS, `Invalid ${field}: ${issue.message}`);
}

/**
 * Reads a record the given dialect created: a record of another dialect does not exist
 * for it, and missing or expired records are reported in the dialect's noun.
 */
export async function readOwnRecord(deps: McpDeps, key: OperationKey, dialect: OperationRecord['dialect'], noun: string): Promise<OperationRecord> {
  let record: OperationRecord;
  try {
    record = await readRecord(deps, key);
  } catch (error) {
    throw renameMissing(error, noun);
  }
  if (record.dialect !== dialect) throw new OperationError('NOT_FOUND', `${noun} not found`);
  return record;
}

/**
 * Reads a record by a client-supplied token. A token longer than any we hold is bounded
 * here, before it reaches a key, and answered exactly like an unknown one.
 */
export async function readRecord(deps: McpDeps, key: OperationKey): Promise<OperationRecord> {
  if (key.token.length > MAX_TOKEN_LENGTH) throw notFound();
  return deps.operations.readCurrent(key);
}

/** The core's own "not found", so a bounded id reads the same as an unknown one. */
export function notFound(): OperationError {
  return new OperationError('NOT_FOUND', 'Operation not found');
}

/** A listing cursor, bounded before it reaches the store; a longer one is as invalid as a forged one. */
export function boundedCursor(cursor: string | undefined): string | undefined {
  if (cursor !== undefined && cursor.length > MAX_CURSOR_LENGTH) throw new OperationError('INVALID_CURSOR', 'Invalid cursor');
  return cursor;
}

/** Core "Operation not found/expired" in another noun ("Task not found"); other errors unchanged. */
export function renameMissing(error: unknown, noun: string): unknown {
  if (!(error instanceof OperationError)) return error;
  if (error.code === 'NOT_FOUND') return new OperationError('NOT_FOUND', `${noun} not found`, { cause: error });
  if (error.code === 'EXPIRED') return new OperationError('EXPIRED', `${noun} has expired`, { cause: error });
  return error;
}

/**
 * What the original `tools/call` would have answered for a finished record: its
 * CallToolResult, or the JSON-RPC error object; `undefined` while running or when canceled.
 * The result is the one stored at completion: a later deploy that changed or removed the
 * tool changes nothing (see `finishedResult`).
 */
export function finalResponse(record: OperationRecord, deps: McpDeps): { result: CallToolResultShape } | { error: JsonRpcErrorObject } | undefined {
  if (!record.outcome || record.status === 'canceled') return undefined;
  try {
    return { result: finishedResult(record.outcome, record.tool, deps.catalog.get(record.tool)) };
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return { error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
  }
}
