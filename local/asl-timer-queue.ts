/**
 * One Node timer for every pending Wait, retry delay and execution timeout of the local
 * interpreter: a waiting execution holds an entry in a binary heap (due time and callback)
 * instead of a Timeout of its own. Entries are removed when cancelled, so nothing due
 * later keeps the process alive after its run has stopped.
 */

/** The longest a Node timer can wait. */
const MAX_TIMER_MS = 2_147_483_647;

/** A scheduled callback; pass it to `cancel`. */
export interface TimerEntry {
  /** Monotonic due time (performance.now() milliseconds). */
  readonly at: number;
  /** Position in the heap; -1 once fired or cancelled. */
  index: number;
  fire: (() => void) | undefined;
}

/** A min-heap of due times served by a single Node timer. */
export class TimerQueue {
  private readonly heap: TimerEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Number.POSITIVE_INFINITY;

  /** Entries still pending. */
  get size(): number {
    return this.heap.length;
  }

  /** Calls `fire` after `ms` milliseconds (at once on the next turn for 0 or less). */
  schedule(ms: number, fire: () => void): TimerEntry {
    const entry: TimerEntry = { at: performance.now() + Math.max(0, ms), index: this.heap.length, fire };
    this.heap.push(entry);
    this.up(entry.index);
    this.arm();
    return entry;
  }

  /** Removes `entry` if it has not fired yet. */
  cancel(entry: TimerEntry): void {
    const { index } = entry;
    entry.fire = undefined;
    if (index < 0) return;
    entry.index = -1;
    const last = this.heap.pop()!;
    if (last !== entry) {
      this.heap[index] = last;
      last.index = index;
      this.down(index);
      this.up(last.index);
    }
    if (this.heap.length === 0) this.disarm();
  }

  private arm(): void {
    const first = this.heap[0];
    if (!first) return this.disarm();
    if (this.timer && first.at >= this.armedAt) return;
    clearTimeout(this.timer);
    this.armedAt = first.at;
    this.timer = setTimeout(() => this.run(), Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(first.at - performance.now()))));
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
  }

  private run(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    const due: TimerEntry[] = [];
    while (this.heap[0] && this.heap[0].at <= now) due.push(this.pop());
    this.arm();
    for (const entry of due) {
      const fire = entry.fire;
      entry.fire = undefined;
      fire?.();
    }
  }

  private pop(): TimerEntry {
    const first = this.heap[0]!;
    const last = this.heap.pop()!;
    first.index = -1;
    if (last !== first) {
      this.heap[0] = last;
      last.index = 0;
      this.down(0);
    }
    return first;
  }

  private up(index: number): void {
    const { heap } = this;
    const entry = heap[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex]!;
      if (parent.at <= entry.at) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  private down(index: number): void {
    const { heap } = this;
    const entry = heap[index]!;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1]!.at < heap[child]!.at) child++;
      if (heap[child]!.at >= entry.at) break;
      heap[index] = heap[child]!;
      heap[index]!.index = index;
      index = child;
    }
    heap[index] = entry;
    entry.index = index;
  }
}

/** The queue every local run shares. */
export const timers = new TimerQueue();
