/**
 * The event log over the operations table: one item per occurrence (`EVT#<owner>#<eventId>`,
 * with `expiresAt`, so DynamoDB's TTL deletes it after retention), and each stream read
 * through the `byOwner` index, keyed `EVENTS#<owner>#<stream>` and sorted by position. A
 * read is one Query, cut at its limit or at 1 MB; the index is eventually consistent, which
 * the reader allows for by reading only up to a settled horizon (see event-reader.ts).
 */
import { GetItemCommand, PutItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { OPERATIONS_TABLE } from './operations-table.ts';
import { isObject } from '../shared/json-values.ts';
import { isExpired, positionOf, type EventEntry, type EventLog, type StreamPage, type StreamRange } from '../events/event-log.ts';
import { checkOwner, EventStoreError, sendOrThrow, writeIfCondition } from './dynamodb-event-items.ts';

type Item = Record<string, AttributeValue>;

const PK = OPERATIONS_TABLE.partitionKey;
const EXPIRES_AT = OPERATIONS_TABLE.ttlAttribute;
const STREAM_KEY = OPERATIONS_TABLE.ownerIndex.partitionKey;
const POSITION_KEY = OPERATIONS_TABLE.ownerIndex.sortKey;

/** Named condition: an occurrence is written once, whoever appends it again. */
const EVENT_IS_NEW = 'attribute_not_exists(#pk)';

export interface DynamoDbEventLogOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Epoch ms; reads leave out entries past their `expiresAt`. */
  readonly now?: () => number;
}

export class DynamoDbEventLog implements EventLog {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #now: () => number;

  constructor(options: DynamoDbEventLogOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#now = options.now ?? Date.now;
  }

  async append(entry: EventEntry): Promise<{ created: boolean }> {
    checkOwner(entry.ownerId);
    const created = await writeIfCondition('PutItem', () =>
      this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: toItem(entry),
          ConditionExpression: EVENT_IS_NEW,
          ExpressionAttributeNames: { '#pk': PK },
        }),
      ),
    );
    return { created };
  }

  async read(ownerId: string, stream: string, range: StreamRange): Promise<StreamPage> {
    checkOwner(ownerId);
    if (range.after >= range.through) return { entries: [], reached: range.after, more: false };
    let found: EventEntry[] = [];
    let cut: Item | undefined;
    // One query; a second only when the first was cut before anything past `after`, so a read always moves on.
    for (let query = 0; query < 2 && found.length === 0; query++) {
      const output = await sendOrThrow('Query', () =>
        this.#client.send(
          new QueryCommand({
            TableName: this.#tableName,
            IndexName: OPERATIONS_TABLE.ownerIndex.name,
            // BETWEEN is inclusive: `after` itself (the last entry a cursor named) is dropped below.
            KeyConditionExpression: '#stream = :stream AND #position BETWEEN :after AND :through',
            ExpressionAttributeNames: { '#stream': STREAM_KEY, '#position': POSITION_KEY },
            ExpressionAttributeValues: { ':stream': { S: streamKey(ownerId, stream) }, ':after': { S: range.after }, ':through': { S: range.through } },
            Limit: range.limit + 2,
            ...(cut ? { ExclusiveStartKey: cut } : {}),
          }),
        ),
      );
      found = (output.Items ?? []).map(fromItem).filter((entry) => positionOf(entry) !== range.after);
      cut = output.LastEvaluatedKey;
      if (!cut) break;
    }
    const page = found.slice(0, range.limit);
    const now = this.#now();
    const last = page.at(-1);
    return {
      entries: page.filter((entry) => !isExpired(entry, now)),
      reached: last ? positionOf(last) : (cut?.[POSITION_KEY]?.S ?? range.after),
      // A query stops at its Limit or at 1 MB (five large results fill it), whichever comes first: past either cut, entries may remain.
      more: found.length > range.limit || cut !== undefined,
    };
  }

  async get(ownerId: string, eventId: string): Promise<EventEntry | undefined> {
    checkOwner(ownerId);
    const output = await sendOrThrow('GetItem', () =>
      this.#client.send(new GetItemCommand({ TableName: this.#tableName, Key: { [PK]: { S: eventPk(ownerId, eventId) } }, ConsistentRead: true })),
    );
    if (!output.Item) return undefined;
    const entry = fromItem(output.Item);
    return isExpired(entry, this.#now()) ? undefined : entry;
  }
}

function eventPk(ownerId: string, eventId: string): string {
  return `EVT#${ownerId}#${eventId}`;
}

function streamKey(ownerId: string, stream: string): string {
  return `EVENTS#${ownerId}#${stream}`;
}

function toItem(entry: EventEntry): Item {
  return {
    [PK]: { S: eventPk(entry.ownerId, entry.eventId) },
    [STREAM_KEY]: { S: streamKey(entry.ownerId, entry.stream) },
    [POSITION_KEY]: { S: positionOf(entry) },
    [EXPIRES_AT]: { N: String(entry.expiresAt) },
    ownerId: { S: entry.ownerId },
    eventId: { S: entry.eventId },
    name: { S: entry.name },
    stream: { S: entry.stream },
    at: { N: String(entry.at) },
    loggedAt: { N: String(entry.loggedAt) },
    operationId: { S: entry.operationId },
    tool: { S: entry.tool },
    // JSON text, so any payload round-trips exactly (empty maps, nested nulls).
    data: { S: JSON.stringify(entry.data) },
  };
}

function fromItem(item: Item): EventEntry {
  const text = (name: string) => {
    const value = item[name]?.S;
    if (value === undefined) throw new EventStoreError(`Malformed event item: ${name} is missing`);
    return value;
  };
  const number = (name: string) => {
    const value = Number(item[name]?.N);
    if (!Number.isFinite(value)) throw new EventStoreError(`Malformed event item: ${name} is missing`);
    return value;
  };
  const data: unknown = JSON.parse(text('data'));
  return {
    ownerId: text('ownerId'),
    eventId: text('eventId'),
    name: text('name'),
    stream: text('stream'),
    at: number('at'),
    loggedAt: number('loggedAt'),
    operationId: text('operationId'),
    tool: text('tool'),
    data: isObject(data) ? data : {},
    expiresAt: number(EXPIRES_AT),
  };
}
