/**
 * `events/stream` (SEP-3415 "Push-Based Delivery"): one subscription per request, answered
 * with an SSE stream that follows the per-principal log. `notifications/events/active`
 * first, then `notifications/events/event` with the cursor after each event, and
 * `notifications/events/heartbeat` with the cursor checked up to; every message carries
 * `_meta["io.modelcontextprotocol/subscriptionId"]`. Like `subscriptions/listen` it ends
 * cleanly before the invocation's deadline (the client reconnects with its cursor), wakes at
 * once on a status written in this process, and counts against a per-principal cap.
 */
import { classifyInboundRequest, SUBSCRIPTION_ID_META_KEY, type InboundHttpRequest } from '@modelcontextprotocol/server';
import { matchesFilter, type EventFilter } from '../../events/event-filter.ts';
import { encodeEventCursor } from '../../events/event-cursor.ts';
import { positionOf } from '../../events/event-log.ts';
import { readEvents, startOf } from '../../events/event-reader.ts';
import { EventsError } from '../../events/events-error.ts';
import { isTerminal } from '../../operations/operation.ts';
import { isObject } from '../../shared/json-values.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { eventsWireError, JSONRPC } from '../edge/json-rpc-errors.ts';
import { invocationDeadline, onceWithinInvocation } from '../listen/listen-deadline.ts';
import { eventTypeNamed, type EventType } from './event-catalog.ts';
import { occurrenceOf } from '../../events/event-occurrence.ts';
import { cursorPosition, MAX_EVENTS_PER_POLL, parseEventParams, SubscriptionParams } from './events-methods.ts';
import { checkOwnOperation, readSettingsOf, streamLeaseOwner, type EventsRuntime } from './events-runtime.ts';

const METHOD = 'events/stream';
const MODERN_VERSION = '2026-07-28';

/** Answers an `events/stream` request, or `undefined` when the request is not one this handler takes. */
export type EventsStreamHandler = (request: Request, body: unknown, ownerId: string) => Promise<Response | undefined>;

/** Whether a parsed body is an `events/stream` request. */
export function isEventsStreamRequest(body: unknown): boolean {
  return isObject(body) && body.method === METHOD && 'id' in body;
}

/** The SSE headers of a stream: no proxy may buffer it. */
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' };

interface StreamPlan {
  id: string | number;
  ownerId: string;
  type: EventType;
  filter: EventFilter;
  position: string;
  truncated: boolean;
  maxAgeMs?: number;
  endAtMs: number;
  release: () => Promise<void>;
  signal: AbortSignal;
}

export function createEventsStreamHandler(deps: McpDeps, runtime: EventsRuntime): EventsStreamHandler {
  const { settings } = runtime;
  return async (request, body, ownerId) => {
    if (!isEventsStreamRequest(body) || !isObject(body)) return undefined;
    const params = isObject(body.params) ? body.params : {};
    const meta = isObject(params._meta) ? params._meta : {};
    // Only a well-formed 2026-07-28 request is ours: what the SDK's ladder would refuse (a bad envelope, headers that
    // disagree), or route to the legacy era, goes on to the SDK, which answers it as it answers any request.
    if (meta['io.modelcontextprotocol/protocolVersion'] !== MODERN_VERSION) return undefined;
    if (request.headers.get('mcp-protocol-version') !== MODERN_VERSION || request.headers.get('mcp-method') !== METHOD) return undefined;
    if (classifyInboundRequest(inboundOf(request, body)).kind !== 'modern') return undefined;
    const id = body.id as string | number;
    if (!settings.enabled) return jsonRpcError(id, 404, { code: JSONRPC.METHOD_NOT_FOUND, message: `Method not found: ${METHOD}` });

    let plan: StreamPlan;
    try {
      // "If the subscription is invalid ... the server responds immediately with a JSON-RPC error and no stream is opened."
      const wire = parseEventParams(SubscriptionParams, params);
      const type = eventTypeNamed(wire.name);
      const filter = type.parse(wire.arguments);
      const cursor = cursorPosition(wire.cursor);
      if (filter.operationId !== undefined) await checkOwnOperation(deps, ownerId, filter.operationId);
      const now = runtime.now();
      const start = startOf(cursor, wire.maxAgeMs, readSettingsOf(runtime), now);
      const deadline = invocationDeadline();
      const endAtMs = Math.min(now + settings.maxStreamMs, deadline === undefined ? Infinity : deadline - settings.deadlineMarginMs);
      const lease = await runtime.streams.acquire(streamLeaseOwner(ownerId), endAtMs);
      if (!lease) {
        throw new EventsError('RESOURCE_EXHAUSTED', `Too many open ${METHOD} requests: at most ${runtime.streams.limit} per principal; close one first`, {
          limit: 'streams',
          max: runtime.streams.limit,
        });
      }
      plan = {
        id,
        ownerId,
        type,
        filter,
        position: start.position,
        truncated: start.truncated,
        ...(wire.maxAgeMs === undefined ? {} : { maxAgeMs: wire.maxAgeMs }),
        endAtMs,
        release: () => runtime.streams.release(lease),
        signal: request.signal,
      };
    } catch (error) {
      if (error instanceof EventsError) return jsonRpcError(id, 200, eventsWireError(error));
      deps.logger.error('events/stream not opened', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      return jsonRpcError(id, 200, { code: JSONRPC.INTERNAL_ERROR, message: 'Internal error: the server could not open the stream' });
    }
    return streamResponse(plan, deps, runtime);
  };
}

function streamResponse(plan: StreamPlan, deps: McpDeps, runtime: EventsRuntime): Response {
  const { settings } = runtime;
  const encoder = new TextEncoder();
  const stop = new AbortController();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const release = onceWithinInvocation(() => plan.release());
  let position = plan.position;

  const write = (message: Record<string, unknown>) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`));
    } catch {
      closed = true;
    }
  };
  // "Every notifications/events/* message carries the JSON-RPC id of the parent events/stream request"
  const meta = { _meta: { [SUBSCRIPTION_ID_META_KEY]: plan.id } };
  const notify = (method: string, params: Record<string, unknown>) => write({ method, params: { ...params, ...meta } });
  const finish = async (final?: Record<string, unknown>) => {
    if (closed) return;
    if (final) notify(final.method as string, final.params as Record<string, unknown>);
    // The lease goes back before the final frame, so a client that reconnects at once is not refused at the cap.
    await release();
    // "When the server ends the stream it sends the StreamEventsResult as the final data: frame."
    write({ id: plan.id, result: { resultType: 'complete', ...meta } });
    closed = true;
    stop.abort();
    try {
      controller.close();
    } catch {
      // Already closed by the client.
    }
    void release();
  };

  /** Sends what the log holds past `position` up to the settled horizon; `true` when more is waiting. */
  const pass = async (): Promise<boolean> => {
    const read = await readEvents(
      runtime.log,
      {
        ownerId: plan.ownerId,
        name: plan.type.name,
        ...(plan.filter.operationId === undefined ? {} : { operationId: plan.filter.operationId }),
        match: (entry) => matchesFilter(plan.filter, entry),
        cursor: position,
        maxEvents: MAX_EVENTS_PER_POLL,
      },
      readSettingsOf(runtime),
      runtime.now(),
    );
    for (const entry of read.entries) notify('notifications/events/event', occurrenceOf(entry, encodeEventCursor(positionOf(entry))));
    position = read.position;
    return read.hasMore;
  };

  /**
   * A per-operation stream ends once its operation has, after the last moments' events: "The
   * server MUST terminate the event stream when the task reaches a terminal status" (Task Event Sources).
   */
  const operationOver = async (): Promise<{ status: string } | undefined> => {
    if (plan.filter.operationId === undefined || plan.type.name !== 'operation.progress') return undefined;
    try {
      const record = await deps.operations.readLive({ ownerId: plan.ownerId, token: plan.filter.operationId });
      if (!isTerminal(record.status)) return undefined;
      const endedAt = record.completedAt ?? record.updatedAt;
      return runtime.now() - endedAt > settings.settleMs ? { status: record.status } : undefined;
    } catch {
      return { status: 'gone' };
    }
  };

  const run = async () => {
    let wakeUp: (() => void) | undefined;
    let woken = false;
    const unsubscribe = runtime.wake?.subscribe(() => {
      woken = true;
      wakeUp?.();
    });
    const sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(0, ms));
        function done() {
          clearTimeout(timer);
          stop.signal.removeEventListener('abort', done);
          wakeUp = undefined;
          resolve();
        }
        wakeUp = done;
        stop.signal.addEventListener('abort', done, { once: true });
      });
    try {
      notify('notifications/events/active', { cursor: encodeEventCursor(position), truncated: plan.truncated });
      let lastBeat = runtime.now();
      while (!closed) {
        let more: boolean;
        try {
          more = await pass();
        } catch (error) {
          // "notifications/events/error reports a recoverable failure": the stream stays, and reads again.
          deps.logger.warn('events/stream read failed', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
          notify('notifications/events/error', { error: { code: JSONRPC.INTERNAL_ERROR, message: 'The server could not read the event log; it tries again' } });
          more = false;
        }
        if (closed) break;
        if (!more) {
          const over = await operationOver();
          if (over) {
            await pass();
            await finish({
              method: 'notifications/events/terminated',
              params: {
                error: {
                  code: JSONRPC.NOT_FOUND,
                  message: 'The operation has ended; its progress stream is over',
                  data: { kind: 'operation', reason: 'operation_ended', status: over.status },
                },
              },
            });
            break;
          }
        }
        const now = runtime.now();
        if (now - lastBeat >= settings.heartbeatMs) {
          // "The SSE comment form (: keepalive) is not used, because it cannot carry cursor state."
          notify('notifications/events/heartbeat', { cursor: encodeEventCursor(position) });
          lastBeat = now;
        }
        if (now >= plan.endAtMs) {
          await finish();
          break;
        }
        if (more) continue;
        // A wake-up means a write just landed: read once it has settled.
        const wait = woken ? settings.settleMs + 10 : Math.min(settings.streamReadMs, settings.heartbeatMs - (now - lastBeat));
        woken = false;
        await sleep(Math.min(wait, plan.endAtMs - now));
      }
    } catch (error) {
      deps.logger.error('events/stream failed', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      await finish();
    } finally {
      unsubscribe?.();
      void release();
    }
  };

  const body = new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      void run();
    },
    cancel() {
      closed = true;
      stop.abort();
      void release();
    },
  });
  const abort = () => {
    // "On Streamable HTTP, the abort is the terminal signal and no result is sent."
    closed = true;
    stop.abort();
    try {
      controller.close();
    } catch {
      // Already closed.
    }
    void release();
  };
  if (plan.signal.aborted) abort();
  else plan.signal.addEventListener('abort', abort, { once: true });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** The request as the SDK's classifier reads it. */
function inboundOf(request: Request, body: unknown): InboundHttpRequest {
  const header = (name: string) => request.headers.get(name) ?? undefined;
  const version = header('mcp-protocol-version');
  const method = header('mcp-method');
  const name = header('mcp-name');
  return {
    httpMethod: request.method,
    body,
    ...(version === undefined ? {} : { protocolVersionHeader: version }),
    ...(method === undefined ? {} : { mcpMethodHeader: method }),
    ...(name === undefined ? {} : { mcpNameHeader: name }),
  };
}

function jsonRpcError(id: string | number, status: number, error: { code: number; message: string; data?: unknown }): Response {
  return Response.json({ jsonrpc: '2.0', id, error }, { status });
}
