/**
 * The per-principal limit on active operations. Each active operation holds one slot,
 * taken with one conditional write before its record is created and given back by the
 * write that makes it terminal. Slots are kept per token, so claiming and releasing are
 * idempotent: a retried start or a redelivered event never counts twice.
 *
 * A crash between a terminal write and its release would keep a slot taken, and so would a
 * start that failed unseen or an execution whose end was never reported. Such slots are
 * repaired when the limit is reached: every slot whose operation is over (terminal,
 * expired, missing, or found ended by a reconcile of a record past the stall window, a few
 * per repair) is given back, and the claim is tried once more. A slot is claimed
 * only after its record exists, so a missing record is never a start on its way.
 */
import type { Logger } from './ports.ts';
import type { OperationKey } from './operation.ts';
import { OperationError } from './operation-error.ts';
import { RecordTooLargeError, type RecordStore, type SlotAlias, type SlotClaim } from './ports.ts';

/** How many slot owners' records are read at once during a repair. */
const REPAIR_CONCURRENCY = 10;
/**
 * How many operations one repair may check against the workflow engine (one DescribeExecution
 * each, from an account-wide budget of about 15/s); the rest wait for the next repair.
 */
export const REPAIR_ENGINE_CHECKS = 10;

/** What one repair may still spend on asking the engine; the `isOver` check takes from it. */
export interface RepairBudget {
  engineChecks: number;
}

/** What a repair asks of the settlement about the operations that hold slots. */
export interface SlotHolders {
  /** Whether the operation holding a slot is over (terminal, expired, gone, or ended unseen: asked within `budget`). */
  isOver(key: OperationKey, budget: RepairBudget): Promise<boolean>;
}

export interface ActiveSlotsOptions {
  store: RecordStore;
  /** Active operations one principal may have at once. */
  limit: number;
  holders: SlotHolders;
  logger: Logger;
}

/**
 * Gives the token's slot back, and the request id's alias if it still names the token.
 * The terminal write it follows has happened, so a failure here is logged, not thrown;
 * the next repair frees the slot.
 */
export async function releaseActiveSlot(store: RecordStore, logger: Logger, key: OperationKey, requestId?: string): Promise<void> {
  try {
    await store.releaseActiveSlot(key.ownerId, key.token, requestId);
  } catch (error) {
    logger.warn('active slot not released; the next repair frees it', { error: errorName(error) });
  }
}

export class ActiveSlots {
  readonly limit: number;
  private readonly store: RecordStore;
  private readonly holders: SlotHolders;
  private readonly logger: Logger;

  constructor(options: ActiveSlotsOptions) {
    this.store = options.store;
    this.limit = options.limit;
    this.holders = options.holders;
    this.logger = options.logger;
  }

  /** Takes a slot for the token (and records `alias` with it), repairing leaked slots once when the limit is reached. */
  async claim(key: OperationKey, alias?: SlotAlias): Promise<SlotClaim> {
    const first = await this.tryClaim(key, alias);
    if (first !== 'refused') return first;
    if (!(await this.repair(key.ownerId))) return 'refused';
    return this.tryClaim(key, alias);
  }

  /** One claim; a slot item already at the store's item size limit holds no more: refused, as at the limit. */
  private async tryClaim(key: OperationKey, alias?: SlotAlias): Promise<SlotClaim> {
    try {
      return await this.store.claimActiveSlot(key.ownerId, key.token, this.limit, alias);
    } catch (error) {
      if (error instanceof RecordTooLargeError) return 'refused';
      throw error;
    }
  }

  /** The error a start gets at the limit: it names the limit and when to retry. */
  limitExceeded(retryAfterSeconds: number): OperationError {
    const retry = Math.max(1, Math.ceil(retryAfterSeconds));
    return new OperationError(
      'LIMIT_EXCEEDED',
      `Too many active operations: at most ${this.limit} may run at once for one principal. Retry after ${retry} s, or cancel one.`,
      { data: { limit: this.limit, retryAfterSeconds: retry } },
    );
  }

  /** Frees the slots of operations that are over; true if any was freed. */
  private async repair(ownerId: string): Promise<boolean> {
    const tokens = await this.store.listActiveSlots(ownerId);
    const budget: RepairBudget = { engineChecks: REPAIR_ENGINE_CHECKS };
    let freed = 0;
    for (let i = 0; i < tokens.length; i += REPAIR_CONCURRENCY) {
      const batch = tokens.slice(i, i + REPAIR_CONCURRENCY);
      await Promise.all(
        batch.map(async (token) => {
          let over: boolean;
          try {
            over = await this.holders.isOver({ ownerId, token }, budget);
          } catch (error) {
            // Unknown state: the slot stays taken.
            this.logger.warn('active slot repair could not read an operation', { error: errorName(error) });
            return;
          }
          if (over) {
            await this.store.releaseActiveSlot(ownerId, token);
            freed++;
          }
        }),
      );
    }
    return freed > 0;
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
