/**
 * The composition root shared by the Lambda handlers and the local runtime: given a
 * record store, a workflow engine and the catalog, it builds the MCP fetch handler
 * and the status-sync handler. Both environments run exactly this wiring; only the
 * Events parts a single process runs come in from outside (createAsyncMcpApp), so the
 * MCP function's entry, which passes its AWS parts, never reaches them.
 */
import { createOperations, type OperationsLimits, type OperationsService, type ResultSpill } from '../operations/operations-service.ts';
import { mcpInputProtocol } from '../mcp/input/mcp-input-protocol.ts';
import type { RecordStore, WorkflowEngine } from '../operations/ports.ts';
import type { ToolCatalog } from '../operations/tool-spec.ts';
import { createStatusSyncHandler, type StatusSyncHandler } from '../aws/status-sync.ts';
import { settleEventsOf, withLenientEventRecording } from '../events/event-recorder.ts';
import type { OperationEventSink } from '../aws/operation-events.ts';
import type { AsyncDialect } from '../mcp/dialects/dialect.ts';
import { sep1391Dialect } from '../mcp/dialects/sep-1391.ts';
import { tasks20251125Dialect } from '../mcp/dialects/tasks-2025-11-25.ts';
import { tasks20260728Dialect } from '../mcp/dialects/tasks-2026-07-28.ts';
import { createHttpHandler, type McpFetch } from '../mcp/edge/http-handler.ts';
import { shapeFinishedResult } from '../mcp/results/tool-result.ts';
import { consoleLogger } from '../logging/logger.ts';
import type { Logger } from '../operations/ports.ts';
import { noMetrics, type MetricsRecorder } from '../observability/metrics-recorder.ts';
import { cachedServerKey } from '../shared/server-key.ts';
import { ObservedRecordStore } from '../observability/observed-record-store.ts';
import { LISTEN_DEFAULTS, type ListenOptions } from '../mcp/listen/listen-handler.ts';
import { ListenLeases } from '../operations/listen-leases.ts';
import { signallingRecordStore } from '../operations/status-signal.ts';
import { createAppEvents, type EventsAppOptions, type InProcessEvents } from '../mcp/events/app-events.ts';
import type { DeliverWebhookJob } from '../events/webhook-delivery-job.ts';
import type { LocalWebhookDeliveryQueue } from '../events/local-webhook-delivery-queue.ts';

export type { EventsAppOptions, InProcessEvents };

export interface AsyncMcpAppOptions {
  store: RecordStore;
  engine: WorkflowEngine;
  catalog: ToolCatalog;
  limits?: OperationsLimits;
  logger?: Logger;
  /**
   * Operation, poll, lag and input metrics (EMF in AWS). Flushed by the caller once per
   * invocation, and by status-sync after each event.
   * @default noMetrics
   */
  metrics?: MetricsRecorder;
  /** Host/Origin allowlist; set for the local server only. */
  allowedHostnames?: string[];
  /**
   * Handle tools for clients that declare no async support: every tool is listed, a
   * long-running call answers with an operation id, and `operation_status`,
   * `operation_result`, `operation_cancel` and `operation_list` follow it up.
   * @default true
   */
  handleTools?: boolean;
  /**
   * The operation card (MCP Apps, `ui://async-mcp/operation`) for clients that declare
   * `io.modelcontextprotocol/ui`; others never see it.
   * @default on, unless `ASYNC_MCP_OPERATION_CARD` is "0"
   */
  operationCard?: boolean;
  /**
   * Whether the dialects' plain reads (`tasks/get` of both revisions, a SEP-1391 status with no
   * open question) are answered without an SDK
   * server (mcp/edge/direct-answer.ts); `false` serves every request through the SDK.
   * @default true
   */
  answerDirectly?: boolean;
  /** Where outputs too large for a record go; without it they stay in the record (up to its size limit). */
  results?: ResultSpill;
  /**
   * The server's secret key for state it hands clients (`requestState`): Secrets Manager in
   * AWS, a file in the data directory locally. Called on first use only.
   */
  secretKey: () => Promise<Uint8Array>;
  /** Where status sync puts an `Operation Status Changed` event after each write; none without it. */
  operationEvents?: OperationEventSink;
  /** `subscriptions/listen` with task notifications: on unless `enabled: false`; `wake` is the local stack's. */
  listen?: ListenOptions;
  /** The MCP Events extension (`events/*`, SEP-3415): on unless `enabled: false`. */
  events?: EventsAppOptions;
}

export interface AsyncMcpApp {
  fetch: McpFetch;
  statusSync: StatusSyncHandler;
  operations: OperationsService;
  /** One try of one webhook delivery job (the Events extension), where webhooks are offered in process. */
  deliverWebhookJob?: DeliverWebhookJob;
  /** The in-process webhook delivery queue of a local app: `drain()` waits for its jobs. */
  webhookQueue?: LocalWebhookDeliveryQueue;
}

/**
 * The async dialects, in the order the router asks them: the Tasks extension (2026-07-28),
 * 2025-11-25 tasks, then SEP-1391. A request a dialect claims is that dialect's alone.
 */
const DIALECTS: readonly AsyncDialect[] = [tasks20260728Dialect, tasks20251125Dialect, sep1391Dialect];

/**
 * The app over `options`; `inProcess`, the Events parts only one process runs, stands in for
 * whichever of the log, subscriptions and delivery queue `options.events` leaves out.
 */
export function composeAsyncMcpApp(options: AsyncMcpAppOptions, inProcess?: InProcessEvents): AsyncMcpApp {
  const logger = options.logger ?? consoleLogger;
  const metrics = options.metrics ?? noMetrics;
  // Starts and ends are counted where the conditional writes decide them.
  const observed = new ObservedRecordStore(options.store, metrics);
  const secretKey = cachedServerKey(options.secretKey);
  // The allowlist is set for the local server only: there, webhook jobs run in process and callbacks are loopback.
  const events = createAppEvents(options.events ?? {}, {
    logger,
    secretKey,
    local: options.allowedHostnames !== undefined,
    ...(inProcess ? { inProcess } : {}),
  });
  // Each status write that is an occurrence (an end, a question, a progress line) is appended to the event log.
  const recording = events.recordingStore(observed);
  // Where status writes happen beside the listen and event streams (locally), each wakes them, after its occurrences are logged.
  const store = options.listen?.wake ? signallingRecordStore(recording, options.listen.wake) : recording;
  // A result is checked and shaped once, when its operation ends, then served as stored; the catalog
  // tells a running operation whose tool this deploy no longer serves.
  const operations = createOperations({
    store,
    engine: options.engine,
    limits: options.limits,
    logger,
    results: options.results,
    shapeResult: shapeFinishedResult,
    catalog: options.catalog,
    input: mcpInputProtocol,
  });
  const deps = { catalog: options.catalog, operations, logger, secretKey };
  const handle = createHttpHandler({
    deps,
    dialects: DIALECTS,
    ...(options.allowedHostnames ? { allowedHostnames: options.allowedHostnames } : {}),
    handleTools: options.handleTools !== false,
    ...(options.answerDirectly === undefined ? {} : { answerDirectly: options.answerDirectly }),
    ...(options.operationCard === undefined ? {} : { operationCard: options.operationCard }),
    metrics,
    listen: { ...options.listen, leases: new ListenLeases(store, options.listen?.maxStreamsPerPrincipal ?? LISTEN_DEFAULTS.maxStreamsPerPrincipal, logger) },
    events: events.runtime(store, options.listen?.wake),
  });
  // A client's request gets the answer its write earned even when the event log then fails; status sync records the end.
  const fetch: McpFetch = (request, principal) => withLenientEventRecording(() => handle(request, principal));
  return {
    fetch,
    // A redelivered end settles its events again (event-recorder.ts).
    statusSync: createStatusSyncHandler(operations, options.engine, logger, metrics, options.operationEvents, (record) => settleEventsOf(recording, record)),
    operations,
    ...(events.deliverWebhookJob ? { deliverWebhookJob: events.deliverWebhookJob } : {}),
    ...(events.localQueue ? { webhookQueue: events.localQueue } : {}),
  };
}
