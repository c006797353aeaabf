/**
 * One AWS JSON 1.0 call (DynamoDB's, Step Functions') sent with the SDK client's own parts
 * built once, not through its per-call middleware. On every `send` the SDK re-resolves the
 * endpoint's parameters, builds a new `SignatureV4` from a copy of its config and adds
 * user-agent and invocation headers; for a poll that was about a third of the server's CPU,
 * for a start's three calls about a third too, and configuration cannot turn it off. Here the
 * endpoint is resolved once from the client's config (hot-call-wire.ts); the request is
 * signed as the client's own signer signs it (hot-read-signer.ts, a quarter of the cost) and
 * goes through the client's own request handler (its keep-alive sockets and timeouts).
 *
 * The hot path only ever answers the plain success. What else comes back goes to the SDK:
 * - a throttle, a 5xx or an error that is the call's own answer (a failed condition, an
 *   execution that already exists) is replayed as the SDK path's first attempt: the SDK
 *   deserializes it into its own typed error, classifies it, counts it and backs off, so
 *   nothing is sent twice and the caller sees exactly the SDK's error;
 * - a success the hot path does not read is replayed too when the call is a write (it was
 *   done: it must not be sent again), and sent again when it is a read;
 * - anything else (another status, a network error, a body that does not parse) sends the
 *   same request again through the unmodified SDK path, `client.send(command)`. A write sent
 *   twice is safe there: each one the hot path sends is conditional or idempotent by name,
 *   as the SDK's own retries of it already assume.
 *
 * A client given middleware after the caller was built (a fault injected by a test, a bench's
 * capacity meter) keeps the SDK path for good, decided at the first call: the hot path would
 * skip that middleware. Call counters are the exception: they count the hot call themselves
 * (`countDirectCall`).
 */
import { countDirectCall, isCallCounter } from './aws-call-counter.ts';
import { type ClientParts, clientWire, type HotRequest, type HotResponse, type HotWire } from './hot-call-wire.ts';

export type { HotRequest, HotResponse, HotWire };

/** Builds the wire on the first call; `undefined` (or a rejection) leaves every call on the SDK path. */
export type HotWireSource = () => Promise<HotWire | undefined>;

/** The part of an SDK v3 client a hot call uses. */
export interface SdkClient {
  readonly config: unknown;
  readonly middlewareStack: { identify(): string[] };
  send(command: never, options?: object): Promise<unknown>;
}

/** A client, loaded by the first `get` (lazy-dynamodb-client.ts), or one at hand. */
export interface SdkClientHandle<C extends SdkClient> {
  get(): Promise<C>;
  /** The client if it is loaded already, else `undefined`: nothing is loaded by asking. */
  built(): C | undefined;
}

/** An SDK command, whose stack a replayed first attempt is added to. */
export interface SdkCommand {
  readonly middlewareStack: { add(middleware: never, options: never): void };
}

/** One JSON-protocol operation as the hot path sends and reads it. */
export interface HotOperation<Input, Output> {
  /** The command's name without `Command`, as call counters count it ("PutItem"). */
  readonly name: string;
  /** The `X-Amz-Target` header ("DynamoDB_20120810.PutItem"). */
  readonly target: string;
  /** A 200's parsed body as the caller reads it, or `undefined` when the hot path does not read it. */
  read(body: unknown): Output | undefined;
  /** Error types of a 4xx that are the call's own answers (a failed condition), which the SDK deserializes. */
  readonly answers?: ReadonlySet<string>;
  /** A write, whose success the hot path does not read, is replayed to the SDK; a read is sent again. */
  readonly write: boolean;
  /** The same call as an SDK command. */
  command(input: Input): Promise<SdkCommand>;
}

/** Calls in a row the hot path may fail while the SDK path answers before the wire is given up. */
export const MAX_MISSES_IN_A_ROW = 3;

export interface HotCallOptions {
  /**
   * Told, with why, when the wire cannot be built or is given up (see MAX_MISSES_IN_A_ROW):
   * every call then takes the SDK path, and the operator should hear of it.
   */
  readonly onWireDropped?: (reason: string) => void;
  /** What the calls are in that message ("reads", "calls"). @default 'calls' */
  readonly noun?: string;
}

/**
 * Sends operations over one client's hot wire. Built over a client, the wire is the client's
 * own parts (its config, signing as `signingName`); built over a handle of a client not yet
 * loaded, the wire is the one given, or else the client's once loaded.
 */
export class HotCall<C extends SdkClient> {
  readonly #client: SdkClientHandle<C>;
  readonly #wireSource: HotWireSource;
  readonly #options: HotCallOptions;
  #wire: Promise<HotWire | undefined> | undefined;
  /** Calls in a row the hot path failed and the SDK path then answered: the wire's fault, not the service's. */
  #missesInARow = 0;

  constructor(client: C | SdkClientHandle<C>, signingName: string, wire?: HotWireSource, options: HotCallOptions = {}) {
    this.#options = options;
    if (isHandle(client)) {
      this.#client = client;
      this.#wireSource = wire ?? (async () => clientWire(await client.get(), signingName));
      return;
    }
    this.#client = { get: () => Promise.resolve(client), built: () => client };
    /** The middleware the client had when the caller was built. */
    const builtWith = new Set(client.middlewareStack.identify());
    const instrumentedSince = () => client.middlewareStack.identify().some((entry) => !builtWith.has(entry) && !isCallCounter(entry));
    this.#wireSource = wire ?? (() => (instrumentedSince() ? Promise.resolve(undefined) : clientWire(client, signingName)));
  }

  /** `operation` with `input`, by the hot path, or, on anything but its plain success, the SDK's; `hot: false` goes straight to the SDK. */
  async send<Input, Output>(operation: HotOperation<Input, Output>, input: Input, options: { hot?: boolean } = {}): Promise<Output> {
    const wire = options.hot !== false && isPlainJson(input) ? await this.#resolveWire() : undefined;
    let replay: HotResponse | undefined;
    if (wire) {
      const answer = await this.#hot(wire, operation, JSON.stringify(input));
      if (answer instanceof Replay) replay = answer.response;
      else if (answer !== RESEND) {
        this.#missesInARow = 0;
        this.#count(operation.name, 'call');
        return answer;
      }
    }
    const [client, command] = await Promise.all([this.#client.get(), operation.command(input)]);
    if (!replay) {
      const answer = (await client.send(command as never)) as Output;
      if (wire) this.#noteMiss();
      return answer;
    }
    // The wire worked and the service answered: no miss of the wire's. Passing options makes the
    // SDK resolve this command's own stack under `cacheMiddleware` (and drop the client's cached
    // stacks, rebuilt at their next call: a throttle or a failed condition is rare, a call's CPU is not at stake).
    this.#missesInARow = 0;
    command.middlewareStack.add(firstAttemptAnsweredBy(replay) as never, { step: 'deserialize', priority: 'low', name: 'hotCallFirstAttempt' } as never);
    return (await client.send(command as never, {})) as Output;
  }

  /**
   * The hot path failed where the SDK's succeeded. Once or twice is a transient fault; every
   * time is a wire that cannot work here (a signature the service refuses, say), which would
   * double every call's requests: the wire is then given up, and every call takes the SDK path.
   */
  #noteMiss(): void {
    if (++this.#missesInARow < MAX_MISSES_IN_A_ROW) return;
    this.#wire = Promise.resolve(undefined);
    this.#options.onWireDropped?.(`its ${this.#options.noun ?? 'calls'} failed ${MAX_MISSES_IN_A_ROW} times in a row where the SDK path then succeeded`);
  }

  /** Built once; a failure to build leaves every call on the SDK path. */
  #resolveWire(): Promise<HotWire | undefined> {
    this.#wire ??= this.#wireSource().catch((error: unknown) => {
      this.#options.onWireDropped?.(`it could not be built (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})`);
      return undefined;
    });
    return this.#wire;
  }

  /** Counters live on a client: one not built yet has none. */
  #count(name: string, kind: 'call' | 'attempt'): void {
    const client = this.#client.built();
    if (client) countDirectCall(client, name, kind);
  }

  async #hot<Output>(wire: HotWire, operation: HotOperation<unknown, Output>, body: string): Promise<Output | Replay | typeof RESEND> {
    try {
      const request: HotRequest = {
        method: 'POST',
        protocol: wire.url.protocol,
        hostname: wire.url.hostname,
        port: wire.url.port ? Number(wire.url.port) : undefined,
        path: wire.url.pathname || '/',
        query: {},
        headers: {
          host: wire.url.host,
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': operation.target,
          'content-length': String(Buffer.byteLength(body)),
        },
        body,
      };
      // Signed with the clock offset the SDK path keeps corrected, once its client is loaded.
      const offset = ((this.#client.built()?.config as ClientParts | undefined)?.systemClockOffset as number | undefined) ?? 0;
      const signed = await wire.sign(request, new Date(Date.now() + offset));
      let response: HotResponse;
      try {
        response = await wire.send(signed);
      } catch (error) {
        this.#count(operation.name, 'attempt');
        throw error;
      }
      // Replayed as the SDK path's first attempt, where its own attempt counter sees it.
      if (response.statusCode !== 200) {
        if (isAnswer(response, operation.answers)) return new Replay(response);
        this.#count(operation.name, 'attempt');
        return RESEND;
      }
      const answer = operation.read(parseBody(response.body));
      // A write was done: a success the hot path does not read is the SDK's to read, never sent again.
      if (answer === undefined && operation.write) return new Replay(response);
      this.#count(operation.name, 'attempt');
      return answer === undefined ? RESEND : answer;
    } catch {
      return RESEND;
    }
  }
}

function isHandle<C extends SdkClient>(client: C | SdkClientHandle<C>): client is SdkClientHandle<C> {
  return typeof (client as Partial<SdkClientHandle<C>>).built === 'function';
}

const RESEND = Symbol('send again by the SDK');

/** An answer of the service's, which the SDK path takes as its first attempt. */
class Replay {
  constructor(readonly response: HotResponse) {}
}

/** The SDK's throttling errors (`@smithy/service-error-classification`), which it retries with backoff. */
const THROTTLING_ERRORS = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);

/** A 5xx, a 429, a throttle or one of the call's own answers: the service's answer, not the wire's fault. */
function isAnswer(response: HotResponse, answers: ReadonlySet<string> | undefined): boolean {
  if (response.statusCode >= 500 || response.statusCode === 429) return true;
  if (response.statusCode < 400 || response.statusCode >= 500) return false;
  const type = errorTypeOf(response);
  return type !== undefined && (THROTTLING_ERRORS.has(type) || (answers?.has(type) ?? false));
}

/** The error's type as the SDK's JSON protocol reads it: the `x-amzn-errortype` header, else the body's `__type` or `code`, without namespace or suffix. */
function errorTypeOf(response: HotResponse): string | undefined {
  let type: unknown = response.headers?.['x-amzn-errortype'];
  if (typeof type !== 'string') {
    const parsed = parseBody(response.body) as { __type?: unknown; code?: unknown } | undefined;
    type = parsed?.__type ?? parsed?.code;
  }
  if (typeof type !== 'string') return undefined;
  const [named = ''] = type.split(':');
  return named.slice(named.lastIndexOf('#') + 1);
}

/** The body as JSON, or `undefined` when it is not an object. */
function parseBody(bytes: Uint8Array): unknown {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Innermost in the command's stack, inside the SDK's retry loop: its first attempt gets the hot
 * call's answer instead of sending, and the SDK deserializes, classifies and backs off from it
 * as from its own; later attempts go on the wire.
 */
function firstAttemptAnsweredBy(answer: HotResponse) {
  let answered = false;
  return (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
    if (answered) return next(args);
    answered = true;
    return { response: { statusCode: answer.statusCode, headers: answer.headers ?? {}, body: answer.body } };
  };
}

/**
 * Whether `JSON.stringify` sends `value` as the SDK's serializer would: strings, numbers,
 * booleans, arrays and plain objects only. A binary attribute (a Uint8Array, which the SDK
 * sends as base64) or a Date takes the SDK path.
 */
function isPlainJson(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (Array.isArray(value)) return value.every(isPlainJson);
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      for (const key in value) if (!isPlainJson((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}
