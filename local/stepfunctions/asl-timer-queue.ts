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
    const last = this.heap.pop();
    if (last && last !== entry) {
      this.heap[index] = last;
      last.index = index;
      this.down(index);
      this.up(last.index);
    }
    if (this.heap.length === 0) this.disarm();
  }

  private arm(): void {
    const first = this.heap[0];
    if (!first) {
      this.disarm();
      return;
    }
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
    for (let first = this.heap[0]; first && first.at <= now; first = this.heap[0]) due.push(this.pop(first));
    this.arm();
    for (const entry of due) {
      const fire = entry.fire;
      entry.fire = undefined;
      fire?.();
    }
  }

  /** Takes `first`, the heap's top, off the heap. */
  private pop(first: TimerEntry): TimerEntry {
    const last = this.heap.pop();
    first.index = -1;
    if (last && last !== first) {
      this.heap[0] = last;
      last.index = 0;
      this.down(0);
    }
    return first;
  }

  private up(index: number): void {
    const { heap } = this;
    const entry = heap[index];
    if (!entry) return;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex];
      if (!parent || parent.at <= entry.at) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  private down(index: number): void {
    const { heap } = this;
    const entry = heap[index];
    if (!entry) return;
    for (;;) {
      let child = 2 * index + 1;
      let smaller = heap[child];
      if (!smaller) break;
      const right = heap[child + 1];
      if (right && right.at < smaller.at) {
        child++;
        smaller = right;
      }
      if (smaller.at >= entry.at) break;
      heap[index] = smaller;
      smaller.index = index;
      index = child;
    }
    heap[index] = entry;
    entry.index = index;
  }
}

/** The queue every local run shares. */
export const timers = new TimerQueue();
