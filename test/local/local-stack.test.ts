/**
 * The local stack's AWS-shaped plumbing, on real parts: the event bus forwards what the
 * AWS rule's pattern selects, and expired records are deleted late, as DynamoDB's TTL does.
 */
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { SFNClient, StartExecutionCommand, StartSyncExecutionCommand } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { statusChangePattern } from '../../lambdas/aws/status-events.ts';
import type { ExecutionStatusChangeEvent } from '../../lambdas/aws/status-sync.ts';
import { matchesEventPattern, type EventPattern } from '../../local/events/event-pattern.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let stack: LocalStack;
let sfn: SFNClient;
let dynamo: DynamoDBClient;

beforeAll(async () => {
  stack = await startTestStack({ ttl: { lagSeconds: 2, intervalMs: 100 } });
  sfn = new SFNClient({ region: 'us-east-1', endpoint: stack.sfnEndpoint, credentials, disableHostPrefix: true });
  dynamo = new DynamoDBClient({ region: 'us-east-1', endpoint: stack.dynamo.endpoint, credentials });
});

afterAll(async () => {
  sfn?.destroy();
  dynamo?.destroy();
  await stack?.close();
});

describe('local stack', () => {
  it("status-sync receives the RUNNING and terminal events of the STANDARD tools, the AWS rule's pattern, and nothing of EXPRESS runs", async () => {
    const statusSync = vi.spyOn(stack.app, 'statusSync').mockResolvedValue(undefined);
    try {
      const tool = (name: string) => stack.catalog.tools.find((t) => t.name === name)!;
      // failures > tests: the definition's Choice fails the run at once (Mcp.ProtocolError).
      const { executionArn } = await sfn.send(
        new StartExecutionCommand({
          stateMachineArn: tool('run_test_suite').stateMachineArn,
          input: JSON.stringify({ arguments: { suite: 's', tests: 1, failures: 2, durationSeconds: 0 } }),
        }),
      );
      const sync = await sfn.send(
        new StartSyncExecutionCommand({
          stateMachineArn: tool('quick_calculation').stateMachineArn,
          input: JSON.stringify({ arguments: { a: 1, b: 2, op: 'add' } }),
        }),
      );
      expect(sync.status).toBe('SUCCEEDED');
      await expect.poll(() => statusSync.mock.calls.length).toBe(2);
      await stack.drainEvents();

      const delivered = statusSync.mock.calls.map(([event]) => event as ExecutionStatusChangeEvent);
      expect(delivered.map((event) => [event.detail.executionArn, event.detail.status])).toEqual([
        [executionArn, 'RUNNING'],
        [executionArn, 'FAILED'],
      ]);
      const standard = stack.catalog.tools.filter((t) => t.workflowType === 'STANDARD').map((t) => t.stateMachineArn);
      const pattern = statusChangePattern(standard) as unknown as EventPattern;
      for (const event of delivered) expect(matchesEventPattern(pattern, event)).toBe(true);
    } finally {
      statusSync.mockRestore();
    }
  });

  it('deletes an expired record only after the TTL lag, as DynamoDB deletes expired items late', async () => {
    const key = { pk: { S: 'OP#ttl-test#expired' } };
    const expiresAt = Math.floor(Date.now() / 1000) - 1;
    await dynamo.send(new PutItemCommand({ TableName: stack.dynamo.tableName, Item: { ...key, expiresAt: { N: String(expiresAt) } } }));
    const present = async () =>
      (await dynamo.send(new GetItemCommand({ TableName: stack.dynamo.tableName, Key: key, ConsistentRead: true }))).Item !== undefined;
    // Expired a second ago, with a lag of two seconds: still readable right now.
    expect(await present()).toBe(true);
    await expect.poll(present, { timeout: 5000, interval: 100 }).toBe(false);
  });
});
