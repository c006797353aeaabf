/**
 * The child side of a bench server process (poll-throughput.ts `startChild` is the parent's):
 * `{ cpu: true }` is answered with this process's CPU time and clock, `{ close: true }` or a
 * closed channel stops it.
 */

/** Answers the parent's messages until it asks to close or goes away; `stop` ends the process. */
export function answerBenchParent(stop: () => void): void {
  process.on('message', (message) => {
    if ((message as { close?: boolean } | null)?.close) stop();
    // The bench reads this process's CPU time around each segment (and its clock, where a CPU profile starts).
    if ((message as { cpu?: boolean } | null)?.cpu) {
      const { user, system } = process.cpuUsage();
      process.send?.({ cpuMs: (user + system) / 1000, uptimeMs: performance.now() });
    }
  });
  process.on('disconnect', stop);
}
