/**
 * The Events extension's part of the app (compose-async-mcp-app.ts): the log and the record
 * store that feeds it, the webhook subscriptions with their fan-out, sender and queue, and the
 * runtime the MCP edge serves `events/*` from. A deployment passes the DynamoDB log and
 * subscriptions and its SQS queue. The parts only one process runs (the log and subscriptions
 * in memory, the in-process queue on timers) come in as `InProcessEvents` from
 * createAsyncMcpApp, the local stack's and the testing kit's app, and are its defaults: this
 * module never imports them, so the MCP function's bundle carries none.
 */
import type { EventHandover } from '../../events/event-handover.ts';
import type { EventEntry, EventLog } from '../../events/event-log.ts';
import { resolveEventsSettings, type EventsSettings, type EventsSettingsInput } from '../../events/events-settings.ts';
import type { InMemoryEventLog } from '../../events/in-memory-event-log.ts';
import type { LocalWebhookDeliveryQueue } from '../../events/local-webhook-delivery-queue.ts';
import { operationEndedError } from '../../events/operation-ended.ts';
import type { DeliverWebhookJob, WebhookDeliveryQueue } from '../../events/webhook-delivery-job.ts';
import type { WebhookSubscriptionStore } from '../../events/webhook-subscription.ts';
import { WebhookFanOut } from '../../events/webhook-fan-out.ts';
import { WebhookSubscriptions } from '../../events/webhook-subscriptions.ts';
import type { CallbackMode } from '../../events/webhooks/callback-url-guard.ts';
import { createWebhookSender, type WebhookSender } from '../../events/webhooks/webhook-sender.ts';
import { ListenLeases } from '../../operations/listen-leases.ts';
import { systemClock, type Logger, type RecordStore } from '../../operations/ports.ts';
import type { StatusSignal } from '../../operations/status-signal.ts';
import type { ServerKey } from '../../shared/server-key.ts';
import { eventsWireError } from '../edge/events-wire-errors.ts';
import { withEventRecording } from './event-recording.ts';
import type { EventsRuntime } from './events-runtime.ts';

/**
 * The per-principal event log and which of its entries were handed to webhook delivery, so a
 * redelivered write hands on one it appended but did not enqueue. A shared log (a deployment's
 * `DynamoDbEventLog`) comes with its shared marks (`DynamoDbEventHandover`): without them the
 * second fan-out would be skipped, so the type requires both. The log @default in memory for
 * the local server, which is one process, with its marks in memory; elsewhere none, and
 * without a log events are off.
 */
export type EventsLogOptions =
  | { log?: undefined; handover?: undefined }
  | { log: InMemoryEventLog; handover?: EventHandover }
  | { log: EventLog; handover: EventHandover };

/** The Events extension's parts and settings; every one has a default. */
export type EventsAppOptions = EventsAppParts & EventsLogOptions;

/** The parts beside the log. */
export interface EventsAppParts extends EventsSettingsInput {
  /** Webhook subscriptions. @default in memory (one process); a deployment passes `DynamoDbWebhookSubscriptions`. */
  subscriptions?: WebhookSubscriptionStore;
  /**
   * Where delivery jobs go. @default, locally, an in-process queue on timers; elsewhere none, and
   * without a queue webhook delivery is not offered (a deployment passes its SQS queue).
   */
  queue?: WebhookDeliveryQueue;
  /** The callback sender. @default the SSRF-guarded sender in `callbackMode` */
  send?: WebhookSender;
  /** `local`: loopback callbacks only (npm start); `aws`: public https only. @default local for the local server, else aws */
  callbackMode?: CallbackMode;
}

export interface AppEvents {
  readonly settings: EventsSettings;
  /** The store every writer uses, appending occurrences (and fanning them out to webhooks). */
  recordingStore(store: RecordStore): RecordStore;
  /** What the MCP edge serves `events/*` from; `store` holds the push streams' leases. */
  runtime(store: RecordStore, wake?: StatusSignal): EventsRuntime;
  /** One try of one delivery job, for an in-process transport (the local queue, the soak bench). */
  readonly deliverWebhookJob?: DeliverWebhookJob;
  /** The in-process queue, when this app runs one (the local stack). */
  readonly localQueue?: LocalWebhookDeliveryQueue;
}

/**
 * The Events parts only a single process runs (in-process-events.ts), the defaults of
 * createAsyncMcpApp. The deployed MCP function passes none: its parts are all given.
 */
export interface InProcessEvents {
  /** A log in memory: the local server's, when it is given none. */
  memoryLog(): InMemoryEventLog;
  /** Marks in memory for `log` when it is a log in memory; none for a shared log, which brings its own. */
  memoryHandover(log: EventLog): EventHandover | undefined;
  /** Webhook subscriptions in memory, when none are given. */
  subscriptions(): WebhookSubscriptionStore;
  /** The in-process queue, running each job `deliver` gives it on timers. */
  queue(deliver: () => DeliverWebhookJob, logger: Logger): LocalWebhookDeliveryQueue;
  /** One try of one job over `subscriptions`, which only an in-process transport runs here (the delivery function has its own). */
  deliverJob(subscriptions: WebhookSubscriptions): DeliverWebhookJob;
}

export function createAppEvents(
  options: EventsAppOptions,
  context: { logger: Logger; secretKey: ServerKey; local: boolean; inProcess?: InProcessEvents },
): AppEvents {
  const { log: givenLog, handover: givenHandover, subscriptions: givenStore, queue: givenQueue, send, callbackMode, ...input } = options;
  const { logger, inProcess } = context;
  // A log in memory serves one process only: elsewhere, without a shared log, events stay off rather than half-work.
  const log = givenLog ?? (context.local ? inProcess?.memoryLog() : undefined);
  const handover = log && (givenHandover ?? inProcess?.memoryHandover(log));
  // Untyped config can still pair a shared log with no marks: refuse to start rather than skip the second fan-out.
  if (log && !handover) throw new Error('events: a shared event log needs its handover marks (`handover`) beside it');
  const settings = resolveEventsSettings(input);
  if (!log || !handover) return disabledEvents({ ...settings, enabled: false });
  const mode: CallbackMode = callbackMode ?? (context.local ? 'local' : 'aws');
  let deliver: DeliverWebhookJob | undefined;
  const localQueue = !givenQueue && context.local ? inProcess?.queue(() => deliverOrThrow(deliver), logger) : undefined;
  const queue = givenQueue ?? localQueue;
  const store = givenStore ?? (queue ? inProcess?.subscriptions() : undefined);
  const subscriptions =
    queue && store
      ? new WebhookSubscriptions({
          store,
          log,
          send: send ?? createWebhookSender({ mode }),
          queue,
          settings,
          secretKey: context.secretKey,
          clock: systemClock,
          logger,
          operationEnded: eventsWireError(operationEndedError()),
        })
      : undefined;
  if (subscriptions) deliver = inProcess?.deliverJob(subscriptions);
  const fanOut = subscriptions && new WebhookFanOut(subscriptions.deps);
  const onAppended = fanOut ? (entry: EventEntry) => fanOut.fanOut(entry) : undefined;
  return {
    settings,
    recordingStore: (base) => withEventRecording(base, { log, settings, logger, handover, ...(onAppended ? { onAppended } : {}) }),
    runtime: (leaseStore, wake) => ({
      settings,
      log,
      ...(subscriptions ? { webhooks: { subscriptions, callbackMode: mode } } : {}),
      streams: new ListenLeases(leaseStore, settings.maxStreamsPerPrincipal, logger),
      ...(wake ? { wake } : {}),
      now: Date.now,
    }),
    ...(deliver ? { deliverWebhookJob: deliver } : {}),
    ...(localQueue ? { localQueue } : {}),
  };
}

/** The log of events turned off: the edge answers `events/*` with -32601 and never reads it, and nothing appends. */
const NO_EVENT_LOG: EventLog = {
  append: () => Promise.reject(new Error('events are off: nothing is appended')),
  read: async (_ownerId, _stream, range) => ({ entries: [], reached: range.after, more: false }),
  get: async () => undefined,
};

/** Events turned off: the store is left as it is, and the edge answers `events/*` with -32601. */
function disabledEvents(settings: EventsSettings): AppEvents {
  return {
    settings,
    recordingStore: (base) => base,
    runtime: (leaseStore) => ({
      settings,
      log: NO_EVENT_LOG,
      streams: new ListenLeases(leaseStore, settings.maxStreamsPerPrincipal, { error: () => undefined, warn: () => undefined }),
      now: Date.now,
    }),
  };
}

function deliverOrThrow(deliver: DeliverWebhookJob | undefined): DeliverWebhookJob {
  if (!deliver) throw new Error('webhook delivery is not ready yet');
  return deliver;
}
