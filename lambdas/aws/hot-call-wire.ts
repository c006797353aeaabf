/**
 * The hot calls' wire built from an SDK client's own parts (hot-call.ts): its endpoint
 * resolved once by its own endpoint rules, the signer its config builds (replaced by the lean
 * one, hot-read-signer.ts, once that has signed a request exactly as the client's did), and
 * its request handler, with its keep-alive sockets and timeouts.
 */
import { signHotRequest, type SigningCredentials } from './hot-read-signer.ts';

/** The HTTP request a hot call sends, in the shape the SDK's signer and request handler take. */
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

/** Where a hot call goes and how: the endpoint, a SigV4 signer for the service, and a sender. */
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

/** The subset of an SDK client's resolved config (DynamoDB's, Step Functions') the wire uses. */
export interface ClientParts {
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

/** The wire of a client's own parts; `signingName` is the service SigV4 names ("dynamodb", "states"). */
export async function clientWire(client: { readonly config: unknown }, signingName: string): Promise<HotWire> {
  const config = client.config as ClientParts;
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
      ...(accountIdEndpointMode === undefined ? {} : { AccountIdEndpointMode: accountIdEndpointMode }),
    },
    { logger: config.logger },
  );
  const signer = await config.signer();
  return {
    url: new URL(url.href),
    sign: leanWhereItAgrees(
      region,
      signingName,
      config.credentials,
      async (request, signingDate) => (await signer.sign(request, { signingDate })) as HotRequest,
    ),
    send: async (request) => {
      const { response } = await config.requestHandler.handle(request);
      const body = await config.streamCollector(response.body);
      return { statusCode: response.statusCode, body, headers: response.headers };
    },
  };
}

/**
 * The lean signer stands in for the client's own once it has signed the first request
 * exactly as the client's did: a client whose config signs otherwise (its own signer, another
 * signing region or name) keeps its signer for every call.
 */
function leanWhereItAgrees(region: string, signingName: string, credentials: () => Promise<SigningCredentials>, sdkSign: HotWire['sign']): HotWire['sign'] {
  let agrees: boolean | undefined;
  return async (request, signingDate) => {
    if (agrees) return signHotRequest(request, await credentials(), region, signingDate, signingName);
    const expected = await sdkSign(request, signingDate);
    if (agrees === undefined) {
      try {
        agrees = signHotRequest(request, await credentials(), region, signingDate, signingName).headers.authorization === expected.headers.authorization;
      } catch {
        agrees = false;
      }
    }
    return expected;
  };
}
