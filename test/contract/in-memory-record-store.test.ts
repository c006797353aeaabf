import { describe, expect, it } from 'vitest';
import { InMemoryActiveSlotStore } from '../support/in-memory-active-slot-store.ts';
import { DEFAULT_MAX_RECORD_BYTES, InMemoryRecordStore, operationItemBytes } from '../support/in-memory-record-store.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { describeActiveSlotStoreContract, describeRecordStoreContract } from './record-store-contract.ts';

describeRecordStoreContract('in-memory', async () => ({
  store: new InMemoryRecordStore(),
  cleanup: async () => {},
}));

// The owner index of a DynamoDB table is eventually consistent; this mode makes the
// contract's listing cases prove they wait for it, as code against a real GSI must.
describeRecordStoreContract(
  'in-memory with a lagging owner index',
  async () => ({ store: new InMemoryRecordStore({ indexLagMs: 60 }), cleanup: async () => {} }),
  { indexLagMs: 60 },
);

describeActiveSlotStoreContract('in-memory, the slot half alone', async () => ({
  store: new InMemoryActiveSlotStore({ maxItemBytes: DEFAULT_MAX_RECORD_BYTES }),
  cleanup: async () => {},
}));

const record: OperationRecord = {
  ownerId: 'o',
  token: 't',
  tool: 'x',
  argumentsHash: 'h',
  dialect: 'sync',
  status: 'working',
  executionName: 'e',
  createdAt: 1,
  updatedAt: 1,
  keepAliveSeconds: null,
  pollIntervalSeconds: 1,
};

describe('InMemoryRecordStore', () => {
  it('applies a configurable size limit', async () => {
    const store = new InMemoryRecordStore({ maxRecordBytes: 1024 });
    expect((await store.create(record)).created).toBe(true);
    await expect(store.transition(record, ['working'], { outcome: { kind: 'result', output: 'x'.repeat(2048) } })).rejects.toMatchObject({
      name: 'RecordTooLargeError',
    });
  });

  it('measures an item as DynamoDB does: names plus UTF-8 values, keys included, numbers at their 21-byte maximum', () => {
    const names =
      'pk ownerKey createdKey ownerId token tool argumentsHash dialect status executionName createdAt updatedAt keepAliveSeconds pollIntervalSeconds outcome'
        .split(' ')
        .join('').length;
    const keys = 'OP#o#t'.length + 'OWNER#o'.length + '000000000000001#t'.length;
    const strings = 'o t x h sync working e'.split(' ').join('').length;
    const numbers = 3 * 21; // createdAt, updatedAt, pollIntervalSeconds
    const nulls = 1;
    const outcome = Buffer.byteLength(JSON.stringify({ kind: 'result', output: 'é' }));
    expect(operationItemBytes({ ...record, outcome: { kind: 'result', output: 'é' } })).toBe(names + keys + strings + numbers + nulls + outcome);
  });
});
