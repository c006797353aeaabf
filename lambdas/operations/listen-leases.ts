/**
 * The per-principal cap on open notification streams, with no state in the server: each
 * open stream holds a lease, one of the principal's `limit` slots in the store's
 * per-owner slot item (the same conditional write that bounds active operations, under
 * an owner id of its own). A lease names the time its stream ends at the latest, so a
 * lease whose stream died without giving it back (a crash, a frozen function) frees
 * itself: a refused claim gives back every lease past its end, then tries once more.
 */
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock, type Logger, type RecordStore } from './ports.ts';

/** A held lease: give it back with `ListenLeases.release`. */
export interface ListenLease {
  readonly ownerId: string;
  readonly token: string;
}

/**
 * Leases past their stream's end by this much are taken back by a later claim: the stream's
 * invocation may still be giving its lease back in the seconds after its end (5 s before a
 * Lambda's timeout by default), and clocks differ a little between functions. A stream gives
 * its lease back itself within its invocation, so only a crash waits this long.
 */
const EXPIRY_GRACE_MS = 10_000;

export class ListenLeases {
  constructor(
    private readonly store: RecordStore,
    /** Streams one principal may have open at once. */
    readonly limit: number,
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
  ) {}

  /** A lease for a stream of `ownerId` that ends by `untilMs` (epoch ms), or `undefined` at the limit. */
  async acquire(ownerId: string, untilMs: number): Promise<ListenLease | undefined> {
    const lease = { ownerId: leaseOwner(ownerId), token: `${Math.ceil(untilMs)}.${randomBytes(16).toString('hex')}` };
    if ((await this.store.claimActiveSlot(lease.ownerId, lease.token, this.limit)) !== 'refused') return lease;
    const now = this.clock.now();
    const stale = (await this.store.listActiveSlots(lease.ownerId)).filter((token) => endOf(token) + EXPIRY_GRACE_MS < now);
    if (stale.length === 0) return undefined;
    await Promise.all(stale.map((token) => this.store.releaseActiveSlot(lease.ownerId, token)));
    return (await this.store.claimActiveSlot(lease.ownerId, lease.token, this.limit)) === 'refused' ? undefined : lease;
  }

  /** Gives a lease back; a failure is logged, as the lease frees itself once past its end. */
  async release(lease: ListenLease): Promise<void> {
    try {
      await this.store.releaseActiveSlot(lease.ownerId, lease.token);
    } catch (error) {
      this.logger.warn('listen lease not released; it frees itself after its stream ends', { error: error instanceof Error ? error.name : 'unknown' });
    }
  }
}

/** The owner id of a principal's leases: never an owner of operations, so the two limits never share slots. */
function leaseOwner(ownerId: string): string {
  return `listen.${ownerId}`;
}

function endOf(token: string): number {
  const end = Number(token.split('.')[0]);
  // A token this code did not write is treated as long past, so it cannot hold a slot forever.
  return Number.isFinite(end) ? end : 0;
}
