/**
 * The timers of one durable execution (a wait's end, a step's next attempt), cleared together
 * when the execution ends or its service closes.
 */

export class RunTimers {
  private readonly timers = new Set<NodeJS.Timeout>();

  /** Calls `fire` at `when`: at once when it is past or absent, or while a test server skips waits. */
  at(when: Date | undefined, fire: () => void): void {
    // A test server may end waits at once (async-mcp/testing's skipWaits, testing/durable-wait-skipping.ts).
    const skipped = ((globalThis as Record<symbol, number | undefined>)[Symbol.for('async-mcp/durable-waits-skipped')] ?? 0) > 0;
    const delay = when && !skipped ? Math.max(0, new Date(when).getTime() - Date.now()) : 0;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fire();
    }, delay);
    this.timers.add(timer);
  }

  /** Cancels every timer not yet fired. */
  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
