/**
 * Whether a log entry has been handed on (its webhook delivery jobs enqueued). An entry is
 * marked only after its enqueue succeeded, so a redelivered write that finds the entry already
 * in the log hands it on again when the first try failed between the append and the enqueue.
 * Handing on twice is harmless: every job carries the entry's `eventId`, the `webhook-id`
 * receivers dedupe on.
 */
export interface EventHandover {
  /** Whether the entry was marked handed over; `false` for an entry not in the log. */
  handedOver(ownerId: string, eventId: string): Promise<boolean>;
  /** Marks an entry of the log handed over at `at` (epoch ms). */
  markHandedOver(ownerId: string, eventId: string, at: number): Promise<void>;
}
