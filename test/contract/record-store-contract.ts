/**
 * The RecordStore contract: one suite that every store implementation must pass,
 * run against the in-memory store (with and without a lagging owner index) and
 * against DynamoDB (dynalite). This file holds the record cases (the `OperationRecordStore`
 * half of the port) and the entry point; the side items file holds the `ActiveSlotStore`
 * half (slots and request aliases) beside execution pointers and log levels.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { ActiveSlotStore, OperationRecordStore } from '../../lambdas/operations/ports.ts';
import { describeLimitCases } from './record-store-limits-contract.ts';
import { describeListingCases } from './record-store-listing-contract.ts';
import { describeQuestionCases } from './record-store-questions-contract.ts';
import { describeSideItemCases, describeSlotItemCases } from './record-store-side-items-contract.ts';
import {
  OTHER_OWNER,
  OWNER,
  fullRecord,
  keysOf,
  makeRecord,
  useStore,
  type ContractOptions,
  type MakeStore,
  type MakeStoreOf,
} from './record-store-fixtures.ts';

export type { RecordStoreFixture } from './record-store-fixtures.ts';

/** Runs the RecordStore contract against the store `makeStore` builds (a fresh, empty one per test). */
export function describeRecordStoreContract(name: string, makeStore: MakeStore, options: ContractOptions = {}): void {
  describe(`RecordStore contract: ${name}`, () => {
    // Each group in its own describe, so each registers one fresh store per test.
    describe('records', () => describeRecordCases(makeStore));
    describeListingCases(makeStore, options);
    describe('slot item', () => describeSlotItemCases(makeStore));
    describe('side items', () => describeSideItemCases(makeStore));
    describe('DynamoDB limits', () => describeLimitCases(makeStore));
    describe('questions', () => describeQuestionCases(makeStore));
  });
}

/**
 * Runs the slot item's cases against a store of the `ActiveSlotStore` half alone: the half
 * keeps its contract without the records beside it.
 */
export function describeActiveSlotStoreContract(name: string, makeStore: MakeStoreOf<ActiveSlotStore>): void {
  describe(`ActiveSlotStore contract: ${name}`, () => describeSlotItemCases(makeStore));
}

function describeRecordCases(makeStore: MakeStore): void {
  const current = useStore(makeStore);
  let store: OperationRecordStore;
  beforeEach(() => {
    store = current();
  });

  describe('input requests', () => {
    it('round-trips pending questions, used keys and input kinds, and clears the questions', async () => {
      const record = makeRecord({ inputKinds: ['elicitation.form', 'sampling'] });
      await store.create(record);
      const pendingInputs = {
        'a key': {
          request: { method: 'elicitation/create' as const, params: { message: 'ok?', requestedSchema: { type: 'object', properties: {} } } },
          taskToken: 'tok',
          askedAt: 5,
        },
      };
      const asked = await store.transition(record, ['submitted'], { status: 'input_required', pendingInputs, usedInputKeys: ['a key'], updatedAt: 5 });
      expect(asked).toMatchObject({ status: 'input_required', pendingInputs, usedInputKeys: ['a key'], inputKinds: ['elicitation.form', 'sampling'] });
      expect(await store.get(record)).toEqual(asked);
      const answered = await store.transition(record, ['input_required'], { status: 'working', pendingInputs: undefined, updatedAt: 6 });
      expect(answered?.pendingInputs).toBeUndefined();
      expect(answered?.usedInputKeys).toEqual(['a key']);
    });
  });

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
      if (record.outcome?.kind === 'result') (record.outcome.output as Record<string, unknown>).empty = 'mutated input';
      if (result.created) {
        result.record.tool = 'mutated';
        if (result.record.outcome?.kind === 'result') (result.record.outcome.output as Record<string, unknown>).empty = 'mutated result';
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

    it('round-trips every field and the outcome JSON exactly', async () => {
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

  describe('discard', () => {
    it('deletes a record while its status is one of `from`, and a new create of that token succeeds', async () => {
      await store.create(makeRecord());
      expect(await store.discard(makeRecord(), ['submitted'])).toBe(true);
      expect(await store.get(makeRecord())).toBeUndefined();
      expect((await store.create(makeRecord())).created).toBe(true);
    });

    it('keeps a record in another status, and answers false for an absent one', async () => {
      await store.create(makeRecord());
      await store.transition(makeRecord(), ['submitted'], { status: 'working' });
      expect(await store.discard(makeRecord(), ['submitted'])).toBe(false);
      expect((await store.get(makeRecord()))?.status).toBe('working');
      expect(await store.discard(makeRecord({ token: 'never-created' }), ['submitted'])).toBe(false);
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

    it('round-trips outcome JSON written by a transition', async () => {
      const done = fullRecord();
      await store.create(makeRecord({ status: 'working' }));
      const updated = await store.transition(makeRecord(), ['working'], {
        status: 'completed',
        outcome: done.outcome,
        completedAt: done.completedAt,
        expiresAt: done.expiresAt,
      });
      expect(updated?.outcome).toEqual(done.outcome);
      expect(JSON.stringify((await store.get(makeRecord()))?.outcome)).toBe(JSON.stringify(done.outcome));
    });

    it('returns a copy: mutating the result does not change the stored record', async () => {
      await store.create(makeRecord());
      const outcome = { kind: 'result' as const, output: { a: [1] } };
      const updated = await store.transition(makeRecord(), ['submitted'], { status: 'completed', outcome });
      if (updated?.outcome?.kind === 'result') (updated.outcome.output as { a: number[] }).a.push(2);
      outcome.output.a.push(3);
      expect((await store.get(makeRecord()))?.outcome).toEqual({ kind: 'result', output: { a: [1] } });
    });

    it('with ifUpdatedAt, applies the changes only while updatedAt still has that value', async () => {
      await store.create(makeRecord({ status: 'working', updatedAt: 1_000 }));
      expect(await store.transition(makeRecord(), ['working'], { updatedAt: 2_000 }, { ifUpdatedAt: 999 })).toBeUndefined();
      expect((await store.get(makeRecord()))?.updatedAt).toBe(1_000);
      const touched = await store.transition(makeRecord(), ['working'], { updatedAt: 2_000 }, { ifUpdatedAt: 1_000 });
      expect(touched).toEqual(makeRecord({ status: 'working', updatedAt: 2_000 }));
      // The value it compared against is gone now, so the same compare-and-set loses.
      expect(await store.transition(makeRecord(), ['working'], { updatedAt: 3_000 }, { ifUpdatedAt: 1_000 })).toBeUndefined();
      expect(await store.get(makeRecord())).toEqual(touched);
    });

    it('with ifUpdatedAt, still requires the status to be one of `from`', async () => {
      await store.create(makeRecord({ status: 'completed', updatedAt: 1_000 }));
      expect(await store.transition(makeRecord(), ['working'], { updatedAt: 2_000 }, { ifUpdatedAt: 1_000 })).toBeUndefined();
      expect((await store.get(makeRecord()))?.updatedAt).toBe(1_000);
    });

    it('with ifUpdatedAt, lets exactly one of 20 concurrent pollers reconcile a stale record', async () => {
      await store.create(makeRecord({ status: 'working', updatedAt: 1_000 }));
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          store.transition(makeRecord(), ['working'], { updatedAt: 2_000 + n, statusMessage: `poller ${n}` }, { ifUpdatedAt: 1_000 }),
        ),
      );
      const winners = results.filter((result) => result !== undefined);
      expect(winners).toHaveLength(1);
      expect(await store.get(makeRecord())).toEqual(winners[0]);
    });

    it('with ifUpdatedAt, answers undefined for an absent record and does not create it', async () => {
      const key = { ownerId: OWNER, token: 'missing' };
      expect(await store.transition(key, ['working'], { updatedAt: 2 }, { ifUpdatedAt: 1 })).toBeUndefined();
      expect(await store.get(key)).toBeUndefined();
    });
  });
}
