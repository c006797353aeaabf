/**
 * The RecordStore contract: one suite that every store implementation must pass,
 * run against the in-memory store and against DynamoDB (dynalite).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import type { RecordStore } from '../../lambdas/operations/ports.ts';

export interface RecordStoreFixture {
  store: RecordStore;
  cleanup(): Promise<void>;
}

const OWNER = 'owner-a';
const OTHER_OWNER = 'owner-b';

function makeRecord(overrides: Partial<OperationRecord> = {}): OperationRecord {
  return {
    ownerId: OWNER,
    token: 'token-1',
    tool: 'slow-echo',
    argumentsHash: 'sha256-of-arguments',
    dialect: 'sep-1391',
    status: 'submitted',
    executionName: 'exec-token-1',
    createdAt: 1_760_000_000_000,
    updatedAt: 1_760_000_000_000,
    keepAliveSeconds: 3600,
    pollIntervalSeconds: 5,
    ...overrides,
  };
}

/** Every optional field set, with JSON that exercises the encoding. */
function fullRecord(overrides: Partial<OperationRecord> = {}): OperationRecord {
  return makeRecord({
    status: 'completed',
    statusMessage: '',
    executionArn: 'arn:aws:states:us-east-1:123456789012:execution:slow-echo:exec-token-1',
    completedAt: 1_760_000_005_000,
    expiresAt: 1_760_003_605,
    requestId: '42',
    outcome: {
      kind: 'result',
      output: {
        empty: '',
        floats: [0.1, -2.5, 1e-7, 1.7976931348623157e308, 5e-324],
        integers: [0, -1, 9007199254740991],
        nested: { a: null, b: [null, { c: null }], d: {}, e: [] },
        unicode: 'héllo 🌍 \u0000 "quoted" \\ back',
        'key.with#odd:chars': true,
      },
    },
    dialectState: { original: { content: [{ type: 'text', text: '' }] }, n: 0, none: null },
    ...overrides,
  });
}

/** Keys present on an object, sorted: tells a missing field from one set to `undefined`. */
function keysOf(value: object): string[] {
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k)
    .sort();
}

/** Runs the RecordStore contract against the store `makeStore` builds (a fresh, empty one per test). */
export function describeRecordStoreContract(
  name: string,
  makeStore: () => Promise<RecordStoreFixture>,
): void {
  describe(`RecordStore contract: ${name}`, () => {
    let fixture: RecordStoreFixture;
    let store: RecordStore;

    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture.cleanup();
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

    describe('create', () => {
      it('creates a new record and returns it', async () => {
        const record = makeRecord();
        expect(await store.create(record)).toEqual({ created: true, record });
        expect(await store.get(record)).toEqual(record);
      });

      it('never overwrites an existing token: returns the existing record instead', async () => {
        const first = makeRecord();
        await store.create(first);
        const retry = makeRecord({ argumentsHash: 'different-arguments', tool: 'other-tool', status: 'working' });
        expect(await store.create(retry)).toEqual({ created: false, existing: first });
        expect(await store.get(first)).toEqual(first);
      });

      it('returns the existing record with its current state after transitions', async () => {
        await store.create(makeRecord());
        const working = await store.transition(makeRecord(), ['submitted'], { status: 'working', updatedAt: 2 });
        expect(await store.create(makeRecord())).toEqual({ created: false, existing: working });
      });

      it('keeps the same token of different owners apart', async () => {
        const mine = makeRecord();
        const theirs = makeRecord({ ownerId: OTHER_OWNER, tool: 'their-tool' });
        expect((await store.create(mine)).created).toBe(true);
        expect((await store.create(theirs)).created).toBe(true);
        expect(await store.get(mine)).toEqual(mine);
        expect(await store.get(theirs)).toEqual(theirs);
      });

      it('stores a copy: mutating the input or the result later does not change the stored record', async () => {
        const record = fullRecord();
        const result = await store.create(record);
        record.status = 'failed';
        (record.dialectState as Record<string, unknown>).n = 99;
        if (result.created) {
          result.record.tool = 'mutated';
          (result.record.dialectState as Record<string, unknown>).none = 'mutated';
        }
        expect(await store.get(record)).toEqual(fullRecord());
      });

      it('accepts tokens containing "#" and keeps them distinct', async () => {
        await store.create(makeRecord({ token: 'a#b' }));
        await store.create(makeRecord({ token: 'a', tool: 'plain' }));
        expect((await store.get({ ownerId: OWNER, token: 'a#b' }))?.tool).toBe('slow-echo');
        expect((await store.get({ ownerId: OWNER, token: 'a' }))?.tool).toBe('plain');
      });

      it('rejects an owner id containing "#", which would make keys ambiguous', async () => {
        await expect(store.create(makeRecord({ ownerId: 'owner#x' }))).rejects.toThrow(RangeError);
      });
    });

    describe('get and round trips', () => {
      it('returns undefined for an unknown token', async () => {
        expect(await store.get({ ownerId: OWNER, token: 'missing' })).toBeUndefined();
      });

      it("returns undefined for another owner's token", async () => {
        await store.create(makeRecord());
        expect(await store.get({ ownerId: OTHER_OWNER, token: 'token-1' })).toBeUndefined();
      });

      it('round-trips every field, outcome and dialectState JSON exactly', async () => {
        const record = fullRecord();
        await store.create(record);
        const stored = await store.get(record);
        expect(stored).toEqual(record);
        expect(stored && keysOf(stored)).toEqual(keysOf(record));
        expect(JSON.stringify(stored?.outcome)).toBe(JSON.stringify(record.outcome));
      });

      it('round-trips tool-error and protocol-error outcomes', async () => {
        const toolError = fullRecord({ token: 't-tool', status: 'failed', outcome: { kind: 'tool-error', error: 'States.TaskFailed', cause: '' } });
        const protocolError = fullRecord({
          token: 't-proto',
          status: 'failed',
          outcome: { kind: 'protocol-error', code: -32602, message: 'bad input', data: { field: null, values: [1.5, ''] } },
        });
        await store.create(toolError);
        await store.create(protocolError);
        expect(await store.get(toolError)).toEqual(toolError);
        expect(await store.get(protocolError)).toEqual(protocolError);
      });

      it('round-trips a result whose output is a bare string, number, null or array', async () => {
        for (const [index, output] of (['', 0.5, null, [null, '']] as unknown[]).entries()) {
          const record = makeRecord({ token: `bare-${index}`, outcome: { kind: 'result', output } });
          await store.create(record);
          expect((await store.get(record))?.outcome).toEqual({ kind: 'result', output });
        }
      });

      it('round-trips keepAliveSeconds: null (unlimited) as null', async () => {
        const record = makeRecord({ keepAliveSeconds: null });
        await store.create(record);
        const stored = await store.get(record);
        expect(stored?.keepAliveSeconds).toBeNull();
        expect(stored).toHaveProperty('keepAliveSeconds', null);
      });

      it('leaves absent optional fields absent', async () => {
        const record = makeRecord();
        await store.create(record);
        const stored = await store.get(record);
        expect(stored && keysOf(stored)).toEqual(keysOf(record));
        expect(stored && Object.keys(stored).sort()).toEqual(Object.keys(record).sort());
      });

      it('returns copies: mutating a read does not change the stored record', async () => {
        await store.create(fullRecord());
        const first = await store.get(fullRecord());
        if (first?.outcome?.kind === 'result') (first.outcome.output as Record<string, unknown>).empty = 'mutated';
        expect(await store.get(fullRecord())).toEqual(fullRecord());
      });
    });

    describe('transition', () => {
      it('applies the changes while the status is one of `from` and returns the updated record', async () => {
        await store.create(makeRecord());
        const changes = { status: 'working' as const, executionArn: 'arn:exec', updatedAt: 1_760_000_001_000, statusMessage: 'started' };
        const updated = await store.transition(makeRecord(), ['submitted', 'working'], changes);
        expect(updated).toEqual({ ...makeRecord(), ...changes });
        expect(await store.get(makeRecord())).toEqual(updated);
      });

      it('returns undefined and changes nothing when the status is not one of `from`', async () => {
        await store.create(makeRecord());
        expect(await store.transition(makeRecord(), ['working', 'input_required'], { status: 'completed' })).toBeUndefined();
        expect(await store.get(makeRecord())).toEqual(makeRecord());
      });

      it('returns undefined for an empty `from` list', async () => {
        await store.create(makeRecord());
        expect(await store.transition(makeRecord(), [], { status: 'working' })).toBeUndefined();
        expect(await store.get(makeRecord())).toEqual(makeRecord());
      });

      it('returns undefined for an absent record and does not create it', async () => {
        const key = { ownerId: OWNER, token: 'missing' };
        expect(await store.transition(key, ['submitted'], { status: 'working', updatedAt: 1 })).toBeUndefined();
        expect(await store.get(key)).toBeUndefined();
        expect((await store.listByOwner(OWNER, { limit: 10 })).items).toEqual([]);
      });

      it("does not touch another owner's record with the same token", async () => {
        await store.create(makeRecord());
        const other = { ownerId: OTHER_OWNER, token: 'token-1' };
        expect(await store.transition(other, ['submitted'], { status: 'canceled' })).toBeUndefined();
        expect((await store.get(makeRecord()))?.status).toBe('submitted');
      });

      it('never overwrites a terminal state, so cancel after completion is a no-op', async () => {
        await store.create(makeRecord({ status: 'working' }));
        const outcome = { kind: 'result' as const, output: { answer: 42 } };
        const completed = await store.transition(makeRecord(), ['working'], { status: 'completed', outcome, completedAt: 5, expiresAt: 10 });
        expect(completed?.status).toBe('completed');
        const cancel = await store.transition(makeRecord(), ['submitted', 'working', 'input_required'], {
          status: 'canceled',
          outcome: { kind: 'tool-error', error: 'canceled' },
        });
        expect(cancel).toBeUndefined();
        expect(await store.get(makeRecord())).toEqual(completed);
      });

      it('lets only the first of two competing transitions win', async () => {
        await store.create(makeRecord({ status: 'working' }));
        const [a, b] = await Promise.all([
          store.transition(makeRecord(), ['working'], { status: 'completed', updatedAt: 2 }),
          store.transition(makeRecord(), ['working'], { status: 'canceled', updatedAt: 3 }),
        ]);
        expect([a, b].filter((result) => result !== undefined)).toHaveLength(1);
        const winner = a ?? b;
        expect(await store.get(makeRecord())).toEqual(winner);
      });

      it('clears an optional field set explicitly to undefined and leaves absent keys alone', async () => {
        await store.create(makeRecord({ status: 'input_required', statusMessage: 'waiting for input', executionArn: 'arn:exec' }));
        const updated = await store.transition(makeRecord(), ['input_required'], { status: 'working', statusMessage: undefined });
        expect(updated).toEqual(makeRecord({ status: 'working', executionArn: 'arn:exec' }));
        expect(updated && 'statusMessage' in updated).toBe(false);
        expect(await store.get(makeRecord())).toEqual(updated);
      });

      it('ignores undefined for required fields (status, updatedAt)', async () => {
        await store.create(makeRecord());
        const updated = await store.transition(makeRecord(), ['submitted'], { status: undefined, updatedAt: undefined, statusMessage: 'x' });
        expect(updated).toEqual(makeRecord({ statusMessage: 'x' }));
      });

      it('with no changes, returns the current record when the status matches and undefined otherwise', async () => {
        await store.create(makeRecord());
        expect(await store.transition(makeRecord(), ['submitted'], {})).toEqual(makeRecord());
        expect(await store.transition(makeRecord(), ['working'], {})).toBeUndefined();
      });

      it('round-trips outcome and dialectState JSON written by a transition', async () => {
        const done = fullRecord();
        await store.create(makeRecord({ status: 'working' }));
        const updated = await store.transition(makeRecord(), ['working'], {
          status: 'completed',
          outcome: done.outcome,
          dialectState: done.dialectState,
          completedAt: done.completedAt,
          expiresAt: done.expiresAt,
        });
        expect(updated?.outcome).toEqual(done.outcome);
        expect(updated?.dialectState).toEqual(done.dialectState);
        expect(JSON.stringify((await store.get(makeRecord()))?.outcome)).toBe(JSON.stringify(done.outcome));
      });

      it('returns a copy: mutating the result does not change the stored record', async () => {
        await store.create(makeRecord());
        const updated = await store.transition(makeRecord(), ['submitted'], { status: 'working', dialectState: { a: [1] } });
        (updated?.dialectState?.a as number[]).push(2);
        expect((await store.get(makeRecord()))?.dialectState).toEqual({ a: [1] });
      });
    });

    describe('listByOwner', () => {
      it('returns an empty last page for an owner without records', async () => {
        expect(await store.listByOwner(OWNER, { limit: 5 })).toEqual({ items: [] });
      });

      it('lists newest first, with full records', async () => {
        const records = [3, 1, 2].map((n) => fullRecord({ token: `t${n}`, createdAt: 1_000 + n }));
        for (const record of records) await store.create(record);
        const page = await store.listByOwner(OWNER, { limit: 10 });
        expect(page.items.map((item) => item.token)).toEqual(['t3', 't2', 't1']);
        expect(page.items[0]).toEqual(records[0]);
        expect(page.nextCursor).toBeUndefined();
      });

      it('orders records created in the same millisecond by token, deterministically', async () => {
        for (const token of ['b', 'c', 'a']) await store.create(makeRecord({ token, createdAt: 7 }));
        const { tokens } = await listAll(OWNER, 2);
        expect(tokens).toEqual(['c', 'b', 'a']);
      });

      it('orders by time, not by the digits of the timestamp as text', async () => {
        await store.create(makeRecord({ token: 'old', createdAt: 9 }));
        await store.create(makeRecord({ token: 'new', createdAt: 10 }));
        await store.create(makeRecord({ token: 'newest', createdAt: 1_760_000_000_000 }));
        expect((await listAll(OWNER, 10)).tokens).toEqual(['newest', 'new', 'old']);
      });

      it('paginates across pages with a cursor; the last page has no cursor', async () => {
        for (let n = 0; n < 7; n++) await store.create(makeRecord({ token: `t${n}`, createdAt: 100 + n }));
        const { tokens, pages } = await listAll(OWNER, 3);
        expect(tokens).toEqual(['t6', 't5', 't4', 't3', 't2', 't1', 't0']);
        expect(pages).toEqual([3, 3, 1]);
      });

      it('gives no cursor when the owner has exactly a multiple of the limit', async () => {
        for (let n = 0; n < 4; n++) await store.create(makeRecord({ token: `t${n}`, createdAt: 100 + n }));
        expect((await listAll(OWNER, 2)).pages).toEqual([2, 2]);
        expect((await store.listByOwner(OWNER, { limit: 4 })).nextCursor).toBeUndefined();
      });

      it("never shows other owners' records", async () => {
        await store.create(makeRecord({ token: 'mine' }));
        await store.create(makeRecord({ ownerId: OTHER_OWNER, token: 'theirs' }));
        await store.create(makeRecord({ ownerId: `${OWNER}-suffix`, token: 'prefix-neighbour' }));
        expect((await listAll(OWNER, 1)).tokens).toEqual(['mine']);
        expect((await listAll(OTHER_OWNER, 1)).tokens).toEqual(['theirs']);
      });

      it('does not list request aliases', async () => {
        await store.create(makeRecord());
        await store.putRequestAlias(OWNER, 'request-1', 'token-1', 2_000_000_000);
        await store.putRequestAlias(OWNER, 'request-2', 'token-unknown', 2_000_000_000);
        expect(await store.listByOwner(OWNER, { limit: 10 })).toEqual({ items: [makeRecord()] });
      });

      it('reflects transitions in listed records', async () => {
        await store.create(makeRecord());
        await store.transition(makeRecord(), ['submitted'], { status: 'working', updatedAt: 2 });
        expect((await store.listByOwner(OWNER, { limit: 1 })).items[0]?.status).toBe('working');
      });

      it('accepts a cursor again (stateless), and newer records do not shift later pages', async () => {
        for (let n = 0; n < 5; n++) await store.create(makeRecord({ token: `t${n}`, createdAt: 100 + n }));
        const first = await store.listByOwner(OWNER, { limit: 2 });
        expect(typeof first.nextCursor).toBe('string');
        const cursor = first.nextCursor as string;
        const second = await store.listByOwner(OWNER, { limit: 2, cursor });
        await store.create(makeRecord({ token: 'later', createdAt: 999 }));
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
    });

    describe('request aliases', () => {
      it('finds the token a request id started', async () => {
        await store.putRequestAlias(OWNER, 'request-1', 'token-1', 2_000_000_000);
        expect(await store.findTokenByRequestId(OWNER, 'request-1')).toBe('token-1');
      });

      it('returns undefined for an unknown request id', async () => {
        expect(await store.findTokenByRequestId(OWNER, 'request-unknown')).toBeUndefined();
      });

      it("returns undefined for another owner's request id", async () => {
        await store.putRequestAlias(OWNER, 'request-1', 'token-1', 2_000_000_000);
        expect(await store.findTokenByRequestId(OTHER_OWNER, 'request-1')).toBeUndefined();
      });

      it('lets the latest alias for a request id win (JSON-RPC ids repeat across connections)', async () => {
        await store.putRequestAlias(OWNER, '1', 'token-1', 2_000_000_000);
        await store.putRequestAlias(OWNER, '1', 'token-2', 2_000_000_000);
        expect(await store.findTokenByRequestId(OWNER, '1')).toBe('token-2');
      });

      it('keeps aliases apart from operations with the same name', async () => {
        await store.putRequestAlias(OWNER, 'token-1', 'token-9', 2_000_000_000);
        expect(await store.get({ ownerId: OWNER, token: 'token-1' })).toBeUndefined();
        expect((await store.create(makeRecord())).created).toBe(true);
        expect(await store.findTokenByRequestId(OWNER, 'token-1')).toBe('token-9');
      });
    });

    describe('item size limit', () => {
      const bigOutcome = { kind: 'result' as const, output: 'x'.repeat(450 * 1024) };

      it('rejects a record over 400 KB with RecordTooLargeError and stores nothing', async () => {
        const record = makeRecord({ outcome: bigOutcome });
        await expect(store.create(record)).rejects.toMatchObject({ name: 'RecordTooLargeError' });
        expect(await store.get(record)).toBeUndefined();
      });

      it('rejects a transition that would grow a record over 400 KB and keeps the record as it was', async () => {
        await store.create(makeRecord({ status: 'working' }));
        await expect(
          store.transition(makeRecord(), ['working'], { status: 'completed', outcome: bigOutcome }),
        ).rejects.toMatchObject({ name: 'RecordTooLargeError' });
        expect(await store.get(makeRecord())).toEqual(makeRecord({ status: 'working' }));
      });

      it('accepts a large record under the limit', async () => {
        const record = makeRecord({ outcome: { kind: 'result', output: 'y'.repeat(300 * 1024) } });
        expect((await store.create(record)).created).toBe(true);
        expect(await store.get(record)).toEqual(record);
      });
    });
  });
}
