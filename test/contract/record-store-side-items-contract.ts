/**
 * The RecordStore contract, side items: the `ActiveSlotStore` half (active-operation slots
 * and the request aliases kept with them), which runs against a store of that half alone
 * too, and the execution pointers and log levels kept beside the records.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { ActiveSlotStore, RecordStore } from '../../lambdas/operations/ports.ts';
import { OTHER_OWNER, OWNER, makeRecord, useStore, type MakeStore, type MakeStoreOf } from './record-store-fixtures.ts';

const LATER = 2_000_000_000;

/** The `ActiveSlotStore` half: the owner's slot item, its slots and its request aliases. */
export function describeSlotItemCases(makeStore: MakeStoreOf<ActiveSlotStore>): void {
  const current = useStore(makeStore);
  let store: ActiveSlotStore;
  beforeEach(() => {
    store = current();
  });

  describe('request aliases', () => {
    // Aliases are kept only while their token holds an active slot (see the next group).
    beforeEach(async () => {
      for (const token of ['token-1', 'token-2', 'token-number', 'token-string', 'token-9']) await store.claimActiveSlot(OWNER, token, 10);
      await store.claimActiveSlot(OTHER_OWNER, 'token-9', 10);
    });

    it('finds the token and expiry a request id started', async () => {
      await store.putRequestAlias(OWNER, 'request-1', { token: 'token-1', expiresAt: LATER });
      expect(await store.findRequestAlias(OWNER, 'request-1')).toEqual({ token: 'token-1', expiresAt: LATER });
    });

    it('returns undefined for an unknown request id', async () => {
      expect(await store.findRequestAlias(OWNER, 'request-unknown')).toBeUndefined();
    });

    it("returns undefined for another owner's request id", async () => {
      await store.putRequestAlias(OWNER, 'request-1', { token: 'token-1', expiresAt: LATER });
      expect(await store.findRequestAlias(OTHER_OWNER, 'request-1')).toBeUndefined();
    });

    it('lets the latest alias for a request id win (JSON-RPC ids repeat across connections)', async () => {
      await store.putRequestAlias(OWNER, '1', { token: 'token-1', expiresAt: LATER });
      await store.putRequestAlias(OWNER, '1', { token: 'token-2', expiresAt: LATER + 5 });
      expect(await store.findRequestAlias(OWNER, '1')).toEqual({ token: 'token-2', expiresAt: LATER + 5 });
    });

    it('keeps typed request ids apart: the number 7 and the string "7" are two ids', async () => {
      // The edge encodes the JSON type into the id; the store must keep the encodings distinct.
      await store.putRequestAlias(OWNER, 'n:7', { token: 'token-number', expiresAt: LATER });
      await store.putRequestAlias(OWNER, 's:7', { token: 'token-string', expiresAt: LATER });
      expect((await store.findRequestAlias(OWNER, 'n:7'))?.token).toBe('token-number');
      expect((await store.findRequestAlias(OWNER, 's:7'))?.token).toBe('token-string');
    });

    it('returns an expired alias as stored: expiry is for the caller to judge', async () => {
      await store.putRequestAlias(OWNER, 'old', { token: 'token-1', expiresAt: 1 });
      expect(await store.findRequestAlias(OWNER, 'old')).toEqual({ token: 'token-1', expiresAt: 1 });
    });

    it('forgets a deleted alias, and deleting an absent one is harmless', async () => {
      await store.putRequestAlias(OWNER, 'request-1', { token: 'token-1', expiresAt: LATER });
      await store.putRequestAlias(OTHER_OWNER, 'request-1', { token: 'token-9', expiresAt: LATER });
      await store.deleteRequestAlias(OWNER, 'request-1');
      expect(await store.findRequestAlias(OWNER, 'request-1')).toBeUndefined();
      await expect(store.deleteRequestAlias(OWNER, 'request-1')).resolves.toBeUndefined();
      await expect(store.deleteRequestAlias(OWNER, 'never-written')).resolves.toBeUndefined();
      expect((await store.findRequestAlias(OTHER_OWNER, 'request-1'))?.token).toBe('token-9');
    });

    it('rejects an owner id containing "#"', async () => {
      await expect(store.putRequestAlias('owner#x', 'r', { token: 't', expiresAt: LATER })).rejects.toThrow(RangeError);
      await expect(store.findRequestAlias('owner#x', 'r')).rejects.toThrow(RangeError);
    });
  });

  describe('request aliases kept with the slots', () => {
    it('keeps no alias for a token that holds no slot (its operation is over: nothing to cancel)', async () => {
      await store.putRequestAlias(OWNER, 'request-1', { token: 'token-1', expiresAt: LATER });
      expect(await store.findRequestAlias(OWNER, 'request-1')).toBeUndefined();
    });

    it('a claim records the alias in the same write, and a refused claim records none', async () => {
      expect(await store.claimActiveSlot(OWNER, 'token-1', 1, { requestId: 'n:1', expiresAt: LATER })).toBe('claimed');
      expect(await store.findRequestAlias(OWNER, 'n:1')).toEqual({ token: 'token-1', expiresAt: LATER });
      expect(await store.claimActiveSlot(OWNER, 'token-2', 1, { requestId: 'n:2', expiresAt: LATER })).toBe('refused');
      expect(await store.findRequestAlias(OWNER, 'n:2')).toBeUndefined();
    });

    it('a claim for a call that cannot be cancelled by id forgets the id’s alias in the same write, a retried claim too, and a refused claim forgets nothing', async () => {
      await store.claimActiveSlot(OWNER, 'token-1', 3, { requestId: 'n:1', expiresAt: LATER });
      await store.claimActiveSlot(OWNER, 'token-2', 3, { requestId: 'n:2', expiresAt: LATER });
      expect(await store.claimActiveSlot(OWNER, 'token-3', 3, { requestId: 'n:1', forget: true })).toBe('claimed');
      expect(await store.findRequestAlias(OWNER, 'n:1')).toBeUndefined();
      // A retry of a start whose slot is held: the id it came with is forgotten all the same.
      expect(await store.claimActiveSlot(OWNER, 'token-3', 3, { requestId: 'n:2', forget: true })).toBe('already-held');
      expect(await store.findRequestAlias(OWNER, 'n:2')).toBeUndefined();
      await store.putRequestAlias(OWNER, 'n:4', { token: 'token-1', expiresAt: LATER });
      expect(await store.claimActiveSlot(OWNER, 'token-4', 3, { requestId: 'n:4', forget: true })).toBe('refused');
      expect(await store.findRequestAlias(OWNER, 'n:4')).toEqual({ token: 'token-1', expiresAt: LATER });
      // An id never aliased is no error, and the slot is still taken.
      await store.releaseActiveSlot(OWNER, 'token-3');
      expect(await store.claimActiveSlot(OWNER, 'token-5', 3, { requestId: 'n:never', forget: true })).toBe('claimed');
      expect(await store.listActiveSlots(OWNER)).toEqual(['token-1', 'token-2', 'token-5']);
    });

    it('a release with the request id drops the alias only while it still names the token', async () => {
      await store.claimActiveSlot(OWNER, 'token-1', 5, { requestId: 'n:1', expiresAt: LATER });
      await store.claimActiveSlot(OWNER, 'token-2', 5, { requestId: 'n:1', expiresAt: LATER });
      await store.claimActiveSlot(OWNER, 'token-3', 5, { requestId: 'n:3', expiresAt: LATER });
      // token-2's call took id 1 over: token-1's release leaves it, and still frees token-1's slot.
      await store.releaseActiveSlot(OWNER, 'token-1', 'n:1');
      expect(await store.findRequestAlias(OWNER, 'n:1')).toEqual({ token: 'token-2', expiresAt: LATER });
      expect(await store.listActiveSlots(OWNER)).toEqual(['token-2', 'token-3']);
      await store.releaseActiveSlot(OWNER, 'token-2', 'n:1');
      expect(await store.findRequestAlias(OWNER, 'n:1')).toBeUndefined();
      expect(await store.findRequestAlias(OWNER, 'n:3')).toEqual({ token: 'token-3', expiresAt: LATER });
    });

    it('keeps only the newest few ids of one operation: retries under new ids never grow the slot item', async () => {
      await store.claimActiveSlot(OWNER, 'token-1', 5, { requestId: 'n:0', expiresAt: LATER });
      for (let n = 1; n < 10; n++) await store.putRequestAlias(OWNER, `n:${n}`, { token: 'token-1', expiresAt: LATER });
      const kept = [];
      for (let n = 0; n < 10; n++) if (await store.findRequestAlias(OWNER, `n:${n}`)) kept.push(n);
      expect(kept).toEqual([6, 7, 8, 9]);
      // The same id again is one id, refreshed, not a new one.
      await store.putRequestAlias(OWNER, 'n:6', { token: 'token-1', expiresAt: LATER + 1 });
      expect(await store.findRequestAlias(OWNER, 'n:6')).toEqual({ token: 'token-1', expiresAt: LATER + 1 });
      expect(await store.findRequestAlias(OWNER, 'n:7')).toEqual({ token: 'token-1', expiresAt: LATER });
    });

    it('an id that falls off one operation’s list stays with the operation whose call took it since', async () => {
      await store.claimActiveSlot(OWNER, 'token-1', 5, { requestId: 'n:1', expiresAt: LATER });
      await store.claimActiveSlot(OWNER, 'token-2', 5, { requestId: 'n:9', expiresAt: LATER });
      await store.putRequestAlias(OWNER, 'n:1', { token: 'token-2', expiresAt: LATER });
      for (let n = 2; n < 6; n++) await store.putRequestAlias(OWNER, `n:${n}`, { token: 'token-1', expiresAt: LATER });
      expect(await store.findRequestAlias(OWNER, 'n:1')).toEqual({ token: 'token-2', expiresAt: LATER });
      expect(await store.findRequestAlias(OWNER, 'n:5')).toEqual({ token: 'token-1', expiresAt: LATER });
    });

    it('a release forgets every alias that still names the token, while other slots are held', async () => {
      await store.claimActiveSlot(OWNER, 'token-1', 5, { requestId: 'n:1', expiresAt: LATER });
      await store.claimActiveSlot(OWNER, 'token-2', 5, { requestId: 'n:8', expiresAt: LATER });
      await store.putRequestAlias(OWNER, 'n:2', { token: 'token-1', expiresAt: LATER });
      await store.putRequestAlias(OWNER, 'n:3', { token: 'token-1', expiresAt: LATER });
      await store.putRequestAlias(OWNER, 'n:3', { token: 'token-2', expiresAt: LATER });
      await store.releaseActiveSlot(OWNER, 'token-1', 'n:1');
      expect(await store.findRequestAlias(OWNER, 'n:1')).toBeUndefined();
      expect(await store.findRequestAlias(OWNER, 'n:2')).toBeUndefined();
      expect(await store.findRequestAlias(OWNER, 'n:3')).toEqual({ token: 'token-2', expiresAt: LATER });
      expect(await store.findRequestAlias(OWNER, 'n:8')).toEqual({ token: 'token-2', expiresAt: LATER });
    });

    it('once the owner holds no slot, every alias kept with the slots is gone', async () => {
      await store.claimActiveSlot(OWNER, 'token-1', 5, { requestId: 'n:1', expiresAt: LATER });
      await store.putRequestAlias(OWNER, 'n:7', { token: 'token-1', expiresAt: LATER });
      await store.releaseActiveSlot(OWNER, 'token-1');
      expect(await store.listActiveSlots(OWNER)).toEqual([]);
      expect(await store.findRequestAlias(OWNER, 'n:1')).toBeUndefined();
      expect(await store.findRequestAlias(OWNER, 'n:7')).toBeUndefined();
    });
  });

  describe('active-operation slots', () => {
    it('claims a free slot, and claiming it again with the same token is already-held, not a second slot', async () => {
      expect(await store.claimActiveSlot(OWNER, 'token-1', 2)).toBe('claimed');
      expect(await store.claimActiveSlot(OWNER, 'token-1', 2)).toBe('already-held');
      expect(await store.listActiveSlots(OWNER)).toEqual(['token-1']);
      expect(await store.claimActiveSlot(OWNER, 'token-2', 2)).toBe('claimed');
    });

    it('refuses a new token once the limit is reached, but still answers already-held for a holder', async () => {
      expect(await store.claimActiveSlot(OWNER, 'token-1', 2)).toBe('claimed');
      expect(await store.claimActiveSlot(OWNER, 'token-2', 2)).toBe('claimed');
      expect(await store.claimActiveSlot(OWNER, 'token-3', 2)).toBe('refused');
      expect(await store.claimActiveSlot(OWNER, 'token-2', 2)).toBe('already-held');
      expect((await store.listActiveSlots(OWNER)).sort()).toEqual(['token-1', 'token-2']);
    });

    it('respects the limit under 30 concurrent claims of distinct tokens: exactly 10 are claimed', async () => {
      const tokens = Array.from({ length: 30 }, (_, n) => `token-${n}`);
      const claims = await Promise.all(tokens.map((token) => store.claimActiveSlot(OWNER, token, 10)));
      expect(claims.filter((claim) => claim === 'claimed')).toHaveLength(10);
      expect(claims.filter((claim) => claim === 'refused')).toHaveLength(20);
      const held = tokens.filter((_, n) => claims[n] === 'claimed').sort();
      expect((await store.listActiveSlots(OWNER)).sort()).toEqual(held);
    });

    it('frees a slot on release, so the next start gets it', async () => {
      expect(await store.claimActiveSlot(OWNER, 'token-1', 1)).toBe('claimed');
      expect(await store.claimActiveSlot(OWNER, 'token-2', 1)).toBe('refused');
      await store.releaseActiveSlot(OWNER, 'token-1');
      expect(await store.listActiveSlots(OWNER)).toEqual([]);
      expect(await store.claimActiveSlot(OWNER, 'token-2', 1)).toBe('claimed');
      expect(await store.listActiveSlots(OWNER)).toEqual(['token-2']);
    });

    it('releases idempotently: twice, an unknown token, or an owner with no slots changes nothing else', async () => {
      expect(await store.claimActiveSlot(OWNER, 'token-1', 5)).toBe('claimed');
      await store.releaseActiveSlot(OWNER, 'token-unknown');
      expect(await store.listActiveSlots(OWNER)).toEqual(['token-1']);
      await store.releaseActiveSlot(OWNER, 'token-1');
      await store.releaseActiveSlot(OWNER, 'token-1');
      await store.releaseActiveSlot(OTHER_OWNER, 'token-1');
      expect(await store.listActiveSlots(OWNER)).toEqual([]);
      expect(await store.listActiveSlots(OTHER_OWNER)).toEqual([]);
    });

    it("keeps owners apart: one owner's full slots do not limit another", async () => {
      expect(await store.claimActiveSlot(OWNER, 'token-1', 1)).toBe('claimed');
      expect(await store.claimActiveSlot(OWNER, 'token-2', 1)).toBe('refused');
      expect(await store.claimActiveSlot(OTHER_OWNER, 'token-2', 1)).toBe('claimed');
      expect(await store.claimActiveSlot(OTHER_OWNER, 'token-1', 1)).toBe('refused');
      await store.releaseActiveSlot(OTHER_OWNER, 'token-1');
      expect(await store.listActiveSlots(OWNER)).toEqual(['token-1']);
      expect(await store.listActiveSlots(OTHER_OWNER)).toEqual(['token-2']);
    });

    it('lists no slots for an owner that never claimed one', async () => {
      expect(await store.listActiveSlots(OWNER)).toEqual([]);
    });

    it('rejects a limit that is not a positive integer, and an owner id containing "#"', async () => {
      for (const limit of [0, -1, 1.5, Number.NaN]) {
        await expect(store.claimActiveSlot(OWNER, 'token-1', limit)).rejects.toThrow(RangeError);
      }
      await expect(store.claimActiveSlot('owner#x', 'token-1', 1)).rejects.toThrow(RangeError);
      expect(await store.listActiveSlots(OWNER)).toEqual([]);
    });
  });
}

/** The items beside the records, and the slot item beside the records: the whole store. */
export function describeSideItemCases(makeStore: MakeStore): void {
  const current = useStore(makeStore);
  let store: RecordStore;
  beforeEach(() => {
    store = current();
  });

  describe('execution pointers', () => {
    it('finds the operation an execution runs, by the execution name alone', async () => {
      await store.putExecutionPointer('op-abc', { ownerId: OWNER, token: 'token-1' }, LATER);
      expect(await store.findExecutionPointer('op-abc')).toEqual({ ownerId: OWNER, token: 'token-1', expiresAt: LATER });
      expect(await store.findExecutionPointer('op-other')).toBeUndefined();
    });

    it('returns an expired pointer as stored, and never lists pointers', async () => {
      await store.putExecutionPointer('op-old', { ownerId: OWNER, token: 'token-2' }, 1);
      expect(await store.findExecutionPointer('op-old')).toEqual({ ownerId: OWNER, token: 'token-2', expiresAt: 1 });
      expect((await store.listByOwner(OWNER, { limit: 10 })).items).toEqual([]);
    });
  });

  describe('log levels', () => {
    it("keeps the owner's last log level, per owner, and never lists it", async () => {
      await store.putLogLevel(OWNER, 'debug', LATER);
      await store.putLogLevel(OWNER, 'warning', LATER);
      expect(await store.findLogLevel(OWNER)).toEqual({ level: 'warning', expiresAt: LATER });
      expect(await store.findLogLevel(OTHER_OWNER)).toBeUndefined();
      expect((await store.listByOwner(OWNER, { limit: 10 })).items).toEqual([]);
    });
  });

  describe('request aliases beside the records', () => {
    // As in the slot item's cases: aliases are kept only while their token holds a slot.
    beforeEach(async () => {
      for (const token of ['token-1', 'token-2', 'token-number', 'token-string', 'token-9']) await store.claimActiveSlot(OWNER, token, 10);
      await store.claimActiveSlot(OTHER_OWNER, 'token-9', 10);
    });

    it('keeps aliases apart from operations with the same name', async () => {
      await store.putRequestAlias(OWNER, 'token-1', { token: 'token-9', expiresAt: LATER });
      expect(await store.get({ ownerId: OWNER, token: 'token-1' })).toBeUndefined();
      expect((await store.create(makeRecord())).created).toBe(true);
      expect((await store.findRequestAlias(OWNER, 'token-1'))?.token).toBe('token-9');
    });
  });

  describe('active-operation slots beside the records', () => {
    it('keeps slots apart from operations and aliases', async () => {
      expect(await store.claimActiveSlot(OWNER, 'token-1', 5)).toBe('claimed');
      expect(await store.get({ ownerId: OWNER, token: 'token-1' })).toBeUndefined();
      expect((await store.create(makeRecord())).created).toBe(true);
      await store.putRequestAlias(OWNER, 'token-1', { token: 'token-1', expiresAt: LATER });
      await store.putRequestAlias(OWNER, 'tokens', { token: 'token-1', expiresAt: LATER });
      expect(await store.listActiveSlots(OWNER)).toEqual(['token-1']);
      expect(await store.claimActiveSlot(OWNER, 'token-2', 5)).toBe('claimed');
      expect(await store.listActiveSlots(OWNER)).toEqual(['token-1', 'token-2']);
    });
  });
}
