/**
 * The `Operation Status Changed` event: its detail (no argument, no result; the owner id is
 * keyed, see operation-events-owner.test.ts), status sync emitting it after the write and best-effort, the
 * PutEvents endpoint the local stack runs, and the Standard Webhooks signature.
 */
import { readFileSync } from 'node:fs';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { operationEventDetail } from '../../lambdas/aws/operation-events.ts';
import { createOperationEventsPublisher } from '../../lambdas/aws/operation-events-publisher.ts';
import { operationPk } from '../../lambdas/aws/operation-item.ts';
import { createStatusSyncHandler, type ExecutionStatusChangeEvent } from '../../lambdas/aws/status-sync.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { createOperations, DEFAULT_LIMITS, type OperationsService } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { METRIC, type MetricsRecorder } from '../../lambdas/observability/metrics-recorder.ts';
import { startPutEventsEndpoint, type EventBridgeEvent, type PutEventsEndpoint } from '../../local/events/put-events-endpoint.ts';
import { checkWebhookSecret, generateWebhookSecret, parseLoopbackWebhookUrl, signWebhook } from '../../local/events/webhook-delivery.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const schema = JSON.parse(readFileSync(new URL('../../schemas/operation-status-changed.schema.json', import.meta.url), 'utf8')) as object;
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
ajv.addFormat('date-time', { type: 'string', validate: (value: string) => !Number.isNaN(Date.parse(value)) && /T.*Z$/.test(value) });
const validateEvent = ajv.compile(schema);

const tool = testTool({
  name: 'job',
  timing: { keepAliveSeconds: 60, maxKeepAliveSeconds: 600, pollIntervalSeconds: 5, syncTimeoutSeconds: 5, maxRunSeconds: 3600 },
});
const PRINCIPAL = 'iam-role:arn:aws:iam::123456789012:role/analyst';
const SECRET_ARGUMENT = 'argument-that-must-not-leave';
const SECRET_OUTPUT = 'output-that-must-not-leave';
const serverKey = async () => new Uint8Array(32).fill(7);

function statusEvent(record: OperationRecord, input: unknown, detail: Partial<ExecutionStatusChangeEvent['detail']>): ExecutionStatusChangeEvent {
  return {
    id: 'evt',
    detail: {
      executionArn: record.executionArn!,
      status: 'RUNNING',
      startDate: Date.now(),
      input: JSON.stringify(input),
      inputDetails: { included: true },
      ...detail,
    },
  };
}

describe('the event detail', () => {
  it('carries neither arguments nor result, and leaves the owner to the publisher (the record has only the unkeyed hash)', () => {
    const ownerId = ownerIdFor(PRINCIPAL);
    const record: OperationRecord = {
      ownerId,
      token: 'task-1',
      tool: 'job',
      argumentsHash: 'h',
      dialect: 'tasks-2026-07-28',
      status: 'completed',
      statusMessage: 'The operation completed',
      executionName: 'x',
      createdAt: Date.UTC(2026, 0, 1),
      updatedAt: Date.UTC(2026, 0, 1, 0, 1),
      completedAt: Date.UTC(2026, 0, 1, 0, 1),
      keepAliveSeconds: 60,
      pollIntervalSeconds: 5,
      outcome: { kind: 'call-tool-result', result: { content: [{ type: 'text', text: SECRET_OUTPUT }] } },
    };
    const detail = operationEventDetail(record);
    expect(detail).toEqual({
      tool: 'job',
      operationId: 'task-1',
      dialect: 'tasks-2026-07-28',
      status: 'completed',
      statusMessage: 'The operation completed',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:01:00.000Z',
      completedAt: '2026-01-01T00:01:00.000Z',
      isError: false,
      resultBytes: Buffer.byteLength(JSON.stringify(record.outcome?.kind === 'call-tool-result' && record.outcome.result)),
    });
    // Neither the principal nor the owner id of the record's partition key.
    expect(operationPk(record)).toBe(`OP#${ownerId}#task-1`);
    expect(JSON.stringify(detail)).not.toContain(ownerId);
    expect(JSON.stringify(detail)).not.toContain(PRINCIPAL);
    expect(JSON.stringify(detail)).not.toContain(SECRET_OUTPUT);
  });

  it('says isError for a tool error result and a failure, with no size where there is no result', () => {
    const base = {
      ownerId: 'o',
      token: 't',
      tool: 'job',
      argumentsHash: 'h',
      dialect: 'sep-1391',
      executionName: 'x',
      createdAt: 0,
      updatedAt: 1,
      completedAt: 1,
      keepAliveSeconds: 60,
      pollIntervalSeconds: 5,
    } as const;
    expect(operationEventDetail({ ...base, status: 'completed', outcome: { kind: 'call-tool-result', result: { content: [], isError: true } } }).isError).toBe(
      true,
    );
    const failed = operationEventDetail({ ...base, status: 'failed', outcome: { kind: 'tool-error', error: 'Boom' } });
    expect(failed).toMatchObject({ isError: true });
    expect(failed).not.toHaveProperty('resultBytes');
    const canceled = operationEventDetail({ ...base, status: 'canceled' });
    expect(canceled).toMatchObject({ isError: false });
    expect(canceled).not.toHaveProperty('resultBytes');
    const working = operationEventDetail({ ...base, status: 'working', completedAt: undefined });
    expect(working).not.toHaveProperty('isError');
    expect(working).not.toHaveProperty('completedAt');
  });
});

describe('status sync emits through the local PutEvents endpoint', () => {
  let endpoint: PutEventsEndpoint;
  let client: EventBridgeClient;
  const delivered: EventBridgeEvent[] = [];
  let store: InMemoryRecordStore;
  let engine: FakeWorkflowEngine;
  let operations: OperationsService;
  const errors: Array<Record<string, unknown>> = [];
  const counted: string[] = [];
  const metrics: MetricsRecorder = { count: (name) => void counted.push(name), milliseconds: () => undefined, flush: () => undefined };
  const logger = { error: (_m: string, fields: Record<string, unknown>) => void errors.push(fields), warn: () => undefined };

  beforeAll(async () => {
    endpoint = await startPutEventsEndpoint({ region: 'us-east-1', accountId: '000000000000', onEvent: (event) => void delivered.push(event) });
    client = new EventBridgeClient({ region: 'us-east-1', endpoint: endpoint.endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  });
  afterAll(async () => {
    client.destroy();
    await endpoint.close();
  });
  beforeEach(() => {
    delivered.length = 0;
    errors.length = 0;
    counted.length = 0;
    store = new InMemoryRecordStore();
    engine = new FakeWorkflowEngine();
    operations = createOperations({ store, engine, limits: DEFAULT_LIMITS, input: mcpInputProtocol });
  });

  async function started() {
    const record = await operations.start({
      ownerId: ownerIdFor(PRINCIPAL),
      tool,
      arguments: { secret: SECRET_ARGUMENT },
      token: 'tok-1',
      dialect: 'sep-1391',
    });
    return { record, input: engine.executions.get(record.executionArn!)!.input };
  }

  it('working, then completed: events that fit the schema, after each write, without arguments or output', async () => {
    const sync = createStatusSyncHandler(
      operations,
      engine,
      logger,
      metrics,
      createOperationEventsPublisher({ client, eventBusName: 'default', serverKey, logger, metrics }),
    );
    const { record, input } = await started();
    await sync(statusEvent(record, input, { status: 'RUNNING' }));
    await sync(statusEvent(record, input, { status: 'SUCCEEDED', output: JSON.stringify({ echo: SECRET_OUTPUT }), stopDate: Date.now() }));
    expect(delivered.map((event) => (event.detail as { status: string }).status)).toEqual(['working', 'completed']);
    for (const event of delivered) {
      expect(validateEvent(event), ajv.errorsText(validateEvent.errors)).toBe(true);
      // The machine, not the execution: its name derives from the unkeyed owner id.
      expect(event.resources).toEqual([tool.stateMachineArn]);
      expect(JSON.stringify(event)).not.toContain(SECRET_ARGUMENT);
      expect(JSON.stringify(event)).not.toContain(SECRET_OUTPUT);
    }
    expect(delivered[1]!.detail).toMatchObject({ operationId: 'tok-1', dialect: 'sep-1391', isError: false, resultBytes: expect.any(Number) });
    expect(errors).toEqual([]);
  });

  it('a RUNNING event delivered after the end reports nothing; a redelivered end reports the end again', async () => {
    const sync = createStatusSyncHandler(
      operations,
      engine,
      logger,
      metrics,
      createOperationEventsPublisher({ client, eventBusName: 'default', serverKey, logger }),
    );
    const { record, input } = await started();
    const end = statusEvent(record, input, { status: 'FAILED', error: 'Boom', stopDate: Date.now() });
    await sync(end);
    await sync(statusEvent(record, input, { status: 'RUNNING' }));
    await sync(end);
    expect(delivered.map((event) => (event.detail as { status: string }).status)).toEqual(['failed', 'failed']);
  });

  it('an entry EventBridge refuses (FailedEntryCount) is retried a bounded number of times, then logged and counted; the status is written', async () => {
    const sync = createStatusSyncHandler(
      operations,
      engine,
      logger,
      metrics,
      createOperationEventsPublisher({ client, eventBusName: 'no-such-bus', serverKey, logger, metrics, maxAttempts: 3, backoffMs: 1 }),
    );
    const { record, input } = await started();
    await sync(statusEvent(record, input, { status: 'SUCCEEDED', output: '{}', stopDate: Date.now() }));
    expect((await store.get(record))?.status).toBe('completed');
    expect(delivered).toEqual([]);
    expect(errors).toEqual([expect.objectContaining({ attempts: 3, error: expect.stringContaining('ResourceNotFoundException'), status: 'completed' })]);
    expect(counted).toEqual([METRIC.operationEventsFailed]);
  });

  it('a PutEvents call that throws every time never fails the status write', async () => {
    let calls = 0;
    const send = async () => {
      calls += 1;
      throw new Error('connect ECONNREFUSED');
    };
    const failing = { send } as unknown as EventBridgeClient;
    const sync = createStatusSyncHandler(
      operations,
      engine,
      logger,
      metrics,
      createOperationEventsPublisher({ client: failing, eventBusName: 'default', serverKey, logger, metrics, backoffMs: 1 }),
    );
    const { record, input } = await started();
    await expect(sync(statusEvent(record, input, { status: 'SUCCEEDED', output: '{}', stopDate: Date.now() }))).resolves.toBeUndefined();
    expect((await store.get(record))?.status).toBe('completed');
    expect(calls).toBe(3);
    expect(counted).toEqual([METRIC.operationEventsFailed]);
  });

  it('the endpoint answers entry errors as EventBridge does: a malformed Detail, a missing Source', async () => {
    const out = await client.send(
      new PutEventsCommand({
        Entries: [
          { Source: 'a', DetailType: 'b', Detail: '{not json' },
          { DetailType: 'b', Detail: '{}' },
          { Source: 'a', DetailType: 'b', Detail: '{}', EventBusName: 'arn:aws:events:us-east-1:000000000000:event-bus/default' },
        ],
      }),
    );
    expect(out.FailedEntryCount).toBe(2);
    expect(out.Entries?.map((entry) => entry.ErrorCode ?? 'ok')).toEqual(['MalformedDetail', 'InvalidArgument', 'ok']);
  });
});

describe('the local webhook', () => {
  it('takes loopback URLs only, and says why another is refused', () => {
    for (const ok of ['http://127.0.0.1:8080/hook', 'http://[::1]:9000/', 'https://localhost/x'])
      expect(parseLoopbackWebhookUrl(ok).href).toBe(new URL(ok).href);
    expect(() => parseLoopbackWebhookUrl('https://hooks.example.com/x')).toThrow(/hooks\.example\.com is not a loopback host/);
    expect(() => parseLoopbackWebhookUrl('http://127.0.0.2/x')).toThrow(/not a loopback host/);
    expect(() => parseLoopbackWebhookUrl('http://10.0.0.1/x')).toThrow(/not a loopback host/);
    expect(() => parseLoopbackWebhookUrl('file:///etc/passwd')).toThrow(/not http or https/);
    expect(() => parseLoopbackWebhookUrl('127.0.0.1:8080')).toThrow(/not a URL|not http/);
  });

  it('signs as Standard Webhooks specifies: the standardwebhooks package verifies it', () => {
    const secret = generateWebhookSecret();
    expect(checkWebhookSecret(secret, 'test')).toBe(secret);
    const body = JSON.stringify({ detail: { status: 'completed' } });
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signWebhook(secret, 'msg_1', timestamp, body);
    expect(new Webhook(secret).verify(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature })).toEqual(
      JSON.parse(body),
    );
    expect(signature).toBe(new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body));
    expect(() => checkWebhookSecret('whsec_short', '--events-webhook-secret')).toThrow(/--events-webhook-secret: expected whsec_/);
  });
});
