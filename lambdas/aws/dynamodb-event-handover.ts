/**
 * The handover marks on the event log's own items (`EVT#<owner>#<eventId>`, dynamodb-event-log.ts):
 * `handedOverAt` is set on the entry once its delivery jobs are enqueued, by an UpdateItem that
 * never creates an item, and read back with a consistent GetItem of that attribute alone.
 */
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EventHandover } from '../events/event-handover.ts';
import { checkOwner, sendOrThrow, writeIfCondition } from './dynamodb-event-items.ts';
import { OPERATIONS_TABLE } from './operations-table.ts';

const PK = OPERATIONS_TABLE.partitionKey;
const HANDED_OVER_AT = 'handedOverAt';
/** Named condition: the entry is in the log (an expired one TTL removed is not brought back). */
const ENTRY_EXISTS = 'attribute_exists(#pk)';

export class DynamoDbEventHandover implements EventHandover {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: { readonly client: DynamoDBClient; readonly tableName: string }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async handedOver(ownerId: string, eventId: string): Promise<boolean> {
    checkOwner(ownerId);
    const output = await sendOrThrow('GetItem', () =>
      this.#client.send(
        new GetItemCommand({
          TableName: this.#tableName,
          Key: { [PK]: { S: eventPk(ownerId, eventId) } },
          ProjectionExpression: '#at',
          ExpressionAttributeNames: { '#at': HANDED_OVER_AT },
          ConsistentRead: true,
        }),
      ),
    );
    return output.Item?.[HANDED_OVER_AT] !== undefined;
  }

  async markHandedOver(ownerId: string, eventId: string, at: number): Promise<void> {
    checkOwner(ownerId);
    await writeIfCondition('UpdateItem', () =>
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: { [PK]: { S: eventPk(ownerId, eventId) } },
          UpdateExpression: 'SET #at = :at',
          ConditionExpression: ENTRY_EXISTS,
          ExpressionAttributeNames: { '#at': HANDED_OVER_AT, '#pk': PK },
          ExpressionAttributeValues: { ':at': { N: String(at) } },
        }),
      ),
    );
  }
}

/** The event log's key (dynamodb-event-log.ts). */
function eventPk(ownerId: string, eventId: string): string {
  return `EVT#${ownerId}#${eventId}`;
}
