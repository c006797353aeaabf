/** Records and set-up shared by the RecordStore contract suite's files. */
import { afterEach, beforeEach } from 'vitest';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import type { RecordStore } from '../../lambdas/operations/ports.ts';

export interface RecordStoreFixture<S = RecordStore> {
  store: S;
  cleanup(): Promise<void>;
}

/** Builds a fresh, empty store per test. */
export type MakeStore = MakeStoreOf<RecordStore>;

/** Builds a fresh, empty store of one half of the port (or of the whole) per test. */
export type MakeStoreOf<S> = () => Promise<RecordStoreFixture<S>>;

export interface ContractOptions {
  /**
   * The store's owner index lags by about this long (like a DynamoDB GSI); enables
   * the cases that show a listing catching up. Listing cases always poll.
   */
  readonly indexLagMs?: number;
}

export const OWNER = 'owner-a';
export const OTHER_OWNER = 'owner-b';

export function makeRecord(overrides: Partial<OperationRecord> = {}): OperationRecord {
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
export function fullRecord(overrides: Partial<OperationRecord> = {}): OperationRecord {
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
    ...overrides,
  });
}

/** Keys present on an object, sorted: tells a missing field from one set to `undefined`. */
export function keysOf(value: object): string[] {
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k)
    .sort();
}

/** Registers a fresh store per test in the enclosing `describe`; call the result inside a test. */
export function useStore<S>(makeStore: MakeStoreOf<S>): () => S {
  let fixture: RecordStoreFixture<S> | undefined;
  beforeEach(async () => {
    fixture = await makeStore();
  });
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
  });
  return () => {
    if (!fixture) throw new Error('No store: call inside a test');
    return fixture.store;
  };
}
