/**
 * The fetch-style MCP endpoint shared by the Lambda and the local server: one
 * `(Request, principal) => Response` function, so local runs exercise the deployed
 * code path. It serves 2026-07-28 and initialize-based clients from one URL. Before the
 * SDK sees a request, it checks an initialize-era session id (legacy-session.ts) and takes
 * the client's answers to questions asked mid-run (client-responses.ts).
 */
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  originValidationResponse,
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { ownerIdFor } from '../../operations/fingerprint.ts';
import { isObject } from '../../shared/json-values.ts';
import { acceptClientResponses, parseClientResponses, refuse } from '../input/client-responses.ts';
import { customHeaderRefusal } from './custom-headers.ts';
import { JSONRPC } from './json-rpc-errors.ts';
import { checkSession, initializeCapabilities, withSessionId, type SessionCheck } from '../input/legacy-session.ts';
import { createServerFactory, handleToolsOn, SERVER_INFO, type ServerFactoryOptions } from '../mcp-server-factory.ts';
import { createListenHandler, isListenRequest, type ListenOptions } from '../listen/listen-handler.ts';
import type { ListenLeases } from '../../operations/listen-leases.ts';
import { OPERATION_STATUS } from '../calls/handle-tool-schemas.ts';
import { isAuthenticatedPrincipal } from '../events/events-runtime.ts';
import { createEventsStreamHandler, isEventsStreamRequest } from '../events/events-stream.ts';
import { answerLegacyDirectly, answerModernDirectly, startLegacyDirectly, startModernDirectly } from './direct-answer.ts';
import { type GuardedBody, guardRequestBody, MAX_BODY_BYTES } from './request-body-guard.ts';
import { withRequestScope } from './request-scope.ts';
import { withRequestSpan } from './request-span.ts';
import { tracingOn } from '../../observability/tracing.ts';
import { noMetrics, type MetricsRecorder } from '../../observability/metrics-recorder.ts';
import { withRequestContext } from '../../observability/request-context.ts';
import { countPolls, describeRequest, noteEra } from '../../observability/request-observer.ts';

export { MAX_BODY_BYTES };

/**
 * The core methods whose handlers send the client nothing before their response: with the
 * dialects' own (`answeredAtOnce`), an initialize-era request for one is answered as one
 * JSON object. Not `tools/call`, which may stream progress and questions first.
 */
const CORE_ANSWERED_AT_ONCE = ['tools/list', 'resources/list', 'resources/read', 'ping'];

export interface HttpHandlerOptions extends ServerFactoryOptions {
  /**
   * Hostnames accepted in Host and Origin (DNS-rebinding protection for local
   * servers). Absent in AWS, where the Function URL fixes the host.
   */
  allowedHostnames?: string[];
  /** Where polls are counted. @default noMetrics */
  metrics?: MetricsRecorder;
  /**
   * Whether the dialects' `answeredDirectly` methods, and their plain starts, are answered
   * without an SDK server (direct-answer.ts); `false` serves every request through the SDK, as
   * the parity test compares them. @default true
   */
  answerDirectly?: boolean;
  /** `subscriptions/listen` with task notifications; without it, the SDK's own empty acknowledgement. */
  listen?: ListenOptions & { leases: ListenLeases };
}

export type McpFetch = (request: Request, principal: string) => Promise<Response>;

/** The MCP endpoint over the given dependencies and dialects: a fresh SDK server per request. */
export function createHttpHandler(options: HttpHandlerOptions): McpFetch {
  const factory = createServerFactory(options);
  const handler = createMcpHandler(
    (ctx) => {
      noteEra(ctx.era);
      const extra = ctx.authInfo?.extra;
      return factory(ctx.era, (extra?.ownerId as string | undefined) ?? ownerIdFor('anonymous'), extra?.authenticated === true);
    },
    {
      legacy: 'stateless',
      maxRequestBodySize: MAX_BODY_BYTES,
      onerror: (error) => {
        // Requests the SDK rejected (bad JSON-RPC, header mismatches) are the client's mistake, already answered.
        const rejected = error.message.startsWith('Rejected inbound request');
        (rejected ? options.deps.logger.warn : options.deps.logger.error)(rejected ? 'request rejected' : 'transport error', {
          error: `${error.name}: ${error.message}`,
        });
      },
    },
  );
  /**
   * An initialize-era request whose answer is its response alone, served as the SDK's
   * stateless fallback serves it, but answered as one JSON object (Streamable HTTP allows
   * either): no SSE stream to write and relay for a poll.
   */
  const serveLegacyAtOnce = async (request: Request, fetchOptions: { authInfo: AuthInfo; parsedBody?: unknown }, ownerId: string): Promise<Response> => {
    noteEra('legacy');
    const server = factory('legacy', ownerId);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_BODY_BYTES,
    });
    await server.connect(transport);
    // Not closed afterwards: a JSON answer is complete once the handler has answered, so nothing
    // is left in flight, and closing would only build the SDK's "Connection closed" error (with
    // its stack trace) for each poll. Both are garbage once the response is returned.
    return transport.handleRequest(request, fetchOptions);
  };
  const metrics = options.metrics ?? noMetrics;
  // A container serves few principals, each many requests: its owner id (a SHA-256) is kept, not hashed again per poll.
  const ownerIds = rememberedOwnerIds();
  const listen = options.listen ? createListenHandler(options.deps, options.listen.leases, options.listen) : undefined;
  const eventsStream = options.events ? createEventsStreamHandler(options.deps, options.events) : undefined;
  const answeredAtOnce = new Set([...CORE_ANSWERED_AT_ONCE, ...options.dialects.flatMap((d) => d.answeredAtOnce)]);
  const answeredAtOnceWhen = new Map(options.dialects.flatMap((d) => Object.entries(d.answeredAtOnceWhen ?? {})));
  const directly = (era: 'modern' | 'legacy') =>
    new Map(options.answerDirectly === false ? [] : options.dialects.flatMap((d) => Object.entries(d.answeredDirectly?.[era] ?? {})));
  const answeredDirectly = { modern: directly('modern'), legacy: directly('legacy') };
  const startsDirectly = options.answerDirectly !== false;
  const polls = {
    statusMethods: new Set(options.dialects.flatMap((d) => d.statusMethods)),
    ...(handleToolsOn(options) ? { statusTool: OPERATION_STATUS } : {}),
  };
  const isCatalogName = (name: string) => options.deps.catalog.get(name) !== undefined;
  const serve: McpFetch = async (request, principal) => {
    if (options.allowedHostnames) {
      const rejected = hostHeaderValidationResponse(request, options.allowedHostnames) ?? originValidationResponse(request, options.allowedHostnames);
      if (rejected) return rejected;
    }
    // Size, nesting depth, batches and id lengths are checked before the SDK parses anything.
    const guarded = await guardRequestBody(request);
    if (!guarded.ok) return guarded.response;
    const ownerId = ownerIds(principal);
    describeRequest(guarded.parsedBody, ownerId);
    // One flag read when tracing is off: the poll path builds no span and loads no SDK.
    return tracingOn()
      ? withRequestSpan(guarded.parsedBody, request.headers, isCatalogName, () => serveParsed(request, principal, guarded, ownerId))
      : serveParsed(request, principal, guarded, ownerId);
  };
  const serveParsed = async (request: Request, principal: string, guarded: Extract<GuardedBody, { ok: true }>, ownerId: string): Promise<Response> => {
    const { deps } = options;
    let session: SessionCheck;
    try {
      session = await checkSession(guarded.request, guarded.parsedBody, ownerId, deps.secretKey);
    } catch (error) {
      deps.logger.error('session not checked', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      return refuse(500, JSONRPC.INTERNAL_ERROR, 'Internal error: the server could not check the session');
    }
    if (!session.ok) return session.response;
    // The session holds nothing on the server: ending it is only acknowledged.
    if (request.method.toUpperCase() === 'DELETE' && session.capabilities) return new Response(null, { status: 204 });
    const answers = guarded.parsedBody === undefined ? undefined : parseClientResponses(guarded.parsedBody);
    if (answers) return answers.ok ? acceptClientResponses(answers.answers, ownerId, deps) : refuse(400, JSONRPC.INVALID_REQUEST, answers.message);
    const headerRefusal = customHeaderRefusal(session.request, guarded.parsedBody, deps.catalog);
    if (headerRefusal) {
      // The client's mistake, answered; the header values are tool arguments and stay out of logs.
      deps.logger.warn('request rejected', { error: 'Mcp-Param header does not match the arguments' });
      return headerRefusal;
    }
    if (eventsStream && isEventsStreamRequest(guarded.parsedBody)) {
      // One subscription per long-lived request: served here, beside the SDK, as listen is.
      const streaming = await eventsStream(request, guarded.parsedBody, ownerId);
      if (streaming) return streaming;
    }
    if (listen && isListenRequest(guarded.parsedBody)) {
      // A long-lived stream of its own: served here, as the SDK's would acknowledge nothing of the extension's.
      const listening = await listen(request, guarded.parsedBody, ownerId);
      if (listening) return listening;
    }
    const authInfo: AuthInfo = { token: '', clientId: principal, scopes: [], extra: { ownerId, authenticated: isAuthenticatedPrincipal(principal) } };
    const fetchOptions = { authInfo, ...(guarded.parsedBody === undefined ? {} : { parsedBody: guarded.parsedBody }) };
    const message = isObject(guarded.parsedBody) && typeof guarded.parsedBody.method === 'string' ? guarded.parsedBody : undefined;
    const method = message?.method as string | undefined;
    const atOnce = method !== undefined && answeredAtOnce.has(method);
    const atOnceWhen = method === undefined ? undefined : answeredAtOnceWhen.get(method);
    const serveRequest = async () => {
      const modernDirect = method === undefined ? undefined : answeredDirectly.modern.get(method);
      if (modernDirect && message && claimsModernEnvelope(message)) {
        const answered = await answerModernDirectly(session.request, message, modernDirect, ownerId, deps, SERVER_INFO);
        if (answered) return answered;
      }
      if (startsDirectly && method === 'tools/call' && message) {
        const started = claimsModernEnvelope(message)
          ? await startModernDirectly(session.request, message, factory.plainStart, ownerId, SERVER_INFO)
          : (await isLegacyRequest(session.request, guarded.parsedBody)) && (await startLegacyDirectly(session.request, message, factory.plainStart, ownerId));
        if (started) return started;
      }
      // A request that claims a 2026-07-28 envelope is never the SDK's legacy era: not classified twice.
      const legacy = (atOnce || atOnceWhen !== undefined) && !claimsModernEnvelope(message) && (await isLegacyRequest(session.request, guarded.parsedBody));
      const params = message !== undefined && isObject(message.params) ? message.params : {};
      // Inside the request scope: a dialect's check may start the record read its handler reuses.
      if (!legacy || !(atOnce || (await atOnceWhen?.(params, ownerId, deps)) === true)) return handler.fetch(session.request, fetchOptions);
      const legacyDirect = method === undefined ? undefined : answeredDirectly.legacy.get(method);
      const answered = legacyDirect && message && (await answerLegacyDirectly(session.request, message, legacyDirect, ownerId, deps));
      return answered || serveLegacyAtOnce(session.request, fetchOptions, ownerId);
    };
    const response = await withRequestScope(serveRequest, {
      batch: guarded.batch,
      mayOverrideStatus: isObject(guarded.parsedBody) && guarded.parsedBody.method === 'tools/call',
      // A request (it has an id) is answered after its handler has run: no notification handler to wait for.
      mayHoldNotification: !(isObject(guarded.parsedBody) && 'id' in guarded.parsedBody),
      ...(session.capabilities ? { sessionCapabilities: session.capabilities } : {}),
    });
    countPolls(metrics, guarded.parsedBody, polls);
    const declared = initializeCapabilities(guarded.parsedBody);
    if (declared === undefined) return response;
    try {
      return await withSessionId(response, declared, ownerId, deps.secretKey);
    } catch (error) {
      // The client is served without a session: it can use every tool, but is asked nothing.
      deps.logger.error('session id not minted', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      return response;
    }
  };
  // Each request's log lines carry its own context, however many are served at once.
  return (request, principal) => withRequestContext({}, () => serve(request, principal));
}

/**
 * Whether a request names a protocol revision in its `_meta` envelope, which the SDK's
 * classifier always takes as the modern era (or refuses), never as a legacy request; an
 * `initialize` is left to the classifier.
 */
function claimsModernEnvelope(message: Record<string, unknown> | undefined): boolean {
  if (message === undefined || message.method === 'initialize' || !isObject(message.params)) return false;
  const meta = message.params._meta;
  return isObject(meta) && PROTOCOL_VERSION_META_KEY in meta;
}

/** How many principals' owner ids an edge keeps; past it, it starts over. */
const REMEMBERED_OWNERS = 256;

/** `ownerIdFor`, remembered for the last principals seen. */
function rememberedOwnerIds(): (principal: string) => string {
  const known = new Map<string, string>();
  return (principal) => {
    let ownerId = known.get(principal);
    if (ownerId === undefined) {
      if (known.size >= REMEMBERED_OWNERS) known.clear();
      ownerId = ownerIdFor(principal);
      known.set(principal, ownerId);
    }
    return ownerId;
  };
}
