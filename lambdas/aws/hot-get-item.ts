/**
 * The poll's read: one consistent `GetItem` of an operation item, sent with the SDK client's
 * own parts built once, not through its per-call middleware. On every `send` the SDK
 * re-resolves the endpoint's parameters, builds a new `SignatureV4` from a copy of its
 * config and adds user-agent and invocation headers; for a poll that was about a third of
 * the server's CPU, and configuration cannot turn it off. Here the endpoint is resolved
 * once from the client's config; the request is signed as the client's own signer signs it
 * (hot-read-signer.ts, a quarter of the cost, once it has matched that signer's first
 * signature: same credentials provider and region), and it goes through the client's own
 * request handler (its keep-alive sockets and timeouts), as AWS JSON 1.0.
 * In the MCP function, whose cold start does not load the DynamoDB client for a poll, the
 * wire is built from the Lambda environment instead (lambda-environment-wire.ts), and the
 * SDK path loads the client when it first needs it.
 *
 * Any anomaly (a status other than 200, a network error, a body that does not parse, a key
 * over DynamoDB's limit) sends the same request again through the unmodified SDK path,
 * `client.send(new GetItemCommand(...))`: the error a caller sees, its retries and backoff,
 * clock-skew correction and any fault injected into the client's middleware stay exactly
 * the SDK's. The hot path only ever answers the plain success. A throttle or a 5xx is the
 * table's answer, not the wire's fault: the SDK path then takes it as its own first attempt
 * (its retry strategy classifies it, counts it and backs off), so a throttled read sends no
 * more requests than the SDK alone would, and waits as long between them.
 *
 * A client given middleware after the reader was built (a fault injected by a test, a bench's
 * capacity meter) keeps the SDK path for good, decided at the first read: the hot path would
 * skip that middleware. Call counters are the exception: they count the hot read themselves
 * (`countDirectCall`). With `cacheMiddleware` the SDK too fixes a command's stack at its first
 * call, so what is added later would not reach a GetItem there either.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { countDirectCall, isCallCounter } from './aws-call-counter.ts';
import { DYNAMODB_LIMITS } from './dynamodb-limits.ts';
import { signHotRequest, type SigningCredentials } from './hot-read-signer.ts';
import type { DynamoDbClientHandle } from './lazy-dynamodb-client.ts';

/** What the store sends for its operation reads. */
export interface GetItemRequest {
  readonly TableName: string;
  readonly Key: Record<string, AttributeValue>;
  readonly ConsistentRead: true;
}

type Item = Record<string, AttributeValue>;

/** The HTTP request the hot read sends, in the shape the SDK's signer and request handler take. */
export interface HotRequest {
  readonly method: string;
  readonly protocol: string;
  readonly hostname: string;
  readonly port?: number;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Where the hot read goes and how: the endpoint, a SigV4 signer for dynamodb, and a sender. */
export interface HotWire {
  readonly url: URL;
  sign(request: HotRequest, signingDate: Date): Promise<HotRequest>;
  /** Answers the status, the whole body and the headers if known; throws on a network error or a timeout. */
  send(request: HotRequest): Promise<HotResponse>;
}

/** What the wire answered. */
export interface HotResponse {
  readonly statusCode: number;
  readonly body: Uint8Array;
  readonly headers?: Record<string, string>;
}

/** Builds the wire on the first read; `undefined` (or a rejection) leaves every read on the SDK path. */
export type HotWireSource = () => Promise<HotWire | undefined>;

/** The subset of the SDK's resolved DynamoDB client config the hot read uses. */
interface ResolvedConfig {
  readonly region: () => Promise<string>;
  readonly useFipsEndpoint: () => Promise<boolean>;
  readonly useDualstackEndpoint: () => Promise<boolean>;
  readonly endpoint?: () => Promise<{ protocol: string; hostname: string; port?: number; path: string }>;
  readonly accountIdEndpointMode?: () => Promise<string>;
  readonly endpointProvider: (params: Record<string, unknown>, context: { logger?: unknown }) => { url: URL };
  readonly credentials: () => Promise<SigningCredentials>;
  readonly signer: (authScheme?: unknown) => Promise<{ sign(request: unknown, options: { signingDate: Date }): Promise<unknown> }>;
  readonly requestHandler: {
    handle(
      request: unknown,
      options?: { abortSignal?: AbortSignal },
    ): Promise<{ response: { statusCode: number; headers: Record<string, string>; body: unknown } }>;
  };
  readonly streamCollector: (body: unknown) => Promise<Uint8Array>;
  readonly systemClockOffset?: number;
  readonly logger?: unknown;
}

/**
 * `send(request)` answers a consistent GetItem's `Item`, by the hot path or, on any anomaly, the SDK's.
 * Built over a client, the wire is the client's own parts (its config); built over a handle
 * of a client not yet loaded (lazy-dynamodb-client.ts), the wire is the one given (the
 * Lambda environment's, lambda-environment-wire.ts), or else the client's once loaded.
 */
export class HotGetItem {
  readonly #client: DynamoDbClientHandle;
  readonly #wireSource: HotWireSource;
  readonly #onWireDropped: ((reason: string) => void) | undefined;
  #wire: Promise<HotWire | undefined> | undefined;
  /** Reads in a row the hot path failed and the SDK path then answered: the wire's fault, not the table's. */
  #missesInARow = 0;

  /**
   * `onWireDropped` is told, with why, when the wire cannot be built or is given up (see
   * MAX_MISSES_IN_A_ROW): every read then takes the SDK path, and the operator should hear of it.
   */
  constructor(client: DynamoDBClient | DynamoDbClientHandle, wire?: HotWireSource, options: { onWireDropped?: (reason: string) => void } = {}) {
    this.#onWireDropped = options.onWireDropped;
    if (isHandle(client)) {
      this.#client = client;
      this.#wireSource = wire ?? (async () => clientWire(await client.get()));
      return;
    }
    this.#client = { get: () => Promise.resolve(client), built: () => client };
    /** The middleware the client had when the reader was built. */
    const builtWith = new Set(client.middlewareStack.identify());
    const instrumentedSince = () => client.middlewareStack.identify().some((entry) => !builtWith.has(entry) && !isCallCounter(entry));
    this.#wireSource = wire ?? (() => (instrumentedSince() ? Promise.resolve(undefined) : clientWire(client)));
  }

  async send(request: GetItemRequest): Promise<{ Item?: Item }> {
    const wire = keyFits(request.Key) ? await this.#resolveWire() : undefined;
    let retryable: HotResponse | undefined;
    if (wire) {
      const item = await this.#hot(wire, JSON.stringify(request));
      if (item instanceof RetryableAnswer) retryable = item.response;
      else if (item !== FALL_BACK) {
        this.#missesInARow = 0;
        this.#count('call');
        return item;
      }
    }
    // Imported here, not at the top: the MCP function's cold start does not load the SDK for a poll.
    const [client, { GetItemCommand }] = await Promise.all([this.#client.get(), import('@aws-sdk/client-dynamodb')]);
    const command = new GetItemCommand(request);
    if (!retryable) {
      const answer = await client.send(command);
      if (wire) this.#noteMiss();
      return answer;
    }
    // The wire worked and the table answered: no miss of the wire's. Passing options makes the
    // SDK resolve this command's own stack under `cacheMiddleware` (and drop the client's cached
    // stacks, rebuilt at their next call: a throttle is rare, a poll's CPU is not at stake).
    this.#missesInARow = 0;
    command.middlewareStack.add(firstAttemptAnsweredBy(retryable) as never, { step: 'deserialize', priority: 'low', name: 'hotReadFirstAttempt' } as never);
    return client.send(command, {});
  }

  /**
   * The hot path failed where the SDK's succeeded. Once or twice is a transient fault; every
   * time is a wire that cannot work here (a signature the service refuses, say), which would
   * double every poll's requests: the wire is then given up, and every read takes the SDK path.
   */
  #noteMiss(): void {
    if (++this.#missesInARow < MAX_MISSES_IN_A_ROW) return;
    this.#wire = Promise.resolve(undefined);
    this.#onWireDropped?.(`its reads failed ${MAX_MISSES_IN_A_ROW} times in a row where the SDK path then succeeded`);
  }

  /** Built once; a failure to build leaves every read on the SDK path. */
  #resolveWire(): Promise<HotWire | undefined> {
    this.#wire ??= this.#wireSource().catch((error: unknown) => {
      this.#onWireDropped?.(`it could not be built (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})`);
      return undefined;
    });
    return this.#wire;
  }

  /** Counters live on a client: one not built yet has none. */
  #count(kind: 'call' | 'attempt'): void {
    const client = this.#client.built();
    if (client) countDirectCall(client, 'GetItem', kind);
  }

  async #hot(wire: HotWire, body: string): Promise<{ Item?: Item } | RetryableAnswer | typeof FALL_BACK> {
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
          'x-amz-target': 'DynamoDB_20120810.GetItem',
          'content-length': String(Buffer.byteLength(body)),
        },
        body,
      };
      // Signed with the clock offset the SDK path keeps corrected, once its client is loaded.
      const offset = (this.#client.built()?.config as unknown as ResolvedConfig | undefined)?.systemClockOffset ?? 0;
      const signed = await wire.sign(request, new Date(Date.now() + offset));
      let response: HotResponse;
      try {
        response = await wire.send(signed);
      } catch (error) {
        this.#count('attempt');
        throw error;
      }
      // Replayed as the SDK path's first attempt, where its own attempt counter sees it.
      if (isRetryable(response)) return new RetryableAnswer(response);
      this.#count('attempt');
      if (response.statusCode !== 200) return FALL_BACK;
      const bytes = response.body;
      const parsed: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null) return FALL_BACK;
      const item = (parsed as { Item?: unknown }).Item;
      if (item === undefined) return {};
      return isPlainItem(item) ? { Item: item } : FALL_BACK;
    } catch {
      return FALL_BACK;
    }
  }
}

function isHandle(client: DynamoDBClient | DynamoDbClientHandle): client is DynamoDbClientHandle {
  return typeof (client as Partial<DynamoDbClientHandle>).built === 'function';
}

const FALL_BACK = Symbol('fall back to the SDK');

/** A throttle or a 5xx, which the SDK path takes as its first attempt. */
class RetryableAnswer {
  constructor(readonly response: HotResponse) {}
}

/** DynamoDB's throttling errors, as the SDK's retry classification names them. */
const THROTTLING_ERRORS = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

function isRetryable(response: HotResponse): boolean {
  if (response.statusCode >= 500 || response.statusCode === 429) return true;
  if (response.statusCode !== 400) return false;
  try {
    const type = (JSON.parse(Buffer.from(response.body).toString('utf8')) as { __type?: unknown }).__type;
    return typeof type === 'string' && THROTTLING_ERRORS.has(type.slice(type.lastIndexOf('#') + 1));
  } catch {
    return false;
  }
}

/**
 * Innermost in the command's stack, inside the SDK's retry loop: its first attempt gets the hot
 * read's answer instead of sending, and the SDK deserializes, classifies and backs off from it
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

/** Reads in a row the hot path may fail while the SDK path answers before the wire is given up. */
export const MAX_MISSES_IN_A_ROW = 3;

/** The wire of a client's own parts: its endpoint resolved once, the signer its config builds, its request handler. */
async function clientWire(client: DynamoDBClient): Promise<HotWire> {
  const config = client.config as unknown as ResolvedConfig;
  const [region, useFips, useDualStack, custom, accountIdEndpointMode] = await Promise.all([
    config.region(),
    config.useFipsEndpoint(),
    config.useDualstackEndpoint(),
    config.endpoint?.(),
    config.accountIdEndpointMode?.(),
  ]);
  // A client that must use account endpoints keeps the SDK path, which knows the account.
  if (accountIdEndpointMode === 'required') throw new Error('account endpoints are required');
  const endpoint = custom ? `${custom.protocol}//${custom.hostname}${custom.port ? `:${custom.port}` : ''}${custom.path}` : undefined;
  const { url } = config.endpointProvider(
    {
      Region: region,
      UseFIPS: useFips,
      UseDualStack: useDualStack,
      Endpoint: endpoint,
      // No account id is passed: the rules then choose the regional endpoint, which serves every account.
      AccountIdEndpointMode: accountIdEndpointMode,
    },
    { logger: config.logger },
  );
  const signer = await config.signer();
  return {
    url: new URL(url.href),
    sign: leanWhereItAgrees(region, config.credentials, async (request, signingDate) => (await signer.sign(request, { signingDate })) as HotRequest),
    send: async (request) => {
      const { response } = await config.requestHandler.handle(request);
      const body = await config.streamCollector(response.body);
      return { statusCode: response.statusCode, body, headers: response.headers };
    },
  };
}

/**
 * The lean signer (hot-read-signer.ts) stands in for the client's own once it has signed the
 * first request exactly as the client's did: a client whose config signs otherwise (its own
 * signer, another signing region) keeps its signer for every read.
 */
function leanWhereItAgrees(region: string, credentials: () => Promise<SigningCredentials>, sdkSign: HotWire['sign']): HotWire['sign'] {
  let agrees: boolean | undefined;
  return async (request, signingDate) => {
    if (agrees) return signHotRequest(request, await credentials(), region, signingDate);
    const expected = await sdkSign(request, signingDate);
    if (agrees === undefined) {
      try {
        agrees = signHotRequest(request, await credentials(), region, signingDate).headers.authorization === expected.headers.authorization;
      } catch {
        agrees = false;
      }
    }
    return expected;
  };
}

/** Only the attribute types the operation item holds as strings pass unchanged (binary ones the SDK decodes). */
function isPlainItem(item: unknown): item is Item {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
  for (const value of Object.values(item)) if (!isPlainValue(value)) return false;
  return true;
}

function isPlainValue(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1) return false;
  const [type] = keys;
  const inner = (value as Record<string, unknown>)[type as string];
  switch (type) {
    case 'S':
    case 'N':
      return typeof inner === 'string';
    case 'BOOL':
    case 'NULL':
      return typeof inner === 'boolean';
    case 'SS':
    case 'NS':
      return Array.isArray(inner) && inner.every((entry) => typeof entry === 'string');
    case 'L':
      return Array.isArray(inner) && inner.every(isPlainValue);
    case 'M':
      return isPlainItem(inner);
    default:
      return false;
  }
}

/** A key over DynamoDB's limit goes to the SDK path, which refuses it as AWS does. */
function keyFits(key: Item): boolean {
  for (const value of Object.values(key)) {
    if (typeof value.S === 'string' && Buffer.byteLength(value.S) > DYNAMODB_LIMITS.maxPartitionKeyBytes) return false;
  }
  return true;
}
