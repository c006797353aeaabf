/**
 * The event log over the operations table: one item per occurrence (`EVT#<owner>#<eventId>`,
 * with `expiresAt`, so DynamoDB's TTL deletes it after retention), and each stream read
 * through the `byOwner` index, keyed `EVENTS#<owner>#<stream>` and sorted by position. A
 * read is one Query, cut at its limit or at 1 MB; the index is eventually consistent, and a
 * write may be slow, which the reader allows for by reading only up to a settled horizon
 * (see event-reader.ts): an append takes its position at each attempt and bounds the attempt.
 */
import { GetItemCommand, PutItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { OPERATIONS_TABLE } from './operations-table.ts';
import { parseTraceCarrier, type TraceCarrier } from '../observability/trace-context.ts';
import { isObject } from '../shared/json-values.ts';
import { randomUUID } from 'node:crypto';
import {
  APPEND_ATTEMPT_MS,
  INDEX_LAG_MS,
  isExpired,
  placeAt,
  positionOf,
  type AppendOutcome,
  type EventEntry,
  type EventLog,
  type StreamPage,
  type StreamRange,
} from '../events/event-log.ts';
import { checkOwner, EventStoreError, sendOrThrow, writeIfCondition } from './dynamodb-event-items.ts';

type Item = Record<string, AttributeValue>;

const PK = OPERATIONS_TABLE.partitionKey;
const EXPIRES_AT = OPERATIONS_TABLE.ttlAttribute;
const STREAM_KEY = OPERATIONS_TABLE.ownerIndex.partitionKey;
const POSITION_KEY = OPERATIONS_TABLE.ownerIndex.sortKey;

/** Named condition: an occurrence is written once, whoever appends it again. */
const EVENT_IS_NEW = 'attribute_not_exists(#pk)';

/** Which append wrote an item: a random id per `append` call. */
const APPEND_ID = 'appendId';

/** Attempts of one append, each at a fresh position: one given up (its bound passed) is made again. */
const APPEND_ATTEMPTS = 3;

export interface DynamoDbEventLogOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Epoch ms: an entry's place in the log, taken at each attempt; reads leave out entries past their `expiresAt`. */
  readonly now?: () => number;
  /** How long one attempt of an append may take before it is given up. @default APPEND_ATTEMPT_MS */
  readonly attemptTimeoutMs?: number;
}

export class DynamoDbEventLog implements EventLog {
  /** Reads go through the owner index, which a write reaches well within this. */
  readonly indexLagMs = INDEX_LAG_MS;
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #now: () => number;
  readonly #attemptTimeoutMs: number;

  constructor(options: DynamoDbEventLogOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#now = options.now ?? Date.now;
    this.#attemptTimeoutMs = options.attemptTimeoutMs ?? APPEND_ATTEMPT_MS;
  }

  async append(entry: EventEntry): Promise<AppendOutcome> {
    checkOwner(entry.ownerId);
    // Marks this append's own write: a retry that finds the entry knows whether an attempt of its own wrote it.
    const appendId = randomUUID();
    for (let attempt = 1; ; attempt++) {
      // The position is taken at each attempt, and an attempt is given up before it could land further behind it than APPEND_ATTEMPT_MS.
      const placed = placeAt(entry, this.#now());
      try {
        const created = await writeIfCondition('PutItem', () =>
          this.#client.send(
            new PutItemCommand({
              TableName: this.#tableName,
              Item: { ...toItem(placed), [APPEND_ID]: { S: appendId } },
              ConditionExpression: EVENT_IS_NEW,
              ExpressionAttributeNames: { '#pk': PK },
            }),
            { abortSignal: AbortSignal.timeout(this.#attemptTimeoutMs) },
          ),
        );
        if (created) return { created, entry: placed };
        const held = await this.#getItem(entry.ownerId, entry.eventId);
        return held ? { created: held[APPEND_ID]?.S === appendId, entry: fromItem(held) } : { created: false, entry: placed };
      } catch (error) {
        if (attempt >= APPEND_ATTEMPTS || !givenUp(error)) throw error;
      }
    }
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
    const item = await this.#getItem(ownerId, eventId);
    if (!item) return undefined;
    const entry = fromItem(item);
    return isExpired(entry, this.#now()) ? undefined : entry;
  }

  async #getItem(ownerId: string, eventId: string): Promise<Item | undefined> {
    const output = await sendOrThrow('GetItem', () =>
      this.#client.send(new GetItemCommand({ TableName: this.#tableName, Key: { [PK]: { S: eventPk(ownerId, eventId) } }, ConsistentRead: true })),
    );
    return output.Item;
  }
}

/** Whether an append's attempt failed because its bound passed (the SDK's AbortError, wrapped by `sendOrThrow`). */
function givenUp(error: unknown): boolean {
  return (error as { cause?: { name?: unknown } } | undefined)?.cause?.name === 'AbortError';
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
    ...(entry.trace ? { trace: { S: JSON.stringify(entry.trace) } } : {}),
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
    ...traceOf(item.trace?.S),
  };
}

/** A stored trace context; an unreadable one is left out rather than failing the read. */
function traceOf(text: string | undefined): { trace?: TraceCarrier } {
  if (text === undefined) return {};
  try {
    const trace = parseTraceCarrier(JSON.parse(text));
    return trace ? { trace } : {};
  } catch {
    return {};
  }
}
