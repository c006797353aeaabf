/**
 * The RecordStore contract, DynamoDB's limits: a partition key of at most 2,048
 * bytes, a sort key of at most 1,024 bytes, an item of at most 400 KB, all counted in
 * UTF-8 bytes. dynalite counts UTF-16 code units instead, so these cases also show that
 * the DynamoDB store enforces the limits itself rather than trusting the local server.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { operationItemBytes } from '../support/in-memory-record-store.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { DYNAMODB_LIMITS } from '../../lambdas/aws/dynamodb-limits.ts';
import { MAX_ID_BYTES, type RecordStore } from '../../lambdas/operations/ports.ts';
import { OWNER, makeRecord, useStore, type MakeStore } from './record-store-fixtures.ts';

const KEY_TOO_LONG = { name: 'KeyTooLongError' };
const TOO_LARGE = { name: 'RecordTooLargeError' };
/** `OP#owner-a#`, `REQ#owner-a#`: what precedes a token or request id in its partition key. */
const OP_PREFIX_BYTES = 'OP#owner-a#'.length;
/** The owner index sort key is a 15-digit time and '#' before the token. */
const CREATED_KEY_PREFIX_BYTES = 16;

/** A record whose item is exactly `bytes` as DynamoDB counts it, padded in its outcome. */
function recordOfSize(bytes: number, overrides: Partial<OperationRecord> = {}): OperationRecord {
  const empty = makeRecord({ ...overrides, outcome: { kind: 'result', output: '' } });
  return makeRecord({ ...overrides, outcome: { kind: 'result', output: 'x'.repeat(bytes - operationItemBytes(empty)) } });
}

export function describeLimitCases(makeStore: MakeStore): void {
  const current = useStore(makeStore);
  let store: RecordStore;
  beforeEach(() => {
    store = current();
  });

  describe('partition key size', () => {
    it('keeps a request alias for the longest id the server accepts (MAX_ID_BYTES of UTF-8, on the slot item)', async () => {
      const longest = 'é'.repeat(MAX_ID_BYTES / 2);
      expect(await store.claimActiveSlot(OWNER, 'token-1', 5, { requestId: longest, expiresAt: 2_000_000_000 })).toBe('claimed');
      expect((await store.findRequestAlias(OWNER, longest))?.token).toBe('token-1');
    });

    it('refuses get, transition and create of a token whose key exceeds 2,048 bytes with KeyTooLongError', async () => {
      const atLimit = { ownerId: OWNER, token: 't'.repeat(DYNAMODB_LIMITS.maxPartitionKeyBytes - OP_PREFIX_BYTES) };
      expect(await store.get(atLimit)).toBeUndefined();
      const over = { ownerId: OWNER, token: `${atLimit.token}t` };
      await expect(store.get(over)).rejects.toMatchObject(KEY_TOO_LONG);
      await expect(store.transition(over, ['working'], { status: 'completed' })).rejects.toMatchObject(KEY_TOO_LONG);
      await expect(store.create(makeRecord({ token: over.token }))).rejects.toMatchObject(KEY_TOO_LONG);
    });

    it('refuses slots of an owner id whose slot key exceeds 2,048 bytes with KeyTooLongError', async () => {
      const ownerId = 'o'.repeat(DYNAMODB_LIMITS.maxPartitionKeyBytes - 'ACTIVE#'.length + 1);
      await expect(store.claimActiveSlot(ownerId, 'token-1', 1)).rejects.toMatchObject(KEY_TOO_LONG);
      await expect(store.listActiveSlots(ownerId)).rejects.toMatchObject(KEY_TOO_LONG);
    });
  });

  describe('owner index sort key size', () => {
    it('creates a record whose index sort key is exactly 1,024 bytes and refuses one byte more, storing nothing', async () => {
      const longest = makeRecord({ token: 'k'.repeat(1024 - CREATED_KEY_PREFIX_BYTES) });
      expect((await store.create(longest)).created).toBe(true);
      expect(await store.get(longest)).toEqual(longest);
      const over = makeRecord({ token: `${longest.token}k` });
      await expect(store.create(over)).rejects.toMatchObject(KEY_TOO_LONG);
      expect(await store.get(over)).toBeUndefined();
    });

    it('counts the sort key in UTF-8 bytes: 505 "é" (1,010 bytes) are too long', async () => {
      const record = makeRecord({ token: 'é'.repeat(505) });
      await expect(store.create(record)).rejects.toMatchObject(KEY_TOO_LONG);
      expect(await store.get(record)).toBeUndefined();
    });
  });

  describe('item size', () => {
    const bigOutcome = { kind: 'result' as const, output: 'x'.repeat(450 * 1024) };

    it('rejects a record over 400 KB with RecordTooLargeError and stores nothing', async () => {
      const record = makeRecord({ outcome: bigOutcome });
      await expect(store.create(record)).rejects.toMatchObject(TOO_LARGE);
      expect(await store.get(record)).toBeUndefined();
    });

    it('accepts a record of exactly 400 KB as DynamoDB counts it, and refuses one byte more', async () => {
      const exact = recordOfSize(DYNAMODB_LIMITS.maxItemBytes, { token: 'exact' });
      expect((await store.create(exact)).created).toBe(true);
      expect(await store.get(exact)).toEqual(exact);
      const over = recordOfSize(DYNAMODB_LIMITS.maxItemBytes + 1, { token: 'over' });
      await expect(store.create(over)).rejects.toMatchObject(TOO_LARGE);
      expect(await store.get(over)).toBeUndefined();
    });

    it('counts UTF-8 bytes, not characters: 140,000 "€" (420,000 bytes) are too large, on create and on transition', async () => {
      const outcome = { kind: 'result' as const, output: '€'.repeat(140_000) };
      await expect(store.create(makeRecord({ token: 'created', outcome }))).rejects.toMatchObject(TOO_LARGE);
      await store.create(makeRecord({ status: 'working' }));
      await expect(store.transition(makeRecord(), ['working'], { status: 'completed', outcome })).rejects.toMatchObject(TOO_LARGE);
      expect(await store.get(makeRecord())).toEqual(makeRecord({ status: 'working' }));
    });

    it('rejects a transition that would grow a record over 400 KB and keeps the record as it was', async () => {
      await store.create(makeRecord({ status: 'working' }));
      await expect(store.transition(makeRecord(), ['working'], { status: 'completed', outcome: bigOutcome })).rejects.toMatchObject(TOO_LARGE);
      expect(await store.get(makeRecord())).toEqual(makeRecord({ status: 'working' }));
    });

    it('lets a transition grow a record to exactly 400 KB, and refuses one byte more', async () => {
      const working = makeRecord({ status: 'working', statusMessage: 'running' });
      await store.create(working);
      const over = recordOfSize(DYNAMODB_LIMITS.maxItemBytes + 1, { status: 'completed', statusMessage: 'running' });
      await expect(store.transition(working, ['working'], { status: 'completed', outcome: over.outcome })).rejects.toMatchObject(TOO_LARGE);
      expect(await store.get(working)).toEqual(working);
      const exact = recordOfSize(DYNAMODB_LIMITS.maxItemBytes, { status: 'completed', statusMessage: 'running' });
      expect(await store.transition(working, ['working'], { status: 'completed', outcome: exact.outcome })).toEqual(exact);
    });

    it('counts what a transition removes: clearing a field makes room for the outcome', async () => {
      const working = makeRecord({ status: 'working', statusMessage: 'm'.repeat(1000) });
      await store.create(working);
      const done = recordOfSize(DYNAMODB_LIMITS.maxItemBytes, { status: 'completed' });
      const updated = await store.transition(working, ['working'], { status: 'completed', statusMessage: undefined, outcome: done.outcome });
      expect(updated).toEqual(done);
    });

    it('accepts a large record under the limit', async () => {
      const record = makeRecord({ outcome: { kind: 'result', output: 'y'.repeat(300 * 1024) } });
      expect((await store.create(record)).created).toBe(true);
      expect(await store.get(record)).toEqual(record);
    });
  });
}
