/**
 * A start's two writes over the hot wire (hot-call.ts): the record's `PutItem` (`TOKEN_IS_NEW`)
 * and the slot claim's `UpdateItem` (`SLOT_IS_FREE`). Their fallback to the SDK path is safe
 * because each is conditional: one that went through and is sent again fails its condition
 * and answers as a retried start does, as after the SDK's own retry of it. A failed condition
 * is the SDK's `ConditionalCheckFailedException`, deserialized by the SDK from the hot answer,
 * with its `Item` (`ALL_OLD`), so the store reads it as before.
 */
import {
  type DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type PutItemCommandInput,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { HotCall, type HotCallOptions, type HotOperation } from './hot-call.ts';
import { isPlainItem } from './hot-get-item.ts';

type Item = Record<string, AttributeValue>;

/** What a write answers the store: the attributes it asked for, if any. */
export interface WriteOutput {
  readonly Attributes?: Item;
}

/** Sends the store's conditional writes; the SDK client's own `send` or {@link HotDynamoDbWrites}. */
export interface DynamoDbWrites {
  putItem(input: PutItemCommandInput): Promise<WriteOutput>;
  updateItem(input: UpdateItemCommandInput): Promise<WriteOutput>;
}

/** The writes as the SDK client sends them. */
export function sdkWrites(client: DynamoDBClient): DynamoDbWrites {
  return {
    putItem: (input) => client.send(new PutItemCommand(input)),
    updateItem: (input) => client.send(new UpdateItemCommand(input)),
  };
}

/** A failed condition is the write's own answer, not the wire's fault. */
const CONDITION_FAILED = new Set(['ConditionalCheckFailedException']);

/** A 200 the hot path reads: nothing but `Attributes` of plain types (anything else is the SDK's to read). */
function readWrite(body: unknown): WriteOutput | undefined {
  if (body === undefined) return undefined;
  const { Attributes, ...rest } = body as { Attributes?: unknown };
  if (Object.keys(rest).length > 0) return undefined;
  if (Attributes === undefined) return {};
  return isPlainItem(Attributes) ? { Attributes } : undefined;
}

const PUT_ITEM: HotOperation<PutItemCommandInput, WriteOutput> = {
  name: 'PutItem',
  target: 'DynamoDB_20120810.PutItem',
  write: true,
  answers: CONDITION_FAILED,
  read: readWrite,
  command: async (input) => new PutItemCommand(input),
};

const UPDATE_ITEM: HotOperation<UpdateItemCommandInput, WriteOutput> = {
  name: 'UpdateItem',
  target: 'DynamoDB_20120810.UpdateItem',
  write: true,
  answers: CONDITION_FAILED,
  read: readWrite,
  command: async (input) => new UpdateItemCommand(input),
};

/** The writes over the client's hot wire, each falling back to the SDK path as hot-call.ts says. */
export class HotDynamoDbWrites implements DynamoDbWrites {
  readonly #calls: HotCall<DynamoDBClient>;

  constructor(client: DynamoDBClient, options: HotCallOptions = {}) {
    this.#calls = new HotCall(client, 'dynamodb', undefined, { noun: 'writes', ...options });
  }

  putItem(input: PutItemCommandInput): Promise<WriteOutput> {
    return this.#calls.send(PUT_ITEM, input);
  }

  updateItem(input: UpdateItemCommandInput): Promise<WriteOutput> {
    return this.#calls.send(UPDATE_ITEM, input);
  }
}
