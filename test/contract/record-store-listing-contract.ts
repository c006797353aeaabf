/**
 * The RecordStore contract, listing cases. `listByOwner` is served by a global
 * secondary index, which DynamoDB updates eventually: every case first waits until
 * the last write it made is listed (writes reach the index in order), then asserts.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { OperationStatus } from '../../lambdas/operations/operation.ts';
import type { RecordStore } from '../../lambdas/operations/ports.ts';
import { OTHER_OWNER, OWNER, fullRecord, makeRecord, useStore, type ContractOptions, type MakeStore } from './record-store-fixtures.ts';

export function describeListingCases(makeStore: MakeStore, options: ContractOptions): void {
  describe('listByOwner', () => {
    const current = useStore(makeStore);
    let store: RecordStore;
    beforeEach(() => {
      store = current();
    });

    async function listAll(ownerId: string, limit: number): Promise<{ tokens: string[]; pages: number[] }> {
      const tokens: string[] = [];
      const pages: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listByOwner(ownerId, { limit, cursor });
        tokens.push(...page.items.map((item) => item.token));
        pages.push(page.items.length);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return { tokens, pages };
    }

    /** Waits until the index shows `token` of `ownerId` (with `status`, when given). */
    async function waitUntilListed(ownerId: string, token: string, status?: OperationStatus): Promise<void> {
      await expect
        .poll(async () => {
          const { items } = await store.listByOwner(ownerId, { limit: 1000 });
          const listed = items.find((item) => item.token === token);
          return listed !== undefined && (status === undefined || listed.status === status);
        })
        .toBe(true);
    }

    it('returns an empty last page for an owner without records', async () => {
      expect(await store.listByOwner(OWNER, { limit: 5 })).toEqual({ items: [] });
    });

    it('lists newest first, with full records', async () => {
      const records = [3, 1, 2].map((n) => fullRecord({ token: `t${n}`, createdAt: 1_000 + n }));
      for (const record of records) await store.create(record);
      await waitUntilListed(OWNER, 't2');
      const page = await store.listByOwner(OWNER, { limit: 10 });
      expect(page.items.map((item) => item.token)).toEqual(['t3', 't2', 't1']);
      expect(page.items[0]).toEqual(records[0]);
      expect(page.nextCursor).toBeUndefined();
    });

    it('orders records created in the same millisecond by token, deterministically', async () => {
      for (const token of ['b', 'c', 'a']) await store.create(makeRecord({ token, createdAt: 7 }));
      await waitUntilListed(OWNER, 'a');
      expect((await listAll(OWNER, 2)).tokens).toEqual(['c', 'b', 'a']);
    });

    it('orders by time, not by the digits of the timestamp as text', async () => {
      await store.create(makeRecord({ token: 'old', createdAt: 9 }));
      await store.create(makeRecord({ token: 'new', createdAt: 10 }));
      await store.create(makeRecord({ token: 'newest', createdAt: 1_760_000_000_000 }));
      await waitUntilListed(OWNER, 'newest');
      expect((await listAll(OWNER, 10)).tokens).toEqual(['newest', 'new', 'old']);
    });

    it('paginates across pages with a cursor; the last page has no cursor', async () => {
      for (let n = 0; n < 7; n++) await store.create(makeRecord({ token: `t${n}`, createdAt: 100 + n }));
      await waitUntilListed(OWNER, 't6');
      const { tokens, pages } = await listAll(OWNER, 3);
      expect(tokens).toEqual(['t6', 't5', 't4', 't3', 't2', 't1', 't0']);
      expect(pages).toEqual([3, 3, 1]);
    });

    it('gives no cursor when the owner has exactly a multiple of the limit', async () => {
      for (let n = 0; n < 4; n++) await store.create(makeRecord({ token: `t${n}`, createdAt: 100 + n }));
      await waitUntilListed(OWNER, 't3');
      expect((await listAll(OWNER, 2)).pages).toEqual([2, 2]);
      expect((await store.listByOwner(OWNER, { limit: 4 })).nextCursor).toBeUndefined();
    });

    it("never shows other owners' records", async () => {
      await store.create(makeRecord({ token: 'mine' }));
      await store.create(makeRecord({ ownerId: OTHER_OWNER, token: 'theirs' }));
      await store.create(makeRecord({ ownerId: `${OWNER}-suffix`, token: 'prefix-neighbour' }));
      await waitUntilListed(`${OWNER}-suffix`, 'prefix-neighbour');
      expect((await listAll(OWNER, 1)).tokens).toEqual(['mine']);
      expect((await listAll(OTHER_OWNER, 1)).tokens).toEqual(['theirs']);
    });

    it('does not list request aliases or active-operation slots', async () => {
      await store.create(makeRecord());
      await store.putRequestAlias(OWNER, 'request-1', { token: 'token-1', expiresAt: 2_000_000_000 });
      await store.putRequestAlias(OWNER, 'request-2', { token: 'token-unknown', expiresAt: 2_000_000_000 });
      expect(await store.claimActiveSlot(OWNER, 'token-1', 10)).toBe('claimed');
      const later = makeRecord({ token: 'token-2', createdAt: makeRecord().createdAt + 1 });
      await store.create(later);
      await waitUntilListed(OWNER, 'token-2');
      expect(await store.listByOwner(OWNER, { limit: 10 })).toEqual({ items: [later, makeRecord()] });
    });

    it('reflects transitions in listed records', async () => {
      await store.create(makeRecord());
      await store.transition(makeRecord(), ['submitted'], { status: 'working', updatedAt: 2 });
      await waitUntilListed(OWNER, 'token-1', 'working');
      expect((await store.listByOwner(OWNER, { limit: 1 })).items).toEqual([makeRecord({ status: 'working', updatedAt: 2 })]);
    });

    it('accepts a cursor again (stateless), and newer records do not shift later pages', async () => {
      for (let n = 0; n < 5; n++) await store.create(makeRecord({ token: `t${n}`, createdAt: 100 + n }));
      await waitUntilListed(OWNER, 't4');
      const first = await store.listByOwner(OWNER, { limit: 2 });
      expect(typeof first.nextCursor).toBe('string');
      const cursor = first.nextCursor as string;
      const second = await store.listByOwner(OWNER, { limit: 2, cursor });
      await store.create(makeRecord({ token: 'later', createdAt: 999 }));
      await waitUntilListed(OWNER, 'later');
      const again = await store.listByOwner(OWNER, { limit: 2, cursor });
      expect(again).toEqual(second);
      expect(second.items.map((item) => item.token)).toEqual(['t2', 't1']);
    });

    it('rejects a malformed cursor with InvalidCursorError', async () => {
      await store.create(makeRecord());
      const malformed = [
        '',
        'not base64!',
        Buffer.from('not json').toString('base64url'),
        Buffer.from('null').toString('base64url'),
        Buffer.from('[1,2]').toString('base64url'),
        Buffer.from('{"pk":{"S":"x"}}').toString('base64url'),
        Buffer.from('{}').toString('base64url'),
      ];
      for (const cursor of malformed) {
        await expect(store.listByOwner(OWNER, { limit: 1, cursor }), cursor).rejects.toMatchObject({ name: 'InvalidCursorError' });
      }
    });

    it("rejects another owner's cursor with InvalidCursorError", async () => {
      for (let n = 0; n < 2; n++) await store.create(makeRecord({ ownerId: OTHER_OWNER, token: `t${n}`, createdAt: n }));
      await store.create(makeRecord());
      await waitUntilListed(OTHER_OWNER, 't1');
      const theirs = await store.listByOwner(OTHER_OWNER, { limit: 1 });
      expect(theirs.nextCursor).toBeDefined();
      await expect(store.listByOwner(OWNER, { limit: 1, cursor: theirs.nextCursor })).rejects.toMatchObject({
        name: 'InvalidCursorError',
      });
    });

    it('rejects a limit that is not a positive integer', async () => {
      for (const limit of [0, -1, 1.5, Number.NaN]) {
        await expect(store.listByOwner(OWNER, { limit })).rejects.toThrow(RangeError);
      }
    });

    it('rejects an owner id containing "#"', async () => {
      await expect(store.listByOwner('owner#x', { limit: 1 })).rejects.toThrow(RangeError);
    });

    if (options.indexLagMs !== undefined) {
      it('lists a new record only once the index catches up, while get sees it at once', async () => {
        await store.create(makeRecord());
        expect(await store.get(makeRecord())).toEqual(makeRecord());
        expect((await store.listByOwner(OWNER, { limit: 10 })).items).toEqual([]);
        await expect.poll(async () => (await store.listByOwner(OWNER, { limit: 10 })).items).toEqual([makeRecord()]);
      });

      it('lists a transition only once the index catches up, while get and transition see it at once', async () => {
        await store.create(makeRecord());
        await waitUntilListed(OWNER, 'token-1');
        const working = await store.transition(makeRecord(), ['submitted'], { status: 'working', updatedAt: 2 });
        expect(await store.get(makeRecord())).toEqual(working);
        expect(await store.transition(makeRecord(), ['submitted'], { status: 'canceled' })).toBeUndefined();
        expect((await store.listByOwner(OWNER, { limit: 10 })).items).toEqual([makeRecord()]);
        await expect.poll(async () => (await store.listByOwner(OWNER, { limit: 10 })).items).toEqual([working]);
      });
    }
  });
}
