// oidc-provider ships no types (and @types/oidc-provider lags its major versions): the part the dev server uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Interaction {
    uid: string;
    params: Record<string, unknown>;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    session?: { accountId?: string };
    grantId?: string;
  }

  export interface Grant {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface ResourceServerInfo {
    scope: string;
    audience: string;
    accessTokenFormat: 'jwt' | 'opaque';
    accessTokenTTL?: number;
    jwt?: { sign?: { alg: string } };
  }

  export interface KoaContextLike {
    type: string;
    body: unknown;
  }

  /** A registered client, as the configuration helpers receive it. */
  export interface ClientLike {
    grantTypeAllowed(grantType: string): boolean;
  }

  /** The token endpoint's context, as far as the helpers read it. */
  export interface TokenContextLike {
    oidc: { client?: ClientLike };
  }

  /** Makes the storage adapter of one model (Session, AccessToken, ...). */
  export type AdapterFactory = (model: string) => object;

  export interface Configuration {
    adapter: AdapterFactory;
    clockTolerance: number;
    jwks: { keys: object[] };
    cookies: { keys: string[] };
    findAccount: (ctx: unknown, id: string) => { accountId: string; claims: () => Record<string, unknown> };
    scopes: string[];
    claims: Record<string, string[]>;
    responseTypes: string[];
    pkce: { required: () => boolean };
    clientDefaults: Record<string, unknown>;
    /** Whether a grant of `client` gets a refresh token; `source` is the code (or refresh token) it is made from. */
    issueRefreshToken: (ctx: TokenContextLike, client: ClientLike, source: { scopes: Set<string> }) => boolean | Promise<boolean>;
    /** Whether tokens made from `code` end with the sign-in session that made it. */
    expiresWithSession: (ctx: TokenContextLike, code: { scopes: Set<string> }) => boolean | Promise<boolean>;
    extraClientMetadata: { properties: string[]; validator: (ctx: unknown, key: string, value: unknown, metadata: Record<string, unknown>) => void };
    features: Record<string, unknown> & {
      resourceIndicators: {
        enabled: boolean;
        defaultResource: (ctx: unknown, client: unknown) => string;
        useGrantedResource: (ctx: unknown, model: unknown) => boolean;
        getResourceServerInfo: (ctx: unknown, resourceIndicator: string, client: unknown) => ResourceServerInfo;
      };
    };
    ttl: Record<string, number>;
    interactions: { url: (ctx: unknown, interaction: Interaction) => string };
    renderError: (ctx: KoaContextLike, out: Record<string, unknown>, error: Error) => void;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Client: { find(id: string): Promise<{ clientName?: string } | undefined> };
    Grant: { new (properties: { accountId: string; clientId: string }): Grant; find(id: string): Promise<Grant | undefined> };
  }

  export const errors: { InvalidTarget: new (description?: string) => Error };
}

declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  import type { AdapterFactory } from 'oidc-provider';

  /** oidc-provider's in-memory adapter, with a store of its own. */
  export function createMemoryAdapter(clockTolerance?: number): AdapterFactory;
}
