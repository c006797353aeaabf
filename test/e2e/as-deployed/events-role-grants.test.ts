/**
 * The Events writes of three functions, each under its own role's policies from the synthesized
 * template (issue 37: "The grants that status sync, the MCP function and the delivery function
 * need, exactly, held by a test that runs their writes under the synthesized policies"). The
 * real adapters talk to dynalite and the local SQS through the IAM gateway with each role's
 * credentials, so a call its role does not allow is AWS's AccessDenied and fails the flow: the
 * MCP function subscribes (the GSI listing, the subscription's PutItem), status sync appends an
 * operation's end, lists the owner's subscriptions, enqueues and marks the entry handed over,
 * and the delivery function reads the subscription and the event and records how it went.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadDeployedStack } from '../../../local/assembly/build-deployed-stack.ts';
import type { DeployedStack } from '../../../local/assembly/deployed-stack.ts';
import { startLocalDynamo, type LocalDynamo } from '../../../local/dynamodb/dynamo-local.ts';
import { IamAuthority } from '../../../local/iam/iam-authority.ts';
import { startIamGateway, type IamGateway } from '../../../local/iam/iam-gateway.ts';
import { startLocalSqs, type LocalSqs } from '../../../local/sqs/local-sqs.ts';
import { DynamoDbEventHandover } from '../../../lambdas/aws/dynamodb-event-handover.ts';
import { DynamoDbEventLog } from '../../../lambdas/aws/dynamodb-event-log.ts';
import { DynamoDbWebhookSubscriptions } from '../../../lambdas/aws/dynamodb-webhook-subscriptions.ts';
import { ENV } from '../../../lambdas/handlers/environment.ts';
import { OPERATIONS_TABLE } from '../../../lambdas/aws/operations-table.ts';
import { SqsWebhookDeliveryQueue } from '../../../lambdas/aws/sqs-webhook-delivery-queue.ts';
import { parseDeliveryMessage } from '../../../lambdas/events/webhooks/delivery-message.ts';
import { generateWebhookSecret, parseWebhookSecret } from '../../../lambdas/events/webhooks/webhook-secret.ts';
import { createAppEvents } from '../../../lambdas/mcp/events/app-events.ts';
import { IN_PROCESS_EVENTS } from '../../../lambdas/mcp/events/in-process-events.ts';
import type { OperationRecord } from '../../../lambdas/operations/operation.ts';
import { deployedAssembly, NO_AUTH } from '../../support/deployed-assembly.ts';
import { InMemoryRecordStore } from '../../support/in-memory-record-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const SERVER_KEY = new Uint8Array(32).fill(7);
const logger = { error: vi.fn(), warn: vi.fn() };

let model: DeployedStack;
let dynamo: LocalDynamo;
let sqs: LocalSqs;
let authority: IamAuthority;
let gateways: { dynamodb: IamGateway; sqs: IamGateway };
let receiver: WebhookReceiver;
const clients: Array<{ destroy(): void }> = [];

beforeAll(async () => {
  model = loadDeployedStack(await deployedAssembly(NO_AUTH));
  const { table } = model;
  dynamo = await startLocalDynamo({
    tableName: table.name,
    schema: {
      KeySchema: table.keySchema,
      AttributeDefinitions: table.attributeDefinitions,
      GlobalSecondaryIndexes: table.globalSecondaryIndexes.map((i) => ({ IndexName: i.IndexName, KeySchema: i.KeySchema, Projection: i.Projection })),
    },
  });
  sqs = await startLocalSqs({ region: model.region, accountId: model.accountId, queues: model.queues.map((q) => ({ name: q.name })) });
  authority = new IamAuthority(model.roles, { logger: { warn: () => undefined } });
  const quiet = { warn: () => undefined, error: () => undefined };
  gateways = {
    dynamodb: await startIamGateway({
      service: 'dynamodb',
      upstream: dynamo.endpoint,
      authority,
      logger: quiet,
      resolve: { partitionKeyOf: () => OPERATIONS_TABLE.partitionKey },
    }),
    sqs: await startIamGateway({ service: 'sqs', upstream: sqs.endpoint, authority, logger: quiet }),
  };
  receiver = await startWebhookReceiver();
  receiver.handle = async (request) => {
    const body = (await request.json()) as { type?: string; challenge?: string };
    return body.type === 'verification' ? Response.json({ challenge: body.challenge }) : new Response(null, { status: 204 });
  };
}, 600_000);

afterAll(async () => {
  for (const client of clients) client.destroy();
  await gateways?.dynamodb.close();
  await gateways?.sqs.close();
  await sqs?.close();
  await dynamo?.close();
  await receiver?.close();
});

/** The function whose logical id matches `pattern`, and its role's AWS clients through the gateways. */
function functionAs(pattern: RegExp) {
  const fn = model.functions.find((f) => pattern.test(f.logicalId));
  if (!fn) throw new Error(`no function like ${pattern} in ${model.functions.map((f) => f.logicalId).join(', ')}`);
  const credentials = authority.credentialsFor(fn.roleArn, 'test');
  const region = model.region;
  const dynamoClient = new DynamoDBClient({ region, endpoint: gateways.dynamodb.endpoint, credentials, maxAttempts: 1 });
  const sqsClient = new SQSClient({ region, endpoint: gateways.sqs.endpoint, credentials, maxAttempts: 1, useQueueUrlAsEndpoint: false });
  clients.push(dynamoClient, sqsClient);
  const table = { client: dynamoClient, tableName: model.table.name };
  const queueUrl = deliveryQueue().url;
  const events = createAppEvents(
    {
      log: new DynamoDbEventLog(table),
      subscriptions: new DynamoDbWebhookSubscriptions(table),
      handover: new DynamoDbEventHandover(table),
      queue: new SqsWebhookDeliveryQueue({ client: sqsClient, queueUrl }),
      callbackMode: 'local',
      minSubscriptionTtlSeconds: 1,
    },
    // The in-process parts give the app its delivery job, run here under the delivery function's role.
    { logger, secretKey: async () => SERVER_KEY, local: false, inProcess: IN_PROCESS_EVENTS },
  );
  return { fn, events, sqsClient, queueUrl };
}

/** The queue status sync enqueues on, as its environment names it. */
function deliveryQueue() {
  const url = model.functions.map((f) => f.environment[ENV.eventsDeliveryQueueUrl]).find((u) => u !== undefined);
  const queue = model.queues.find((q) => q.url === url);
  if (!queue) throw new Error(`no delivery queue at ${url} in ${model.queues.map((q) => q.url).join(', ')}`);
  return queue;
}

function secret() {
  const parsed = parseWebhookSecret(generateWebhookSecret());
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.secret;
}

const T0 = Date.now();
const record: OperationRecord = {
  ownerId: 'owner-a',
  token: 'op-1',
  tool: 'analyze_dataset',
  argumentsHash: 'h',
  dialect: 'tasks-2026-07-28',
  status: 'working',
  executionName: 'exec-1',
  createdAt: T0,
  updatedAt: T0,
  keepAliveSeconds: 3600,
  pollIntervalSeconds: 2,
};

describe('the Events grants as synthesized', () => {
  it("status sync's role can carry an operation's end to its progress webhooks, and the delivery function's role can deliver it", async () => {
    const mcp = functionAs(/^Server.*Mcp.*Function|McpFunction|McpHandler/);
    const statusSync = functionAs(/StatusSync/);
    const delivery = functionAs(/EventsDelivery.*Function|DeliveryFunction/);
    const runtime = mcp.events.runtime(new InMemoryRecordStore());
    const subscriptions = runtime.webhooks?.subscriptions;
    if (!subscriptions) throw new Error('webhooks are not configured');
    const subscribe = (path: string, name: string, args: Record<string, unknown>) =>
      subscriptions.subscribe({ ownerId: 'owner-a', name, arguments: args, url: `${receiver.origin}${path}`, secret: secret(), cursor: null });
    const finished = await subscribe('/finished', 'operation.finished', {});
    const progress = await subscribe('/progress', 'operation.progress', { operationId: 'op-1' });

    // Status sync writes the end through its recording store: the append, the listing, the enqueue and the handover.
    const base = new InMemoryRecordStore();
    await base.create(record);
    const store = statusSync.events.recordingStore(base);
    const outcome = { kind: 'call-tool-result' as const, result: { content: [{ type: 'text', text: 'done' }] } };
    await store.transition(record, ['working'], { status: 'completed', outcome, completedAt: T0 + 5, updatedAt: T0 + 5 });

    // The delivery function runs each job it receives.
    const received = await delivery.sqsClient.send(new ReceiveMessageCommand({ QueueUrl: delivery.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    const jobs = (received.Messages ?? []).map((m) => parseDeliveryMessage(m.Body ?? '', 1));
    expect(jobs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ subscriptionId: finished.id, eventId: expect.any(String) }),
        expect.objectContaining({ subscriptionId: progress.id }),
      ]),
    );
    const deliver = delivery.events.deliverWebhookJob;
    if (!deliver) throw new Error('no delivery');
    for (const job of jobs) if (job) await deliver(job);
    for (const message of received.Messages ?? [])
      await delivery.sqsClient.send(new DeleteMessageCommand({ QueueUrl: delivery.queueUrl, ReceiptHandle: message.ReceiptHandle ?? '' }));

    const delivered = receiver.posts.find((p) => p.path === '/finished' && p.body.includes('operation.finished'));
    expect(JSON.parse(delivered?.body ?? '{}')).toMatchObject({ name: 'operation.finished', data: { operationId: 'op-1', status: 'completed' } });
    // The end job: the delivery function ends the progress subscription, sends terminated and deletes it.
    expect(receiver.posts.some((p) => p.path === '/progress' && p.body.includes('"terminated"'))).toBe(true);
    const denied = authority.decisions().filter((d) => !d.allowed);
    expect(denied.map((d) => `${d.roleArn} ${d.action} ${d.resource}`)).toEqual([]);
    expect(logger.error).not.toHaveBeenCalled();
  });
});
