/**
 * The shape every async dialect file has (STYLE rule 3): decode its wire into core
 * calls, encode core records and errors back. The router asks each dialect, in a
 * fixed order, whether a request is its own; no dialect imports another.
 */
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import type { Dialect, OperationRecord } from '../../operations/operation.ts';
import type { OperationsService } from '../../operations/operations-service.ts';
import type { ToolCatalog, ToolSpec } from '../../operations/tool-spec.ts';
import type { Logger } from '../../operations/ports.ts';
import type { Era, RequestView } from '../edge/request-view.ts';

export interface McpDeps {
  catalog: ToolCatalog;
  operations: OperationsService;
  logger: Logger;
  /**
   * The server's secret key (32 bytes or more) for integrity-protected state handed to
   * clients (`requestState`). Read once per process, on first use.
   */
  secretKey: () => Promise<Uint8Array>;
}

/** A tool as `tools/list` shows it, before a dialect adds its fields. */
export interface ToolListing {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface CallRequest {
  tool: ToolSpec;
  /** Validated arguments. */
  arguments: Record<string, unknown>;
  params: Record<string, unknown>;
  view: RequestView;
  /** The SDK's request context: MRTR retry fields (`inputResponses`, `requestState`) and the response stream. */
  ctx: ServerContext;
}

/** A `tools/call` a dialect claimed, as the edge sees it before any SDK server would: no request context. */
export type StartRequest = Omit<CallRequest, 'ctx'>;

/**
 * Starts the operation a claimed `tools/call` asks for, as `dialect`'s, under the caller's
 * principal and with its capabilities and request id: with a token the server mints unless the
 * client brought one, and the tool's keepAlive unless the client asked for another.
 */
export function startOperationFor(
  request: StartRequest,
  deps: McpDeps,
  dialect: Dialect,
  options: { token?: string; keepAliveSeconds?: number | null | undefined } = {},
): Promise<OperationRecord> {
  const { tool, view } = request;
  return deps.operations.start({
    ownerId: view.ownerId,
    tool,
    arguments: request.arguments,
    token: options.token ?? deps.operations.mintToken(),
    dialect,
    ...(options.keepAliveSeconds === undefined ? {} : { keepAliveSeconds: options.keepAliveSeconds }),
    requestId: view.requestKey,
    clientCapabilities: view.clientCapabilities,
  });
}

/**
 * A method the edge answers directly: the params as sent (envelope included) and the request's
 * view. `idField` names the params member the method reads by, which a 2026-07-28 request's
 * `Mcp-Name` header mirrors.
 */
export type DirectMethod = ((params: Record<string, unknown>, view: RequestView, deps: McpDeps) => Promise<Record<string, unknown>>) & {
  readonly idField: string;
};

export interface AsyncDialect {
  readonly name: string;
  /** This dialect's methods that read an operation's status: each request of one is a poll. */
  readonly statusMethods: readonly string[];
  /**
   * This dialect's methods whose handlers send the client nothing before their response (no
   * progress, no question), so an initialize-era request can be answered as one JSON object.
   */
  readonly answeredAtOnce: readonly string[];
  /**
   * Methods whose handlers send the client something before their response only in some
   * states (a status with open questions): for each, whether this initialize-era request's
   * answer is its response alone, so it can go as one JSON object. The check may start the
   * record read the handler needs; the handler then reuses it (`readOncePerRequest`), so a
   * request still reads its record once.
   */
  readonly answeredAtOnceWhen?: Readonly<Record<string, (params: Record<string, unknown>, ownerId: string, deps: McpDeps) => Promise<boolean>>>;
  /**
   * Methods, per era, whose plain success the edge may answer without an SDK server
   * (edge/direct-answer.ts): reads that send the client nothing before their result, which
   * goes out as the handler registered for the method returns it. Each throws where that
   * handler would answer an error or send something first; the edge then serves the request
   * through the SDK, which does as it always does.
   */
  readonly answeredDirectly?: Readonly<Partial<Record<Era, Readonly<Record<string, DirectMethod>>>>>;
  /** Whether this request declared this dialect (per-request capabilities): it then shapes `tools/list`. */
  claimsListing(view: RequestView): boolean;
  /**
   * Whether the request's protocol revision implies this dialect without a per-request
   * declaration. Consulted only when no dialect claims the request outright.
   */
  impliedBy?(view: RequestView): boolean;
  /**
   * Whether what the client declared shows it does not support this dialect, though its
   * revision implies it. With handle tools on, such a client is served those instead.
   */
  declinedBy?(view: RequestView): boolean;
  /** The tool as this dialect lists it; `undefined` hides it. */
  listTool(tool: ToolSpec, base: ToolListing): ToolListing | undefined;
  /** Whether this `tools/call` of `tool` belongs to this dialect. */
  claimsCall(params: Record<string, unknown>, view: RequestView, tool: ToolSpec): boolean;
  /** Answers a `tools/call` this dialect claimed, after arguments were validated. */
  call(request: CallRequest, deps: McpDeps): Promise<Record<string, unknown>>;
  /**
   * For a call `call` would answer by starting an operation and nothing else (no question
   * asked, no retry resumed, nothing sent first), the checks it makes before the start, made:
   * the function returned is that start and its answer. `undefined` when `call` would do more;
   * throws where `call` would refuse before starting. The edge answers such a call without an
   * SDK server (edge/direct-answer.ts), so the two must start and answer alike.
   */
  plainStart?(request: StartRequest, deps: McpDeps): (() => Promise<Record<string, unknown>>) | undefined;
  /**
   * For a request of this dialect's era that did not opt in, the error for calling an
   * async-only tool (each era words it differently); `undefined` when not this era.
   */
  refuseAsyncOnly?(tool: ToolSpec, view: RequestView): Error | undefined;
  /** Server capabilities this dialect advertises to clients of `era` (initialize or server/discover). */
  capabilities?(era: Era): Record<string, unknown>;
  /** Registers this dialect's own methods on a per-request server. */
  register(server: Server, deps: McpDeps, era: RequestView['era'], ownerId: string): void;
}
