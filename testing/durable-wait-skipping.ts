/**
 * The local durable service's switch that ends a durable tool's waits at once (`context.wait`,
 * and the delay before a step's retry). The service's timers read it each time they are set
 * (local/durable/durable-run.ts), so it holds for the whole process while any test server that
 * asked for it is open.
 */

/** The key the service's timers read: a count of the open servers that skip waits. */
export const DURABLE_WAITS_SKIPPED = Symbol.for('async-mcp/durable-waits-skipped');

/** Turns the switch on until the returned function is called (once; calling it again does nothing). */
export function durableWaitsSkipped(): () => void {
  const scope = globalThis as { [DURABLE_WAITS_SKIPPED]?: number };
  scope[DURABLE_WAITS_SKIPPED] = (scope[DURABLE_WAITS_SKIPPED] ?? 0) + 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    scope[DURABLE_WAITS_SKIPPED] = Math.max(0, (scope[DURABLE_WAITS_SKIPPED] ?? 1) - 1);
  };
}
