/**
 * The local SQS, driven by the unmodified SQSClient (AWS JSON 1.0, MD5 checks on): sends and
 * batches, receives with the system attributes Lambda reads, visibility timeouts and their
 * changes, redrive to the dead-letter queue after maxReceiveCount, long polls, SQS's errors; and
 * the webhook delivery queue adapter on top of it.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { SQS_CLIENT_CONFIG, SqsWebhookDeliveryQueue } from '../../lambdas/aws/sqs-webhook-delivery-queue.ts';
import type { WebhookDeliveryJob } from '../../lambdas/events/webhook-delivery-job.ts';
import { parseDeliveryMessage } from '../../lambdas/events/webhooks/delivery-message.ts';
import { type LocalSqs, startLocalSqs } from '../../local/sqs/local-sqs.ts';

const scope = { region: 'us-east-1', accountId: '000000000000' };
const running: { sqs: LocalSqs; client: SQSClient }[] = [];
afterEach(async () => {
  for (const { sqs, client } of running.splice(0)) {
    client.destroy();
    await sqs.close();
  }
});

async function setUp() {
  const sqs = await startLocalSqs({
    ...scope,
    queues: [
      { name: 'deliveries', visibilityTimeoutSeconds: 60, redrive: { deadLetterQueueName: 'deliveries-dlq', maxReceiveCount: 2 } },
      { name: 'deliveries-dlq' },
    ],
  });
  const client = new SQSClient({ region: scope.region, endpoint: sqs.endpoint, credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } });
  running.push({ sqs, client });
  return { sqs, client, url: sqs.queueUrl('deliveries'), dlq: sqs.queueUrl('deliveries-dlq') };
}

const receiveAll = (client: SQSClient, QueueUrl: string, extra: { VisibilityTimeout?: number; WaitTimeSeconds?: number } = {}) =>
  client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'], ...extra }));

describe('local SQS', () => {
  it('sends, receives with the system attributes, and deletes', async () => {
    const { client, url } = await setUp();
    const sent = await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"hello":"wörld"}' }));
    expect(sent.MessageId).toBeDefined();
    const { Messages = [] } = await receiveAll(client, url);
    expect(Messages).toHaveLength(1);
    expect(Messages[0]).toMatchObject({
      MessageId: sent.MessageId,
      Body: '{"hello":"wörld"}',
      Attributes: { ApproximateReceiveCount: '1', SenderId: 'AKIDLOCAL' },
    });
    // In flight: nobody else receives it.
    expect((await receiveAll(client, url)).Messages).toBeUndefined();
    await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: Messages[0]?.ReceiptHandle }));
    const attributes = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
    expect(attributes.Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
      QueueArn: 'arn:aws:sqs:us-east-1:000000000000:deliveries',
    });
  });

  it('a visibility change brings a message back when it says, with its receive count up', async () => {
    const { client, url } = await setUp();
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'job' }));
    const first = (await receiveAll(client, url)).Messages?.[0];
    await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: first?.ReceiptHandle, VisibilityTimeout: 0 }));
    const again = (await receiveAll(client, url)).Messages?.[0];
    expect(again).toMatchObject({ MessageId: first?.MessageId, Attributes: { ApproximateReceiveCount: '2' } });
    expect(again?.ReceiptHandle).not.toBe(first?.ReceiptHandle);
    // The older receipt can no longer move it.
    await expect(
      client.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: first?.ReceiptHandle, VisibilityTimeout: 0 })),
    ).rejects.toMatchObject({
      name: 'MessageNotInflight',
    });
  });

  it('moves a message to the dead-letter queue once it was received maxReceiveCount times', async () => {
    const { client, url, dlq } = await setUp();
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'poison' }));
    for (const count of ['1', '2']) {
      const { Messages = [] } = await receiveAll(client, url, { VisibilityTimeout: 0 });
      expect(Messages[0]?.Attributes?.ApproximateReceiveCount).toBe(count);
    }
    expect((await receiveAll(client, url)).Messages).toBeUndefined();
    const dead = await receiveAll(client, dlq);
    expect(dead.Messages?.map((message) => message.Body)).toEqual(['poison']);
  });

  it('a long poll returns as soon as a message is sent', async () => {
    const { client, url } = await setUp();
    const polling = receiveAll(client, url, { WaitTimeSeconds: 20 });
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'wake' }));
    expect((await polling).Messages?.map((message) => message.Body)).toEqual(['wake']);
  });

  it('answers batches entry by entry, and refuses what SQS refuses', async () => {
    const { client, url } = await setUp();
    const sent = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'a', MessageBody: 'one' },
          { Id: 'b', MessageBody: 'two' },
        ],
      }),
    );
    expect(sent.Successful?.map((entry) => entry.Id)).toEqual(['a', 'b']);
    const { Messages = [] } = await receiveAll(client, url);
    const deleted = await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'ok', ReceiptHandle: Messages[0]?.ReceiptHandle },
          { Id: 'bad', ReceiptHandle: 'not-a-handle' },
        ],
      }),
    );
    expect(deleted.Successful?.map((entry) => entry.Id)).toEqual(['ok']);
    expect(deleted.Failed).toEqual([expect.objectContaining({ Id: 'bad', Code: 'ReceiptHandleIsInvalid', SenderFault: true })]);
    const eleven = Array.from({ length: 11 }, (_, index) => ({ Id: `m${index}`, MessageBody: 'x' }));
    await expect(client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: eleven }))).rejects.toMatchObject({ name: 'TooManyEntriesInBatchRequest' });
    await expect(
      client.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: [
            { Id: 'a', MessageBody: 'x' },
            { Id: 'a', MessageBody: 'y' },
          ],
        }),
      ),
    ).rejects.toMatchObject({
      name: 'BatchEntryIdsNotDistinct',
    });
    await expect(client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x'.repeat(256 * 1024 + 1) }))).rejects.toMatchObject({
      name: 'InvalidParameterValue',
    });
    await expect(client.send(new SendMessageCommand({ QueueUrl: `${url}-missing`, MessageBody: 'x' }))).rejects.toBeInstanceOf(QueueDoesNotExist);
    await expect(client.send(new GetQueueUrlCommand({ QueueName: 'nope' }))).rejects.toBeInstanceOf(QueueDoesNotExist);
    expect((await client.send(new GetQueueUrlCommand({ QueueName: 'deliveries' }))).QueueUrl).toBe(url);
  });

  it('takes a queue URL of any host, as the template names it', async () => {
    const { client } = await setUp();
    const templateUrl = 'https://sqs.us-east-1.amazonaws.com/000000000000/deliveries';
    await client.send(new SendMessageCommand({ QueueUrl: templateUrl, MessageBody: 'via template url' }));
    expect((await receiveAll(client, templateUrl)).Messages?.[0]?.Body).toBe('via template url');
  });
});

describe('the SQS webhook delivery queue', () => {
  it('enqueues jobs ten to a batch, each message carrying only the job, and postpones a received one', async () => {
    const { client, url, sqs } = await setUp();
    const queue = new SqsWebhookDeliveryQueue({ client, queueUrl: url });
    const jobs: WebhookDeliveryJob[] = Array.from({ length: 23 }, (_, index) => ({
      subscriptionId: `sub_${index}`,
      ownerKey: 'owner#alice',
      eventId: `evt_${index}`,
      attempt: 1,
    }));
    await queue.enqueue(jobs);
    expect(sqs.queues.get('deliveries')?.counts().visible).toBe(23);
    const received = [];
    for (;;) {
      const { Messages = [] } = await receiveAll(client, url);
      if (Messages.length === 0) break;
      received.push(...Messages);
    }
    expect(received.map((message) => parseDeliveryMessage(message.Body ?? '', Number(message.Attributes?.ApproximateReceiveCount)))).toEqual(jobs);
    const [first] = received;
    await queue.postpone(first?.ReceiptHandle ?? '', 0);
    expect((await receiveAll(client, url)).Messages?.[0]).toMatchObject({ MessageId: first?.MessageId, Attributes: { ApproximateReceiveCount: '2' } });
  });

  it('sends to the client endpoint (AWS_ENDPOINT_URL_SQS as deployed locally), never to the host the queue URL names', async () => {
    const { sqs } = await setUp();
    const saved = process.env.AWS_ENDPOINT_URL_SQS;
    process.env.AWS_ENDPOINT_URL_SQS = sqs.endpoint;
    const client = new SQSClient({ ...SQS_CLIENT_CONFIG, region: scope.region, credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } });
    try {
      // A loopback port nothing serves: were the URL's host followed, the send would fail.
      await new SqsWebhookDeliveryQueue({ client, queueUrl: 'http://127.0.0.1:9/000000000000/deliveries' }).enqueue([
        { subscriptionId: 's', ownerKey: 'o', eventId: 'e', attempt: 1 },
      ]);
    } finally {
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_SQS;
      else process.env.AWS_ENDPOINT_URL_SQS = saved;
      client.destroy();
    }
    expect(sqs.queues.get('deliveries')?.counts().visible).toBe(1);
  });
});
