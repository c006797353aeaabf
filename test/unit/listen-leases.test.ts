/** The per-principal cap on open listen streams (lambdas/operations/listen-leases.ts) over the in-memory store. */
import { describe, expect, it } from 'vitest';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { ListenLeases } from '../../lambdas/operations/listen-leases.ts';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe('listen leases', () => {
  it('a principal holds at most `limit` leases; a released one is free again; principals do not share', async () => {
    const leases = new ListenLeases(new InMemoryRecordStore(), 2, quiet);
    const until = Date.now() + 60_000;
    const first = await leases.acquire('alice', until);
    expect(first).toBeDefined();
    expect(await leases.acquire('alice', until)).toBeDefined();
    expect(await leases.acquire('alice', until)).toBeUndefined();
    expect(await leases.acquire('bob', until)).toBeDefined();
    await leases.release(first!);
    expect(await leases.acquire('alice', until)).toBeDefined();
  });

  it('a lease whose stream died without releasing it frees itself 10 s past its end, as docs/notifications.md says', async () => {
    let now = Date.now();
    const end = now + 1_000;
    const leases = new ListenLeases(new InMemoryRecordStore(), 1, quiet, { now: () => now });
    expect(await leases.acquire('alice', end)).toBeDefined();
    expect(await leases.acquire('alice', now + 1_000)).toBeUndefined();
    now = end + 9_000;
    expect(await leases.acquire('alice', now + 1_000)).toBeUndefined();
    now = end + 11_000;
    expect(await leases.acquire('alice', now + 1_000)).toBeDefined();
  });

  it('leases never take an active-operation slot of the same principal', async () => {
    const store = new InMemoryRecordStore();
    const leases = new ListenLeases(store, 1, quiet);
    await leases.acquire('alice', Date.now() + 60_000);
    expect(await store.listActiveSlots('alice')).toEqual([]);
    expect(await store.claimActiveSlot('alice', 'op-1', 1)).toBe('claimed');
  });
});
