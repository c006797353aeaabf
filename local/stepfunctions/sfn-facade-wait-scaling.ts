/**
 * `waitTimeScale`: makes every Wait state last `scale` times as long, so tests need not
 * sleep for real. The interpreter can only override a Wait with a fixed duration, which
 * covers `Seconds`; a Wait on `SecondsPath`, `Timestamp` or `TimestampPath` is run as a
 * Task of the same name whose Parameters let the interpreter resolve the path, and whose
 * local handler sleeps the scaled time and passes its input through, as a Wait does.
 */
import { TaskError } from './sfn-facade-errors.ts';
import { sleep } from './asl-run-support.ts';

/** The longest a Node timer can wait. */
const MAX_TIMER_MS = 2_147_483_647;
// biome-ignore lint/suspicious/noTemplateCurlyInString: an ASL definition-substitution placeholder, replaced when the definition is loaded, not a template literal
const SCALED_WAIT_RESOURCE = '${LocalScaledWait}';

interface ScaledWaitParameters {
  input: unknown;
  seconds?: unknown;
  timestamp?: unknown;
}

export class WaitScaler {
  /** For the interpreter's `overrides.waitTimeOverrides`. */
  readonly waitTimeOverrides: Record<string, number> = {};
  private readonly rewritten = new Set<string>();

  constructor(private readonly scale: number) {}

  /** Call for every Wait state of the definition about to run (rewritten in place). */
  add(name: string, state: Record<string, unknown>): void {
    if (this.scale === 1) return;
    if (typeof state.Seconds === 'number') {
      this.waitTimeOverrides[name] = clamp(state.Seconds * 1000 * this.scale);
      return;
    }
    const duration =
      typeof state.SecondsPath === 'string'
        ? { 'seconds.$': state.SecondsPath }
        : typeof state.TimestampPath === 'string'
          ? { 'timestamp.$': state.TimestampPath }
          : { timestamp: state.Timestamp };
    const wait = { ...state };
    for (const key of Object.keys(state)) delete state[key];
    Object.assign(state, {
      Type: 'Task',
      Resource: SCALED_WAIT_RESOURCE,
      ...pick(wait, ['Comment', 'InputPath', 'OutputPath', 'Next', 'End']),
      // "$" is the input after InputPath, which is what a Wait state outputs before OutputPath.
      Parameters: { 'input.$': '$', ...duration },
      TimeoutSeconds: Math.floor(MAX_TIMER_MS / 1000),
    });
    this.rewritten.add(name);
  }

  /** Local handlers for the rewritten states of one run; aborting `signal` ends their sleeps. */
  handlers(signal: AbortSignal): Record<string, (parameters: unknown) => Promise<unknown>> {
    const handlers: Record<string, (parameters: unknown) => Promise<unknown>> = {};
    for (const name of this.rewritten) {
      handlers[name] = async (parameters) => {
        const { input, seconds, timestamp } = parameters as ScaledWaitParameters;
        await sleep(clamp(this.durationMs(seconds, timestamp) * this.scale), signal);
        return input;
      };
    }
    return handlers;
  }

  /** Reports the rewritten states in the interpreter's log as the Wait states they are. */
  async *relabel<E extends object>(events: AsyncIterable<E>): AsyncGenerator<E> {
    for await (const event of events) {
      const state = (event as { state?: { name: string; type: string } }).state;
      yield state && this.rewritten.has(state.name) ? { ...event, state: { ...state, type: 'Wait' } } : event;
    }
  }

  private durationMs(seconds: unknown, timestamp: unknown): number {
    if (seconds !== undefined) {
      if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
        throw new TaskError('States.Runtime', 'The value of SecondsPath must be a non-negative integer');
      }
      return seconds * 1000;
    }
    const at = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
    if (Number.isNaN(at)) throw new TaskError('States.Runtime', 'The value of TimestampPath must be an RFC 3339 timestamp');
    return Math.max(0, at - Date.now());
  }
}

function clamp(ms: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(0, Math.round(ms)));
}

function pick(source: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => key in source).map((key) => [key, source[key]]));
}
