/**
 * Stopping `npm start` on a signal. A Ctrl-C reaches every process of the terminal's group, and
 * npm and tsx pass it on again, so the server sees SIGINT (or SIGTERM) more than once. The first
 * signal stops it; later ones are absorbed while it stops, as a signal nobody listens to would
 * end the process at once (tsx exits on it) and leave the stop half done.
 */
import { describeError } from './describe-error.ts';

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Runs `stop` on the first SIGINT, SIGTERM or SIGHUP, then exits (0, or 1 when the stop failed). */
export function stopOnSignals(stop: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`Stopping failed: ${describeError(error)}`);
        process.exit(1);
      },
    );
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
}
