/**
 * DynamoDB's key and item size limits on the local DynamoDB, through the real
 * DynamoDBClient: the error a request gets locally is the one DynamoDB gives it
 * (`ValidationException` and DynamoDB's message), whether dynalite answers it itself or the
 * local client's limits (dynamo-limits.ts) do because dynalite counts differently.
 */
import { DeleteItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { itemBytes } from '../../local/dynamodb/dynamo-limits.ts';

const HASH_KEY_TOO_LARGE = 'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes';
const RANGE_KEY_TOO_LARGE = 'One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes';
const ITEM_TOO_LARGE = 'Item size has exceeded the maximum allowed size';

let dynamo: LocalDynamo;
let TableName: string;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  TableName = dynamo.tableName;
});

afterAll(async () => {
  await dynamo?.close();
});

const validation = (message: string) => ({
  name: 'ValidationException',
  message,
  $fault: 'client',
  $metadata: expect.objectContaining({ httpStatusCode: 400 }),
});
/** A string of `bytes` UTF-8 bytes made of two-byte characters: half as many characters as bytes. */
const wide = (bytes: number) => 'é'.repeat(bytes / 2);

describe('DynamoDB key and item size limits on the local DynamoDB', () => {
  it('a partition key over 2,048 bytes is a ValidationException on every item operation, as DynamoDB answers it', async () => {
    const pk = 'k'.repeat(2049);
    const key = { pk: { S: pk } };
    await expect(dynamo.client.send(new PutItemCommand({ TableName, Item: key }))).rejects.toMatchObject(validation(HASH_KEY_TOO_LARGE));
    await expect(dynamo.client.send(new GetItemCommand({ TableName, Key: key }))).rejects.toMatchObject(validation(HASH_KEY_TOO_LARGE));
    await expect(dynamo.client.send(new DeleteItemCommand({ TableName, Key: key }))).rejects.toMatchObject(validation(HASH_KEY_TOO_LARGE));
    await expect(
      dynamo.client.send(new UpdateItemCommand({ TableName, Key: key, UpdateExpression: 'SET a = :a', ExpressionAttributeValues: { ':a': { S: 'x' } } })),
    ).rejects.toMatchObject(validation(HASH_KEY_TOO_LARGE));

    await dynamo.client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'k'.repeat(2048) } } }));
  });

  it('the key limit counts UTF-8 bytes, not characters: 1,025 two-byte characters are over it', async () => {
    const key = { pk: { S: wide(2050) } };
    expect(key.pk.S.length).toBeLessThan(2048);
    await expect(dynamo.client.send(new PutItemCommand({ TableName, Item: key }))).rejects.toMatchObject(validation(HASH_KEY_TOO_LARGE));
    await expect(dynamo.client.send(new GetItemCommand({ TableName, Key: key }))).rejects.toMatchObject(validation(HASH_KEY_TOO_LARGE));

    await dynamo.client.send(new PutItemCommand({ TableName, Item: { pk: { S: wide(2048) } } }));
  });

  it("an index key over its limit refuses the write, as DynamoDB does for a global secondary index's keys", async () => {
    const item = (ownerKey: string, createdKey: string) => ({
      pk: { S: `OP#index-${ownerKey.length}-${createdKey.length}` },
      ownerKey: { S: ownerKey },
      createdKey: { S: createdKey },
    });
    await expect(dynamo.client.send(new PutItemCommand({ TableName, Item: item('o'.repeat(2049), 'c') }))).rejects.toMatchObject(
      validation(HASH_KEY_TOO_LARGE),
    );
    await expect(dynamo.client.send(new PutItemCommand({ TableName, Item: item('o', 'c'.repeat(1025)) }))).rejects.toMatchObject(
      validation(RANGE_KEY_TOO_LARGE),
    );
    await dynamo.client.send(new PutItemCommand({ TableName, Item: item('o'.repeat(2048), 'c'.repeat(1024)) }));
  });

  it('an item over 400 KB is a ValidationException on PutItem, and an UpdateItem that would grow one past it is refused too', async () => {
    const big = 'b'.repeat(400 * 1024);
    await expect(dynamo.client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'big' }, data: { S: big } } }))).rejects.toMatchObject(
      validation(ITEM_TOO_LARGE),
    );

    await dynamo.client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'grows' }, data: { S: 'b'.repeat(300 * 1024) } } }));
    await expect(
      dynamo.client.send(
        new UpdateItemCommand({
          TableName,
          Key: { pk: { S: 'grows' } },
          UpdateExpression: 'SET more = :more',
          ExpressionAttributeValues: { ':more': { S: 'b'.repeat(200 * 1024) } },
        }),
      ),
    ).rejects.toMatchObject(validation('Item size to update has exceeded the maximum allowed size'));
  });

  it('the item limit counts UTF-8 bytes too: 250 K two-byte characters (500 KB) are refused', async () => {
    const data = wide(500 * 1024);
    expect(itemBytes({ pk: { S: 'wide' }, data: { S: data } })).toBeGreaterThan(400 * 1024);
    await expect(dynamo.client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'wide' }, data: { S: data } } }))).rejects.toMatchObject(
      validation(ITEM_TOO_LARGE),
    );
    await expect(
      dynamo.client.send(
        new UpdateItemCommand({ TableName, Key: { pk: { S: 'wide' } }, UpdateExpression: 'SET d = :d', ExpressionAttributeValues: { ':d': { S: data } } }),
      ),
    ).rejects.toMatchObject(validation('ExpressionAttributeValues contains invalid value: Item size has exceeded the maximum allowed size for key :d'));
  });

  it('the limits are on the local client startLocalDynamo builds; a client of its own gets only what dynalite checks', async () => {
    const bare = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      await bare.send(new PutItemCommand({ TableName, Item: { pk: { S: wide(3000) } } }));
      await expect(dynamo.client.send(new GetItemCommand({ TableName, Key: { pk: { S: wide(3000) } } }))).rejects.toMatchObject(validation(HASH_KEY_TOO_LARGE));
    } finally {
      bare.destroy();
    }
  });
});
