/**
 * The in-memory `ActiveSlotStore`: each owner's active-operation slots, and the request
 * aliases kept with them, as the DynamoDB store keeps them on one item per owner (the
 * aliases go once no slot is held; a token keeps its newest few ids; the item has
 * DynamoDB's size limit).
 */
import {
  MAX_REQUEST_ALIASES_PER_OPERATION,
  RecordTooLargeError,
  type ActiveSlotStore,
  type RequestAlias,
  type SlotAlias,
  type SlotClaim,
} from '../../lambdas/operations/ports.ts';
import { checkExpiresAt, checkLimit, checkOwnerId, checkPartitionKey, utf8 } from './in-memory-store-checks.ts';

export interface InMemoryActiveSlotStoreOptions {
  /** The slot item's size limit, measured as DynamoDB does. */
  readonly maxItemBytes: number;
}

/** In-memory `ActiveSlotStore`; returns copies, so callers cannot mutate stored state. */
export class InMemoryActiveSlotStore implements ActiveSlotStore {
  readonly #slots = new Map<string, Set<string>>();
  /** Request aliases by owner (kept with the owner's slots, as the DynamoDB store keeps them on its slot item). */
  readonly #aliases = new Map<string, Map<string, RequestAlias>>();
  readonly #maxItemBytes: number;

  constructor(options: InMemoryActiveSlotStoreOptions) {
    this.#maxItemBytes = options.maxItemBytes;
  }

  async claimActiveSlot(ownerId: string, token: string, limit: number, alias?: SlotAlias): Promise<SlotClaim> {
    checkLimit(limit);
    if (alias && !alias.forget) checkExpiresAt(alias.expiresAt);
    const key = slotKey(ownerId);
    const tokens = this.#slots.get(key) ?? new Set<string>();
    const held = tokens.has(token);
    if (!held && tokens.size >= limit) return 'refused';
    if (!held) {
      tokens.add(token);
      this.#checkSlotsSize(ownerId, tokens, token);
      this.#slots.set(key, tokens);
    }
    if (alias?.forget) this.#aliases.get(key)?.delete(alias.requestId);
    else if (alias) this.#setAlias(ownerId, alias.requestId, { token, expiresAt: alias.expiresAt });
    return held ? 'already-held' : 'claimed';
  }

  async releaseActiveSlot(ownerId: string, token: string, _requestId?: string): Promise<void> {
    const key = slotKey(ownerId);
    const tokens = this.#slots.get(key);
    tokens?.delete(token);
    const aliases = this.#aliases.get(key);
    // Every alias still naming the token goes with its slot (the request id's among them).
    for (const [id, alias] of aliases ?? []) if (alias.token === token) aliases?.delete(id);
    if (tokens?.size === 0) {
      // The slot item goes, and the aliases kept on it with it.
      this.#slots.delete(key);
      this.#aliases.delete(key);
    }
  }

  async listActiveSlots(ownerId: string): Promise<string[]> {
    return [...(this.#slots.get(slotKey(ownerId)) ?? [])].sort();
  }

  async putRequestAlias(ownerId: string, requestId: string, alias: RequestAlias): Promise<void> {
    checkExpiresAt(alias.expiresAt);
    checkOwnerId(ownerId);
    // Only while the token holds its slot; last writer wins (JSON-RPC ids repeat across connections).
    if (!this.#slots.get(slotKey(ownerId))?.has(alias.token)) return;
    this.#setAlias(ownerId, requestId, alias);
  }

  async deleteRequestAlias(ownerId: string, requestId: string): Promise<void> {
    this.#aliases.get(slotKey(ownerId))?.delete(requestId);
  }

  async findRequestAlias(ownerId: string, requestId: string): Promise<RequestAlias | undefined> {
    const alias = this.#aliases.get(slotKey(ownerId))?.get(requestId);
    return alias && { ...alias };
  }

  /** Sets an alias, newest last; the token keeps its newest MAX_REQUEST_ALIASES_PER_OPERATION, as the DynamoDB store does. */
  #setAlias(ownerId: string, requestId: string, alias: RequestAlias): void {
    const aliases = this.#aliasesOf(ownerId);
    aliases.delete(requestId);
    aliases.set(requestId, { token: alias.token, expiresAt: alias.expiresAt });
    const own = [...aliases].filter(([, kept]) => kept.token === alias.token).map(([id]) => id);
    for (const id of own.slice(0, Math.max(0, own.length - MAX_REQUEST_ALIASES_PER_OPERATION))) aliases.delete(id);
  }

  #aliasesOf(ownerId: string): Map<string, RequestAlias> {
    checkOwnerId(ownerId);
    const key = slotKey(ownerId);
    let aliases = this.#aliases.get(key);
    if (!aliases) {
      aliases = new Map();
      this.#aliases.set(key, aliases);
    }
    return aliases;
  }

  #checkSlotsSize(ownerId: string, tokens: Set<string>, added: string): void {
    const bytes = utf8(`ACTIVE#${ownerId}`) + utf8('pk') + utf8('tokens') + [...tokens].reduce((sum, t) => sum + utf8(t), 0);
    if (bytes > this.#maxItemBytes) {
      tokens.delete(added);
      throw new RecordTooLargeError();
    }
  }
}

function slotKey(ownerId: string): string {
  checkOwnerId(ownerId);
  checkPartitionKey('ACTIVE', ownerId);
  return ownerId;
}
