import { describe, expect, it } from 'vitest';
import { InMemoryRecordStore } from '../../lambdas/operations/in-memory-record-store.ts';
import { describeRecordStoreContract } from './record-store-contract.ts';

describeRecordStoreContract('in-memory', async () => ({
  store: new InMemoryRecordStore(),
  cleanup: async () => {},
}));

describe('InMemoryRecordStore', () => {
  it('applies a configurable size limit', async () => {
    const store = new InMemoryRecordStore({ maxRecordBytes: 1024 });
    const record = {
      ownerId: 'o',
      token: 't',
      tool: 'x',
      argumentsHash: 'h',
      dialect: 'sync' as const,
      status: 'working' as const,
      executionName: 'e',
      createdAt: 1,
      updatedAt: 1,
      keepAliveSeconds: null,
      pollIntervalSeconds: 1,
    };
    expect((await store.create(record)).created).toBe(true);
    await expect(
      store.transition(record, ['working'], { outcome: { kind: 'result', output: 'x'.repeat(2048) } }),
    ).rejects.toMatchObject({ name: 'RecordTooLargeError' });
  });
});
