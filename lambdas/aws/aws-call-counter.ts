/**
 * Counts the AWS calls an SDK v3 client makes, by command name, with a middleware on the
 * client's own stack: what the bench and the call-budget tests measure an operation in.
 *
 * What counts as a call: one `client.send()`. The middleware sits in the `initialize` step,
 * before the SDK's retry middleware, so an attempt the SDK retries counts once, and a call
 * that fails (a service error, a refused connection, a middleware that throws later in the
 * stack) still counts: it was asked for. `attempts` counts what went on the wire
 * (the `finalizeRequest` step, after retries), which is what AWS bills where attempts differ.
 *
 * A call sent beside the middleware stack (the hot calls of lambdas/aws/hot-call.ts: a poll's
 * `GetItem`, a start's `PutItem`, `UpdateItem` and `StartExecution`) reports itself with
 * `countDirectCall`: it counts as a call when it answers, and as an attempt when it goes on
 * the wire; when it falls back to `client.send` (or its answer is replayed as the SDK's first
 * attempt), the stack counts that call, so one call is still one call.
 */

/** Calls by command name without the `Command` suffix ("GetItem", "StartExecution"). */
export type AwsCallCounts = Readonly<Record<string, number>>;

/** The part of an SDK v3 client the counter needs (every `@aws-sdk/client-*` client has it). */
export interface MiddlewareClient {
  readonly middlewareStack: {
    // Each SDK client types `add` per step with its own input and output types; any of them fits here.
    add(middleware: never, options: never): void;
    remove(toRemove: string): boolean;
  };
}

export interface AwsCallCounterOptions {
  /** Counts only the calls for which this is true when they are sent (tell callers apart, e.g. with AsyncLocalStorage). */
  readonly when?: () => boolean;
}

export interface AwsCallCounter {
  /** The calls since the counter was added or last reset. */
  snapshot(): AwsCallCounts;
  /** Attempts sent on the wire since the counter was added or last reset (retries count each). */
  attempts(): AwsCallCounts;
  /** Forgets everything counted so far. */
  reset(): void;
  /** The calls made since `before` (an earlier `snapshot()`); commands with none are left out. */
  diff(before: AwsCallCounts): AwsCallCounts;
  /** Takes the middleware off the client; counts stay readable. */
  remove(): void;
}

type Next = (args: unknown) => Promise<unknown>;
type Context = { commandName?: string };

let counters = 0;

type DirectCounter = (name: string, kind: 'call' | 'attempt') => void;
/** The counters on each client, for calls that do not go through its middleware stack. */
const directCounters = new WeakMap<object, Set<DirectCounter>>();

const COUNTER_NAME = 'awsCallCounter';

/** Whether an entry of a middleware stack's `identify()` ("name - step") is a call counter's. */
export function isCallCounter(entry: string): boolean {
  return entry.startsWith(COUNTER_NAME);
}

/** Counts `commandName` ("GetItem") on every counter of `client`, as a call or as a wire attempt. */
export function countDirectCall(client: object, commandName: string, kind: 'call' | 'attempt' = 'call'): void {
  const counting = directCounters.get(client);
  if (counting) for (const count of counting) count(commandName, kind);
}

/** Adds a named, removable counting middleware to `client` and returns its counter. */
export function countAwsCalls(client: MiddlewareClient, options: AwsCallCounterOptions = {}): AwsCallCounter {
  const id = ++counters;
  const names = { call: `${COUNTER_NAME}${id}`, attempt: `${COUNTER_NAME}${id}Attempts` };
  let calls: Record<string, number> = {};
  let attempts: Record<string, number> = {};
  const counting = (into: () => Record<string, number>) => (next: Next, context: Context) => (args: unknown) => {
    if (options.when?.() ?? true) {
      const name = commandName(context);
      const bucket = into();
      bucket[name] = (bucket[name] ?? 0) + 1;
    }
    return next(args);
  };
  const add = (middleware: unknown, options: { step: 'initialize' | 'finalizeRequest'; name: string; priority: 'high' | 'low' }) =>
    client.middlewareStack.add(middleware as never, options as never);
  add(
    counting(() => calls),
    { step: 'initialize', name: names.call, priority: 'high' },
  );
  // Low priority in finalizeRequest runs after the retry middleware: once per attempt.
  add(
    counting(() => attempts),
    { step: 'finalizeRequest', name: names.attempt, priority: 'low' },
  );
  const direct: DirectCounter = (name, kind) => {
    if (!(options.when?.() ?? true)) return;
    const bucket = kind === 'call' ? calls : attempts;
    bucket[name] = (bucket[name] ?? 0) + 1;
  };
  const registered = directCounters.get(client) ?? new Set<DirectCounter>();
  directCounters.set(client, registered.add(direct));
  return {
    snapshot: () => ({ ...calls }),
    attempts: () => ({ ...attempts }),
    reset: () => {
      calls = {};
      attempts = {};
    },
    diff: (before) => diffCounts(calls, before),
    remove: () => {
      client.middlewareStack.remove(names.call);
      client.middlewareStack.remove(names.attempt);
      directCounters.get(client)?.delete(direct);
    },
  };
}

/** `after - before` per command, leaving out commands with no calls in between. */
export function diffCounts(after: AwsCallCounts, before: AwsCallCounts): AwsCallCounts {
  const out: Record<string, number> = {};
  for (const [name, count] of Object.entries(after)) {
    const delta = count - (before[name] ?? 0);
    if (delta !== 0) out[name] = delta;
  }
  return out;
}

function commandName(context: Context): string {
  return (context.commandName ?? 'unknown').replace(/Command$/, '');
}
