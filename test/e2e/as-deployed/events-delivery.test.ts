/**
 * Webhook delivery as deployed (issue 29, "It runs as deployed"): the synthesized assembly's
 * delivery queue and its dead-letter queue run in the local SQS, and the event source mapping
 * polls the queue with the delivery function's own role, through the IAM gateway, and invokes
 * the bundled delivery function with Lambda's SQS event. A job the MCP function's role enqueues
 * (with its template environment's queue URL) is received, run and deleted.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../../lambdas/handlers/environment.ts';
import { OPERATIONS_TABLE } from '../../../lambdas/aws/operations-table.ts';
import { SQS_CLIENT_CONFIG, SqsWebhookDeliveryQueue } from '../../../lambdas/aws/sqs-webhook-delivery-queue.ts';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { noticeLog } from '../../support/notice-log.ts';

let stack: DeployedLocalStack;
let logs: string[];
/** The gateways' refusals, which the tests below provoke and assert. */
const notices = noticeLog();

beforeAll(async () => {
  ({ stack, logs } = await startAssemblyStack(await deployedAssembly(NO_AUTH), { notices }));
}, 600_000);

afterAll(async () => {
  await stack?.close();
});

function deployed() {
  const [mapping] = stack.model.eventSourceMappings;
  if (!mapping) throw new Error('the assembly has no event source mapping');
  const delivery = stack.model.functions.find((fn) => fn.logicalId === mapping.functionLogicalId);
  const queue = stack.model.queues.find((q) => q.arn === mapping.queueArn);
  const deadLetters = stack.model.queues.find((q) => q.arn === queue?.redrive?.deadLetterTargetArn);
  const mcp = stack.model.functions.find((fn) => fn.logicalId === stack.model.functionUrl?.targetFunctionLogicalId);
  if (!delivery || !queue || !deadLetters || !mcp) throw new Error('the assembly lacks the delivery function, its queues or the MCP function');
  return { mapping, delivery, queue, deadLetters, mcp };
}

/** An SQS client with a function's role, through the IAM gateway, as the function itself would build it. */
function clientAs(roleArn: string, name: string): SQSClient {
  return new SQSClient({
    ...SQS_CLIENT_CONFIG,
    region: stack.model.region,
    endpoint: stack.gateways.sqs,
    credentials: stack.authority.credentialsFor(roleArn, name),
  });
}

describe('webhook delivery as deployed', () => {
  it('maps the delivery queue to the delivery function, reporting failed items, redriving to its dead-letter queue', () => {
    const { mapping, queue } = deployed();
    expect(mapping).toMatchObject({ batchSize: 10, reportBatchItemFailures: true, enabled: true, maximumConcurrency: 10 });
    expect(queue.redrive?.maxReceiveCount).toBeGreaterThan(1);
  });

  it('runs a job the MCP role enqueues through the bundled delivery function, and deletes it', async () => {
    const { delivery, queue, deadLetters, mcp } = deployed();
    const queueUrl = mcp.environment[ENV.eventsDeliveryQueueUrl];
    expect(queueUrl).toBe(queue.url);
    const client = clientAs(mcp.roleArn, mcp.name);
    try {
      // A subscription nobody holds: the delivery function looks it up (its grant on the table) and drops the job.
      await new SqsWebhookDeliveryQueue({ client, queueUrl: queueUrl ?? '' }).enqueue([
        { subscriptionId: 'sub_as_deployed', ownerKey: 'nobody', eventId: 'evt_as_deployed', attempt: 1 },
      ]);
    } finally {
      client.destroy();
    }
    const ran = () => logs.some((line) => line.startsWith(`[${delivery.logicalId}]`) && line.includes('sub_as_deployed') && line.includes('dropped'));
    while (!ran()) await sleep(50);
    expect(logs.find((line) => line.includes('sub_as_deployed') && line.includes('dropped'))).toContain('the subscription is gone');
    // Deleted once the invocation answered: nothing visible, in flight or dead-lettered.
    const counts = () => stack.sqs.queues.get(queue.name)?.counts();
    while (counts()?.inFlight !== 0) await sleep(50);
    expect(counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(stack.sqs.queues.get(deadLetters.name)?.counts().visible).toBe(0);
    expect(logs.filter((line) => line.includes('AccessDenied'))).toEqual([]);
  });

  it('lets only the delivery function receive from the queue', async () => {
    const { queue, mcp } = deployed();
    const client = clientAs(mcp.roleArn, mcp.name);
    try {
      await expect(client.send(new ReceiveMessageCommand({ QueueUrl: queue.url }))).rejects.toMatchObject({
        name: 'AccessDeniedException',
        message: expect.stringContaining('sqs:ReceiveMessage'),
      });
      expect(notices.take()).toEqual([expect.stringMatching(/^WARN IAM gateway \(sqs\): AccessDenied: .*sqs:ReceiveMessage/)]);
    } finally {
      client.destroy();
    }
  });

  it('lets the delivery function read subscription and event items of the table, and no operation record (dynamodb:LeadingKeys)', async () => {
    const { delivery } = deployed();
    const client = new DynamoDBClient({
      region: stack.model.region,
      endpoint: stack.gateways.dynamodb,
      credentials: stack.authority.credentialsFor(delivery.roleArn, delivery.name),
      maxAttempts: 1,
    });
    const get = (pk: string) => client.send(new GetItemCommand({ TableName: stack.model.table.name, Key: { [OPERATIONS_TABLE.partitionKey]: { S: pk } } }));
    try {
      await expect(get('SUB#nobody#sub_1')).resolves.toMatchObject({ $metadata: { httpStatusCode: 200 } });
      await expect(get('EVT#nobody#evt_1')).resolves.toMatchObject({ $metadata: { httpStatusCode: 200 } });
      await expect(get('OP#nobody#token')).rejects.toMatchObject({ name: 'AccessDeniedException', message: expect.stringContaining('dynamodb:GetItem') });
      expect(notices.take()).toEqual([expect.stringMatching(/^WARN IAM gateway \(dynamodb\): AccessDenied: .*dynamodb:GetItem/)]);
    } finally {
      client.destroy();
    }
  });
});
