/**
 * The notice in the operation's trace (issue 51): an occurrence appended is a span of the
 * operation's trace and keeps its context, the delivery job carries it through the queue's
 * message, each webhook POST is a span under it and sends it as the W3C `traceparent` header,
 * the occurrence's `_meta` carries it, and the EventBridge event names it. Over in-memory ports,
 * the real sender posting to a receiver on 127.0.0.1, the local PutEvents endpoint, and
 * OpenTelemetry's SDK with an in-memory exporter.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { readFileSync } from 'node:fs';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createOperationEventsPublisher } from '../../lambdas/aws/operation-events-publisher.ts';
import { EventRecorder } from '../../lambdas/events/event-recorder.ts';
import type { EventEntry } from '../../lambdas/events/event-log.ts';
import { WebhookFanOut } from '../../lambdas/events/webhook-fan-out.ts';
import { deliveryMessageOf, parseDeliveryMessage } from '../../lambdas/events/webhooks/delivery-message.ts';
import { hashForLog } from '../../lambdas/observability/request-context.ts';
import { traceIdOf } from '../../lambdas/observability/trace-context.ts';
import { markTracingOn } from '../../lambdas/observability/tracing.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { startPutEventsEndpoint, type EventBridgeEvent, type PutEventsEndpoint } from '../../local/events/put-events-endpoint.ts';
import { answerVerifications, subscribeRequest, T0, webhookSetUp } from '../support/webhook-harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const START_SPAN = '00f067aa0ba902b7';
/** The operation's start span, as its record keeps it. */
const OPERATION_TRACE = { traceparent: `00-${TRACE_ID}-${START_SPAN}-01`, tracestate: 'vendor=opaque' };
const SECRET_DATA = 'result-value-that-must-not-be-an-attribute';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  tracingOff();
});
beforeEach(() => {
  receiver.posts.length = 0;
  answerVerifications(receiver);
  exporter.reset();
});

function tracingOnInProcess(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  markTracingOn(true);
}

function tracingOff(): void {
  markTracingOn(false);
  trace.disable();
  propagation.disable();
  context.disable();
}

/** The finished spans, once the processor has exported them (it does so asynchronously). */
async function finishedSpans(): Promise<ReadableSpan[]> {
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

async function spanNamed(name: string): Promise<ReadableSpan> {
  await provider.forceFlush();
  const span = exporter.getFinishedSpans().find((s) => s.name === name);
  if (!span) throw new Error(`no span ${name} among ${exporter.getFinishedSpans().map((s) => s.name)}`);
  return span;
}

/** An occurrence of the operation's end, recorded as status sync records it, fanned out to the receiver's subscription. */
async function recordedEnd(setUp: ReturnType<typeof webhookSetUp>): Promise<EventEntry> {
  await setUp.subscriptions.subscribe(subscribeRequest(receiver));
  setUp.jobs.length = 0;
  const fanOut = new WebhookFanOut(setUp.subscriptions.deps);
  const recorder = new EventRecorder({
    log: setUp.log,
    retentionMs: 3_600_000,
    logger: setUp.logger,
    onAppended: (entry) => fanOut.fanOut(entry),
    now: () => T0,
  });
  await recorder.record('owner-a', [
    {
      name: 'operation.finished',
      eventId: 'evt_end',
      at: T0,
      operationId: 'op-1',
      tool: 'analyze_dataset',
      data: { status: 'completed', echo: SECRET_DATA },
      trace: OPERATION_TRACE,
    },
  ]);
  const entry = await setUp.log.get('owner-a', 'evt_end');
  if (!entry) throw new Error('the occurrence was not appended');
  return entry;
}

describe('with tracing on', () => {
  beforeAll(tracingOnInProcess);
  afterAll(tracingOff);

  it("the occurrence appended is a span of the operation's trace, the child of its start, and the log keeps that span's context", async () => {
    const entry = await recordedEnd(webhookSetUp());
    const append = await spanNamed('event operation.finished');
    expect(append.spanContext().traceId).toBe(TRACE_ID);
    expect(append.parentSpanContext?.spanId).toBe(START_SPAN);
    expect(entry.trace?.traceparent).toBe(`00-${TRACE_ID}-${append.spanContext().spanId}-01`);
    expect(entry.trace?.tracestate).toBe('vendor=opaque');
    expect(append.attributes).toMatchObject({ 'async_mcp.operation.hash': hashForLog('op-1'), 'async_mcp.event.name': 'operation.finished' });
  });

  it('the webhook POST is a CLIENT span under the occurrence and sends its own context as the traceparent header; the body’s _meta carries the occurrence’s', async () => {
    const setUp = webhookSetUp();
    const entry = await recordedEnd(setUp);
    const [job] = setUp.jobs;
    expect(job?.trace).toEqual(entry.trace);
    // Through the queue's message, as SQS carries it.
    const received = parseDeliveryMessage(deliveryMessageOf(job!), 1);
    expect(received?.trace).toEqual(entry.trace);
    expect(await setUp.deliver(received!)).toEqual({ kind: 'delivered' });

    const post = await spanNamed('webhook operation.finished');
    expect(post.kind).toBe(2); // SpanKind.CLIENT
    expect(post.spanContext().traceId).toBe(TRACE_ID);
    expect(post.parentSpanContext?.spanId).toBe((await spanNamed('event operation.finished')).spanContext().spanId);
    expect(post.attributes['http.response.status_code']).toBe(204);
    const [delivered] = receiver.posts.filter((p) => !p.body.includes('"verification"'));
    expect(delivered?.headers.get('traceparent')).toBe(`00-${TRACE_ID}-${post.spanContext().spanId}-01`);
    expect(delivered?.headers.get('tracestate')).toBe('vendor=opaque');
    const body = JSON.parse(delivered!.body) as { _meta?: Record<string, string> };
    expect(body._meta).toEqual(entry.trace);
  });

  it('no span carries the occurrence’s data, the operation’s id or the callback URL', async () => {
    const setUp = webhookSetUp();
    await recordedEnd(setUp);
    for (const job of setUp.jobs) await setUp.deliver(job);
    const values = (await finishedSpans()).flatMap((span) => Object.values(span.attributes).map(String));
    expect(values.length).toBeGreaterThan(0);
    expect(values.filter((value) => value.includes(SECRET_DATA) || value.includes(receiver.origin) || value === 'op-1')).toEqual([]);
  });

  describe('the EventBridge event', () => {
    let endpoint: PutEventsEndpoint;
    const events: EventBridgeEvent[] = [];
    beforeAll(async () => {
      endpoint = await startPutEventsEndpoint({ region: 'us-east-1', accountId: '000000000000', onEvent: (event) => void events.push(event) });
    });
    afterAll(async () => {
      await endpoint?.close();
    });

    it("names the span that published it, in the operation's trace", async () => {
      const client = new EventBridgeClient({ endpoint: endpoint.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
      const publish = createOperationEventsPublisher({
        client,
        eventBusName: 'default',
        serverKey: async () => new Uint8Array(32).fill(7),
        logger: { error: vi.fn(), warn: vi.fn() },
      });
      await publish(endedRecord());
      client.destroy();
      const span = await spanNamed('event Operation Status Changed');
      expect(span.spanContext().traceId).toBe(TRACE_ID);
      expect(span.parentSpanContext?.spanId).toBe(START_SPAN);
      await vi.waitFor(() => expect(events).toHaveLength(1));
      const schema = JSON.parse(readFileSync(new URL('../../schemas/operation-status-changed.schema.json', import.meta.url), 'utf8')) as object;
      const ajv = new Ajv2020({ strict: true, strictRequired: false });
      ajv.addFormat('date-time', { type: 'string', validate: (value: string) => !Number.isNaN(Date.parse(value)) });
      const validate = ajv.compile(schema);
      expect(validate(events[0]), ajv.errorsText(validate.errors)).toBe(true);
      expect(events[0]?.detail).toMatchObject({ traceparent: `00-${TRACE_ID}-${span.spanContext().spanId}-01`, tracestate: 'vendor=opaque' });
    });
  });
});

describe('with tracing off', () => {
  it('the stored context still travels: the occurrence, the job, the header and _meta carry the record’s own', async () => {
    const setUp = webhookSetUp();
    const entry = await recordedEnd(setUp);
    expect(entry.trace).toEqual(OPERATION_TRACE);
    for (const job of setUp.jobs) await setUp.deliver(job);
    const [delivered] = receiver.posts.filter((p) => !p.body.includes('"verification"'));
    expect(delivered?.headers.get('traceparent')).toBe(OPERATION_TRACE.traceparent);
    expect((JSON.parse(delivered!.body) as { _meta?: unknown })._meta).toEqual(OPERATION_TRACE);
    expect(await finishedSpans()).toEqual([]);
  });

  it('an operation without a trace sends no traceparent and no _meta', async () => {
    const setUp = webhookSetUp();
    await setUp.subscriptions.subscribe(subscribeRequest(receiver));
    setUp.jobs.length = 0;
    const fanOut = new WebhookFanOut(setUp.subscriptions.deps);
    const recorder = new EventRecorder({ log: setUp.log, retentionMs: 3_600_000, logger: setUp.logger, onAppended: (e) => fanOut.fanOut(e), now: () => T0 });
    await recorder.record('owner-a', [{ name: 'operation.finished', eventId: 'evt_plain', at: T0, operationId: 'op-2', tool: 'analyze_dataset', data: {} }]);
    for (const job of setUp.jobs) await setUp.deliver(job);
    const [delivered] = receiver.posts.filter((p) => !p.body.includes('"verification"'));
    expect(delivered?.headers.get('traceparent')).toBeNull();
    expect(JSON.parse(delivered!.body)).not.toHaveProperty('_meta');
    expect(traceIdOf(OPERATION_TRACE)).toBe(TRACE_ID);
  });
});

function endedRecord(): OperationRecord {
  return {
    ownerId: 'owner-hash',
    token: 'op-1',
    tool: 'analyze_dataset',
    dialect: 'tasks-2026-07-28',
    status: 'completed',
    createdAt: T0,
    updatedAt: T0 + 1000,
    completedAt: T0 + 1000,
    trace: OPERATION_TRACE,
  } as OperationRecord;
}
