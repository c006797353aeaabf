/** The EventLog contract against the in-memory log and the DynamoDB log on dynalite, and the DynamoDB item layout. */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbEventLog } from '../../lambdas/aws/dynamodb-event-log.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { describeEventLogContract, entry } from './event-log-contract.ts';

let local: LocalDynamo;
let tables = 0;

beforeAll(async () => {
  local = await startLocalDynamo();
});
afterAll(async () => {
  await local?.close();
});

async function freshTable(): Promise<string> {
  const tableName = `events-${++tables}`;
  await createOperationsTable(local.client, tableName);
  return tableName;
}

describeEventLogContract('in memory', async (now) => new InMemoryEventLog({ now }));
describeEventLogContract('DynamoDB (dynalite)', async (now) => new DynamoDbEventLog({ client: local.client, tableName: await freshTable(), now }));

describe('DynamoDbEventLog item layout', () => {
  it('keys an occurrence by owner and id, indexes it by owner and stream in time order, and carries expiresAt', async () => {
    const tableName = await freshTable();
    await new DynamoDbEventLog({ client: local.client, tableName, now: () => 1_760_000_000_000 }).append(entry());
    const { Item } = await local.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'EVT#owner-a#evt_1' } }, ConsistentRead: true }));
    expect(Item).toMatchObject({
      ownerKey: { S: 'EVENTS#owner-a#operation.finished' },
      createdKey: { S: '001760000000000#evt_1' },
      expiresAt: { N: String(Math.floor(1_760_000_000_000 / 1000) + 86_400) },
      data: { S: JSON.stringify(entry().data) },
    });
  });
});
