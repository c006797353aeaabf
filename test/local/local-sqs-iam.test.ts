/**
 * The local SQS behind the IAM gateway, driven by the real SQSClient: a role granted
 * sqs:SendMessage on the delivery queue may send there (batches too, authorized as SendMessage)
 * and nowhere else, and may not receive; the consumer role may receive, change visibility and
 * delete; a denial is AWS's AccessDeniedException naming the action and the queue.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { startLocalSqs } from '../../local/sqs/local-sqs.ts';
import { ACCOUNT, REGION, role, useGatewayHarness } from './iam/gateway-harness.ts';

const QUEUE_ARN = `arn:aws:sqs:${REGION}:${ACCOUNT}:deliveries`;
const SENDER = role('AsyncMcp-ServerStatusSyncRole-0A1B2C', [{ Action: 'sqs:SendMessage', Effect: 'Allow', Resource: QUEUE_ARN }]);
const CONSUMER = role('AsyncMcp-ServerEventsDeliveryRole-0A1B2C', [
  {
    Action: ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
    Effect: 'Allow',
    Resource: QUEUE_ARN,
  },
]);

describe('SQS through the IAM gateway', () => {
  const harness = useGatewayHarness();

  async function setUp() {
    const sqs = harness.closeLater(await startLocalSqs({ region: REGION, accountId: ACCOUNT, queues: [{ name: 'deliveries' }, { name: 'other' }] }));
    const authority = harness.authority([SENDER, CONSUMER]);
    const gateway = await harness.gateway({ service: 'sqs', upstream: sqs.endpoint, authority });
    const clientFor = (roleArn: string) => {
      const client = new SQSClient({ region: REGION, endpoint: gateway.endpoint, credentials: authority.credentialsFor(roleArn, 'test') });
      harness.closeLater({ close: () => client.destroy() });
      return client;
    };
    // The URL the template gives the functions: AWS's host, this account and the queue's name.
    return {
      sqs,
      clientFor,
      url: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/deliveries`,
      otherUrl: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/other`,
    };
  }

  it('the sender sends, one message or a batch, to its queue alone', async () => {
    const { sqs, clientFor, url, otherUrl } = await setUp();
    const sender = clientFor(SENDER.arn);
    await sender.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'one' }));
    await sender.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'a', MessageBody: 'two' },
          { Id: 'b', MessageBody: 'three' },
        ],
      }),
    );
    expect(sqs.queues.get('deliveries')?.counts().visible).toBe(3);
    await expect(sender.send(new SendMessageCommand({ QueueUrl: otherUrl, MessageBody: 'x' }))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining(`sqs:SendMessage on resource: arn:aws:sqs:${REGION}:${ACCOUNT}:other`),
    });
    await expect(sender.send(new ReceiveMessageCommand({ QueueUrl: url }))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining('sqs:ReceiveMessage'),
    });
    expect(sqs.queues.get('other')?.counts().visible).toBe(0);
  });

  it('the consumer receives, postpones and deletes, and may not send', async () => {
    const { sqs, clientFor, url } = await setUp();
    await clientFor(SENDER.arn).send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'job' }));
    const consumer = clientFor(CONSUMER.arn);
    const [message] = (await consumer.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }))).Messages ?? [];
    expect(message?.Body).toBe('job');
    await consumer.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: message?.ReceiptHandle, VisibilityTimeout: 30 }));
    await consumer.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message?.ReceiptHandle }));
    expect(sqs.queues.get('deliveries')?.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    await expect(consumer.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x' }))).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });
});
