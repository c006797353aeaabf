/**
 * The `ActiveSlotStore` half of the port over DynamoDB: one item per owner (`ACTIVE#<owner>`)
 * holding the tokens of its active operations in a string set (`tokens`), the request aliases
 * of those operations (`alias#<requestId>`), and each token's newest request ids
 * (`ids#<token>`). A claim is one conditional write; the item goes once no slot is held, and
 * the aliases with it. A failed condition is an answer (`refused`, or nothing to do).
 */
import { DeleteItemCommand, GetItemCommand, UpdateItemCommand, type DynamoDBClient, type UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { MAX_REQUEST_ALIASES_PER_OPERATION } from '../operations/ports.ts';
import type { ActiveSlotStore, RequestAlias, SlotAlias, SlotClaim } from '../operations/ports.ts';
import type { DynamoDbWrites } from './hot-dynamodb-writes.ts';
import { EXPIRES_AT, PK, numberAttribute, slotPk, type Item } from './operation-item.ts';
import { RecordStoreError, isConditionFailure, storeCall, storeError } from './record-store-error.ts';

/**
 * Named conditions: `#pk` is the partition key, `#tokens` the slot set, `#alias` a request
 * alias (`#token` its token), `#ids` a token's list of request ids.
 */
const SLOT_IS_FREE = '(attribute_not_exists(#tokens) OR size(#tokens) < :limit) AND NOT contains(#tokens, :token)';
const NO_SLOT_HELD = 'attribute_not_exists(#tokens)';
/** Without it, an update of an absent item would create an empty one. */
const SLOT_ITEM_EXISTS = 'attribute_exists(#pk)';
const TOKEN_HOLDS_SLOT = 'contains(#tokens, :token)';
const ALIAS_NAMES_TOKEN = '#alias.#token = :token';
const NO_IDS_LISTED = 'attribute_not_exists(#ids)';
const IDS_ARE_AS_READ = '#ids = :old';
/** The alias of the `index`th id falling off the list: absent, or still this token's (`#d<index>`). */
const droppedAliasIsFreeOrOwn = (index: number) => `(attribute_not_exists(#d${index}) OR #d${index}.#token = :token)`;

/** Attempts of an alias write that races other writes of the same slot item. */
const ALIAS_WRITE_ATTEMPTS = 3;

export interface DynamoDbActiveSlotStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** What sends the claim's UpdateItem (a start's write, hot-dynamodb-writes.ts); by default the client. */
  readonly writes?: Pick<DynamoDbWrites, 'updateItem'>;
}

/** `ActiveSlotStore` over the operations table's per-owner slot items (see `OPERATIONS_TABLE`). */
export class DynamoDbActiveSlotStore implements ActiveSlotStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #writes: Pick<DynamoDbWrites, 'updateItem'>;

  constructor(options: DynamoDbActiveSlotStoreOptions) {
    this.#client = options.client;
    this.#writes = options.writes ?? { updateItem: (input) => options.client.send(new UpdateItemCommand(input)) };
    this.#tableName = options.tableName;
  }

  /**
   * One conditional `ADD` to the owner's string set: atomic without a scan or a
   * transaction, and answering nothing back (the set can hold hundreds of tokens). Only a
   * refused write reads the set, to tell a token that already holds its slot (a retried
   * start) from a full set.
   */
  async claimActiveSlot(ownerId: string, token: string, limit: number, alias?: SlotAlias): Promise<SlotClaim> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    const Key = { [PK]: { S: slotPk(ownerId) } };
    try {
      await this.#writes.updateItem({ TableName: this.#tableName, Key, ...claimUpdate(token, limit, alias), ConditionExpression: SLOT_IS_FREE });
      return 'claimed';
    } catch (error) {
      if (!isConditionFailure(error)) throw storeError('UpdateItem', error);
    }
    if (!(await this.listActiveSlots(ownerId)).includes(token)) return 'refused';
    if (alias?.forget) await this.deleteRequestAlias(ownerId, alias.requestId);
    else if (alias) await this.putRequestAlias(ownerId, alias.requestId, { token, expiresAt: alias.expiresAt });
    return 'already-held';
  }

  /**
   * `DELETE` from the set, then drop the item once empty, so released owners leave nothing
   * behind. The token's list of ids goes in the same write (and the alias of `requestId`
   * with it, when it still names the token); the other ids its retries aliased follow, each
   * only while it still names the token.
   */
  async releaseActiveSlot(ownerId: string, token: string, requestId?: string): Promise<void> {
    const Key = { [PK]: { S: slotPk(ownerId) } };
    const idsName = aliasIdsAttribute(token);
    let before: Item | undefined;
    let aliasGone = false;
    if (requestId !== undefined) {
      // The slot and the alias in one write, when the alias still names this token.
      try {
        const output = await this.#client.send(
          new UpdateItemCommand({
            TableName: this.#tableName,
            Key,
            UpdateExpression: 'DELETE #tokens :tokens REMOVE #alias, #ids',
            ConditionExpression: ALIAS_NAMES_TOKEN,
            ExpressionAttributeNames: { '#tokens': 'tokens', '#alias': aliasAttribute(requestId), '#token': 'token', '#ids': idsName },
            ExpressionAttributeValues: { ':tokens': { SS: [token] }, ':token': { S: token } },
            ReturnValues: 'UPDATED_OLD',
          }),
        );
        before = output.Attributes;
        aliasGone = true;
      } catch (error) {
        // A later call took the alias (or none was kept): release the slot alone.
        if (!isConditionFailure(error)) throw storeError('UpdateItem', error);
      }
    }
    if (!aliasGone) {
      try {
        const output = await this.#client.send(
          new UpdateItemCommand({
            TableName: this.#tableName,
            Key,
            UpdateExpression: 'DELETE #tokens :tokens REMOVE #ids',
            ConditionExpression: SLOT_ITEM_EXISTS,
            ExpressionAttributeNames: { '#pk': PK, '#tokens': 'tokens', '#ids': idsName },
            ExpressionAttributeValues: { ':tokens': { SS: [token] } },
            ReturnValues: 'UPDATED_OLD',
          }),
        );
        before = output.Attributes;
      } catch (error) {
        if (isConditionFailure(error)) return;
        throw storeError('UpdateItem', error);
      }
    }
    const remaining = (before?.tokens?.SS ?? []).filter((held) => held !== token);
    if (remaining.length === 0 && (await this.#dropIfEmpty(Key))) return;
    for (const id of idsOf(before?.[idsName])) {
      if (aliasGone && id === requestId) continue;
      await this.#updateSlotItem(ownerId, {
        UpdateExpression: 'REMOVE #alias',
        ConditionExpression: ALIAS_NAMES_TOKEN,
        ExpressionAttributeNames: { '#alias': aliasAttribute(id), '#token': 'token' },
        ExpressionAttributeValues: { ':token': { S: token } },
      });
    }
  }

  async listActiveSlots(ownerId: string): Promise<string[]> {
    const Key = { [PK]: { S: slotPk(ownerId) } };
    const { Item } = await storeCall('GetItem', () => this.#client.send(new GetItemCommand({ TableName: this.#tableName, Key, ConsistentRead: true })));
    return [...(Item?.tokens?.SS ?? [])].sort();
  }

  /**
   * Only while the token holds its slot: an alias of an operation that is over names nothing
   * to cancel. Last writer wins: JSON-RPC ids repeat across connections, and the newest
   * request is the one a cancel names. The token's newest few ids are listed beside the
   * aliases (`ids#<token>`), and the alias of an id that falls off the list goes in the same
   * write, unless another token's call has taken that id since. So retries under new ids
   * never grow the slot item.
   */
  async putRequestAlias(ownerId: string, requestId: string, alias: RequestAlias): Promise<void> {
    const Key = { [PK]: { S: slotPk(ownerId) } };
    const idsName = aliasIdsAttribute(alias.token);
    /** Ids falling off the list whose alias another token holds: left to that token. */
    const foreign = new Set<string>();
    for (let attempt = 0; attempt < ALIAS_WRITE_ATTEMPTS; attempt++) {
      const current = await this.#getSlotAttributes(ownerId, ['tokens', idsName]);
      if (!current?.tokens?.SS?.includes(alias.token)) return;
      const old = idsOf(current[idsName]);
      const ids = [...old.filter((id) => id !== requestId), requestId];
      const dropped = ids.splice(0, Math.max(0, ids.length - MAX_REQUEST_ALIASES_PER_OPERATION));
      const removed = dropped.filter((id) => !foreign.has(id));
      const names: Record<string, string> = { '#alias': aliasAttribute(requestId), '#ids': idsName, '#tokens': 'tokens' };
      const conditions = [TOKEN_HOLDS_SLOT, old.length === 0 ? NO_IDS_LISTED : IDS_ARE_AS_READ];
      removed.forEach((id, i) => {
        names[`#d${i}`] = aliasAttribute(id);
        names['#token'] = 'token';
        conditions.push(droppedAliasIsFreeOrOwn(i));
      });
      try {
        await this.#client.send(
          new UpdateItemCommand({
            TableName: this.#tableName,
            Key,
            UpdateExpression: `SET #alias = :alias, #ids = :ids${removed.length === 0 ? '' : ` REMOVE ${removed.map((_, i) => `#d${i}`).join(', ')}`}`,
            ConditionExpression: conditions.join(' AND '),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: {
              ':alias': aliasValue(alias),
              ':token': { S: alias.token },
              ':ids': idsValue(ids),
              ...(old.length === 0 ? {} : { ':old': idsValue(old) }),
            },
          }),
        );
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw storeError('UpdateItem', error);
      }
      // A race: the slot was released, the list changed, or a dropped id was taken by another call.
      if (removed.length === 0) continue;
      const aliases = await this.#getSlotAttributes(ownerId, removed.map(aliasAttribute));
      for (const id of removed) {
        const token = aliases?.[aliasAttribute(id)]?.M?.token?.S;
        if (token !== undefined && token !== alias.token) foreign.add(id);
      }
    }
  }

  async deleteRequestAlias(ownerId: string, requestId: string): Promise<void> {
    // Most ids were never aliased: a read (a fifth of a write's price) spares the write.
    if (!(await this.findRequestAlias(ownerId, requestId))) return;
    await this.#updateSlotItem(ownerId, {
      UpdateExpression: 'REMOVE #alias',
      ConditionExpression: SLOT_ITEM_EXISTS,
      ExpressionAttributeNames: { '#pk': PK, '#alias': aliasAttribute(requestId) },
    });
  }

  async findRequestAlias(ownerId: string, requestId: string): Promise<RequestAlias | undefined> {
    const output = await this.#getSlotAttributes(ownerId, [aliasAttribute(requestId)]);
    const value = output?.[aliasAttribute(requestId)];
    if (!value) return undefined;
    const token = value.M?.token?.S;
    const expiresAt = value.M?.[EXPIRES_AT]?.N;
    if (token === undefined || expiresAt === undefined) throw new RecordStoreError('Malformed request alias');
    return { token, expiresAt: Number(expiresAt) };
  }

  /** Some attributes of the owner's slot item, read consistently. */
  async #getSlotAttributes(ownerId: string, attributes: readonly string[]): Promise<Item | undefined> {
    // The key outside the call: a key too long is the caller's error, not a failed call.
    const Key = { [PK]: { S: slotPk(ownerId) } };
    const names = Object.fromEntries(attributes.map((attribute, i) => [`#a${i}`, attribute]));
    const output = await storeCall('GetItem', () =>
      this.#client.send(
        new GetItemCommand({
          TableName: this.#tableName,
          Key,
          ProjectionExpression: Object.keys(names).join(', '),
          ExpressionAttributeNames: names,
          ConsistentRead: true,
        }),
      ),
    );
    return output.Item;
  }

  /** A conditional update of the owner's slot item; a failed condition changes nothing and is no error. */
  async #updateSlotItem(ownerId: string, update: Omit<UpdateItemCommandInput, 'TableName' | 'Key'>): Promise<void> {
    const Key = { [PK]: { S: slotPk(ownerId) } };
    try {
      await this.#client.send(new UpdateItemCommand({ TableName: this.#tableName, Key, ...update }));
    } catch (error) {
      if (!isConditionFailure(error)) throw storeError('UpdateItem', error);
    }
  }

  /** Drops the owner's slot item once no slot is held, and the aliases kept on it with it. */
  async #dropIfEmpty(Key: Item): Promise<boolean> {
    try {
      // Conditional, so a claim that slipped in between keeps its slot.
      await this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key,
          ConditionExpression: NO_SLOT_HELD,
          ExpressionAttributeNames: { '#tokens': 'tokens' },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw storeError('DeleteItem', error);
      return false;
    }
  }
}

/**
 * A claim's `ADD` of the token to the slot set, and in the same write what it does to a
 * request alias: the alias recorded (a cancel by request id costs the start nothing extra;
 * a new slot's token has no ids listed yet, so its list starts with this one), or, for a
 * call that cannot be cancelled by id, the id's old alias removed without a read.
 */
function claimUpdate(
  token: string,
  limit: number,
  alias: SlotAlias | undefined,
): Pick<UpdateItemCommandInput, 'UpdateExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> {
  const values: Item = { ':tokens': { SS: [token] }, ':token': { S: token }, ':limit': numberAttribute(limit) };
  if (!alias) return { UpdateExpression: 'ADD #tokens :tokens', ExpressionAttributeNames: { '#tokens': 'tokens' }, ExpressionAttributeValues: values };
  const names = { '#tokens': 'tokens', '#alias': aliasAttribute(alias.requestId) };
  if (alias.forget) return { UpdateExpression: 'ADD #tokens :tokens REMOVE #alias', ExpressionAttributeNames: names, ExpressionAttributeValues: values };
  return {
    UpdateExpression: 'ADD #tokens :tokens SET #alias = :alias, #ids = :ids',
    ExpressionAttributeNames: { ...names, '#ids': aliasIdsAttribute(token) },
    ExpressionAttributeValues: { ...values, ':alias': aliasValue({ token, expiresAt: alias.expiresAt }), ':ids': idsValue([alias.requestId]) },
  };
}

/** Request aliases live on the owner's slot item, one attribute per request id. */
function aliasAttribute(requestId: string): string {
  return `alias#${requestId}`;
}

/**
 * The newest request ids aliased to a token, oldest first, on the slot item beside the
 * aliases: one JSON string, so a write can be conditioned on the list it read (string
 * equality holds in every DynamoDB; list equality not in the local one).
 */
function aliasIdsAttribute(token: string): string {
  return `ids#${token}`;
}

function idsValue(ids: readonly string[]): Item[string] {
  return { S: JSON.stringify(ids) };
}

function idsOf(value: Item[string] | undefined): string[] {
  if (value?.S === undefined) return [];
  const ids: unknown = JSON.parse(value.S);
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) throw new RecordStoreError('Malformed request id list');
  return ids;
}

function aliasValue(alias: RequestAlias): Item[string] {
  return { M: { token: { S: alias.token }, [EXPIRES_AT]: numberAttribute(alias.expiresAt) } };
}
