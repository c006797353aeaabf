/**
 * An operation's end reaches the event log and the webhook delivery queue however its first try
 * fails (issue 37, "A failed append or enqueue is never retried"): status sync over the DynamoDB
 * event log and handover marks on dynalite, faults injected by SDK middleware. A failed append
 * or enqueue fails the invocation, so EventBridge delivers the status event again; the
 * redelivery finds the record already ended and settles its events: the append is idempotent
 * by eventId, and an entry not yet handed over is fanned out again.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoDbEventHandover } from '../../lambdas/aws/dynamodb-event-handover.ts';
import { DynamoDbEventLog } from '../../lambdas/aws/dynamodb-event-log.ts';
import { SQS_CLIENT_CONFIG, SqsWebhookDeliveryQueue } from '../../lambdas/aws/sqs-webhook-delivery-queue.ts';
import { createStatusSyncHandler, type ExecutionStatusChangeEvent } from '../../lambdas/aws/status-sync.ts';
import { settleEventsOf } from '../../lambdas/events/event-recorder.ts';
import { InMemoryWebhookSubscriptions } from '../../lambdas/events/in-memory-webhook-subscriptions.ts';
import type { WebhookDeliveryJob, WebhookDeliveryQueue } from '../../lambdas/events/webhook-delivery-job.ts';
import { parseDeliveryMessage } from '../../lambdas/events/webhooks/delivery-message.ts';
import { createAppEvents } from '../../lambdas/mcp/events/app-events.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { createOperations, DEFAULT_LIMITS } from '../../lambdas/operations/operations-service.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { startLocalSqs, type LocalSqs } from '../../local/sqs/local-sqs.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool = testTool({ name: 'job' });
const OWNER = 'owner-a';

let dynamo: LocalDynamo;
let sqs: LocalSqs;
let tables = 0;
const closers: Array<() => void> = [];

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  sqs = await startLocalSqs({ region: 'us-east-1', accountId: '000000000000', queues: [{ name: 'deliveries' }] });
});
afterAll(async () => {
  for (const close of closers) close();
  await sqs?.close();
  await dynamo?.close();
});

/** What the next calls of a kind do: fail (as a throttle, or as SQS's error), or hang until released. */
interface Faults {
  eventPuts: Array<'throttle' | 'hang'>;
  batches: number;
}

/** A call that hangs past the test: a Lambda timed out on it, and its container is gone. */
const hung: Array<(error: Error) => void> = [];

function faultyDynamo(faults: Faults): DynamoDBClient {
  const client = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: dynamo.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Item?: Record<string, { S?: string }> };
      if (context.commandName === 'PutItemCommand' && input.Item?.pk?.S?.startsWith('EVT#')) {
        const fault = faults.eventPuts.shift();
        if (fault === 'throttle')
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ProvisionedThroughputExceededException' });
        if (fault === 'hang') await new Promise((_resolve, reject) => hung.push(reject));
      }
      return next(args);
    },
    { step: 'initialize', name: 'injectEventPutFaults' },
  );
  closers.push(() => client.destroy());
  return client;
}

function faultySqs(faults: Faults): SQSClient {
  const client = new SQSClient({
    ...SQS_CLIENT_CONFIG,
    region: 'us-east-1',
    endpoint: sqs.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'SendMessageBatchCommand' && faults.batches > 0) {
        faults.batches--;
        throw Object.assign(new Error('Service is unavailable.'), { name: 'ServiceUnavailable' });
      }
      return next(args);
    },
    { step: 'initialize', name: 'injectBatchFaults' },
  );
  closers.push(() => client.destroy());
  return client;
}

/**
 * One operation whose end status sync handles, with a webhook subscribed to its end. The record
 * and the subscription outlive a container, as their tables do; `container()` is one Lambda
 * container of status sync, with its own clients and recording store.
 */
async function scenario(options: { queue?: 'sqs' } = {}) {
  const tableName = `redelivery-${++tables}`;
  await createOperationsTable(dynamo.client, tableName);
  const records = new InMemoryRecordStore();
  const subscriptions = new InMemoryWebhookSubscriptions();
  await subscriptions.save(
    {
      ownerId: OWNER,
      id: 'sub_1',
      name: 'operation.finished',
      arguments: {},
      url: 'http://127.0.0.1:9/hook',
      secrets: [],
      createdAt: Date.now(),
      refreshedAt: Date.now(),
      refreshBefore: null,
      startPosition: '0',
      active: true,
      health: { windowStart: Date.now(), attempts: 0, failures: 0 },
      version: 1,
    },
    undefined,
  );
  // Its slot, as a subscribe claims one: the fan-out lists only an owner holding a live slot.
  await subscriptions.saveSlots(OWNER, { held: { sub_1: null }, version: 1 }, 0);
  const engine = new FakeWorkflowEngine();
  const faults: Faults = { eventPuts: [], batches: 0 };
  const jobs: WebhookDeliveryJob[] = [];
  const queueUrl = sqs.queueUrl('deliveries');
  const logger = { error: vi.fn(), warn: vi.fn() };
  const container = () => {
    const table = { client: faultyDynamo(faults), tableName };
    const queue: WebhookDeliveryQueue =
      options.queue === 'sqs' ? new SqsWebhookDeliveryQueue({ client: faultySqs(faults), queueUrl }) : { enqueue: async (added) => void jobs.push(...added) };
    const events = createAppEvents(
      { log: new DynamoDbEventLog(table), handover: new DynamoDbEventHandover(table), subscriptions, queue, callbackMode: 'local' },
      { logger, secretKey: async () => new Uint8Array(32).fill(7), local: false },
    );
    const store = events.recordingStore(records);
    const operations = createOperations({ store, engine, limits: DEFAULT_LIMITS, input: mcpInputProtocol });
    return { operations, sync: createStatusSyncHandler(operations, engine, logger, undefined, undefined, (record) => settleEventsOf(store, record)) };
  };
  const first = container();
  const record = await first.operations.start({ ownerId: OWNER, tool, arguments: { n: 1 }, token: `t-${tables}`, dialect: 'tasks-2026-07-28' });
  const execution = engine.executions.get(record.executionArn ?? '');
  const ended: ExecutionStatusChangeEvent = {
    id: 'evt-1',
    'detail-type': 'Step Functions Execution Status Change',
    source: 'aws.states',
    detail: {
      executionArn: record.executionArn ?? '',
      status: 'SUCCEEDED',
      startDate: Date.now(),
      stopDate: Date.now(),
      input: JSON.stringify(execution?.input),
      inputDetails: { included: true },
      output: '{"sum":3}',
      outputDetails: { included: true },
    },
  };
  const log = new DynamoDbEventLog({ client: dynamo.client, tableName });
  const finishedEntries = async () => (await log.read(OWNER, 'operation.finished', { after: '0', through: '9', limit: 10 })).entries;
  /** The jobs on the SQS queue, each received once. */
  const queued = async () => {
    const reader = new SQSClient({
      ...SQS_CLIENT_CONFIG,
      region: 'us-east-1',
      endpoint: sqs.endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    closers.push(() => reader.destroy());
    const out = await reader.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    return (out.Messages ?? []).map((m) => parseDeliveryMessage(m.Body ?? '', 1));
  };
  return { first, container, faults, jobs, ended, records, record, finishedEntries, queued };
}

describe('an operation end whose first try fails is recorded and handed over on redelivery', () => {
  it('two throttled PutItems of the end fail the invocation, and the redelivery appends the end and enqueues its job', async () => {
    const { first, faults, jobs, ended, finishedEntries } = await scenario();
    faults.eventPuts.push('throttle', 'throttle');
    await expect(first.sync(ended)).rejects.toThrow();
    expect(await finishedEntries()).toEqual([]);
    await first.sync(ended);
    const entries = await finishedEntries();
    expect(entries).toHaveLength(1);
    expect(jobs).toEqual([{ subscriptionId: 'sub_1', ownerKey: OWNER, eventId: entries[0]?.eventId, attempt: 1 }]);
  });

  it('one failed SendMessageBatch fails the invocation, and the redelivery enqueues the end it had appended', async () => {
    const { first, faults, ended, finishedEntries, queued } = await scenario({ queue: 'sqs' });
    faults.batches = 1;
    await expect(first.sync(ended)).rejects.toThrow();
    const entries = await finishedEntries();
    expect(entries).toHaveLength(1);
    expect(await queued()).toEqual([]);
    await first.sync(ended);
    expect(await finishedEntries()).toEqual(entries);
    expect(await queued()).toEqual([{ subscriptionId: 'sub_1', ownerKey: OWNER, eventId: entries[0]?.eventId, attempt: 1 }]);
  });

  it('a timeout between the record write and the append, then the redelivery in a new container, appends the end and enqueues its job', async () => {
    const { first, container, faults, jobs, ended, records, record, finishedEntries } = await scenario();
    faults.eventPuts.push('hang');
    const timedOut = first.sync(ended).catch(() => undefined);
    await expect.poll(async () => (await records.get(record))?.status).toBe('completed');
    await container().sync(ended);
    const entries = await finishedEntries();
    expect(entries).toHaveLength(1);
    expect(jobs).toEqual([{ subscriptionId: 'sub_1', ownerKey: OWNER, eventId: entries[0]?.eventId, attempt: 1 }]);
    for (const release of hung.splice(0)) release(new Error('the container was stopped'));
    await timedOut;
  });

  it('a redelivered end already handed over enqueues nothing more', async () => {
    const { first, container, jobs, ended } = await scenario();
    await first.sync(ended);
    await container().sync(ended);
    expect(jobs).toHaveLength(1);
  });
});
