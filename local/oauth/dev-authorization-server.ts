/**
 * A real OAuth 2.1 / OpenID authorization server on loopback, for trying the MCP
 * authorization flow locally: oidc-provider (a certified implementation) with open dynamic
 * client registration (RFC 7591), the authorization code grant with PKCE S256 only,
 * resource indicators (RFC 8707) that issue JWT access tokens (RFC 9068) for the MCP
 * server's resource URL, refresh tokens for every client that registered the `refresh_token`
 * grant, and a sign-in page that takes any user name without a password. It authenticates
 * nobody: development only.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { errors, type Configuration } from 'oidc-provider';
import { createMemoryAdapter } from 'oidc-provider/lib/adapters/memory_adapter.js';
import { renderConsentPage, renderErrorPage, renderLoginPage } from './dev-login-pages.ts';

/** The scope the MCP server asks for by default when it trusts this server. */
export const DEV_MCP_SCOPE = 'mcp:tools';
/** oidc-provider's default leeway, in seconds, for the token times it checks. */
const CLOCK_TOLERANCE = 15;
/** User names the banner suggests; any other works as well. */
export const DEV_USERS = ['alice', 'bob'] as const;

export interface DevAuthorizationServerOptions {
  /** @default 0 (a free port); always bound to 127.0.0.1 */
  port?: number;
  /** Keep the signing and cookie keys in this file, so tokens stay valid across restarts. @default generated per start */
  keysFile?: string;
  /** Access-token lifetime in seconds. @default 3600 */
  accessTokenTtlSeconds?: number;
  /** Resources (RFC 8707) beyond the MCP server's own that tokens may be asked for, e.g. to show a token for another server is refused. */
  extraResources?: readonly string[];
}

export interface DevAuthorizationServer {
  /** The issuer identifier, as tokens carry it in `iss`. */
  readonly issuer: string;
  /**
   * Names the MCP server's resource URL, the default audience of tokens. Set once the MCP
   * server listens; until then every authorization request is refused with `invalid_target`.
   */
  setResourceUrl(resourceUrl: string): void;
  close(): Promise<void>;
}

interface StoredKeys {
  signing: JWK;
  cookies: string[];
}

/** Starts the server on 127.0.0.1 and resolves once it listens. */
export async function startDevAuthorizationServer(options: DevAuthorizationServerOptions = {}): Promise<DevAuthorizationServer> {
  const keys = await loadOrCreateKeys(options.keysFile);
  let resourceUrl: string | undefined;
  const extras = new Set(options.extraResources ?? []);
  const accessTokenTTL = options.accessTokenTtlSeconds ?? 3600;

  // The issuer names the port, so the socket is bound before the provider exists.
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const configuration: Configuration = {
    // In memory on purpose (a restart signs everyone out; keys can be kept, see keysFile). Named
    // here, oidc-provider knows it was chosen and does not warn at every start that it is in use.
    adapter: createMemoryAdapter(CLOCK_TOLERANCE),
    clockTolerance: CLOCK_TOLERANCE,
    jwks: { keys: [keys.signing] },
    cookies: { keys: keys.cookies },
    // Every user name is an account whose subject is that name.
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    // Listed here too: oidc-provider checks a registering client's `scope` against this list.
    scopes: ['openid', 'offline_access', DEV_MCP_SCOPE],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    // OAuth 2.1 §7.5.2: PKCE for every client, and oidc-provider only implements S256.
    pkce: { required: () => true },
    // A registered `scope` would cap what the client may ask for later, and the SDK registers the scope of its
    // first request: without this a client could never step up (MCP authorization, "Step-Up Authorization Flow").
    extraClientMetadata: {
      properties: ['scope'],
      validator: (_ctx, key, _value, metadata) => {
        if (key === 'scope') delete metadata.scope;
      },
    },
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    // Hosts (Claude, VS Code, mcp-remote) register the refresh_token grant and never ask for
    // offline_access; the MCP refresh-token guidance (SEP "OIDC-Flavored Refresh Token Guidance")
    // says to decide from the registered grant types. oidc-provider's default wants offline_access.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Nor does such a refresh token end with the browser's sign-in session, as oidc-provider's
    // default does without offline_access: the host renews long after the browser is closed.
    expiresWithSession: (ctx, code) => !code.scopes.has('offline_access') && !ctx.oidc.client?.grantTypeAllowed('refresh_token'),
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A client that names no resource gets a token for the MCP server (RFC 8707 §2 lets the server pick).
        defaultResource: () => resourceUrl ?? issuer,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resourceUrl && !extras.has(indicator)) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
          return { scope: DEV_MCP_SCOPE, audience: indicator, accessTokenFormat: 'jwt', accessTokenTTL, jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
    ttl: {
      AccessToken: accessTokenTTL,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 86_400,
      Grant: 14 * 86_400,
      RefreshToken: 14 * 86_400,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = renderErrorPage(String(out.error), String(out.error_description ?? ''));
    },
  };
  const provider = new Provider(issuer, configuration);
  const callback = provider.callback();

  handle = (req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    if (!path.startsWith('/interaction/')) return callback(req, res);
    interaction(provider, req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
      res.end(renderErrorPage(error.name, error.message));
    });
  };

  return {
    issuer,
    setResourceUrl(url) {
      resourceUrl = url;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The sign-in and consent steps oidc-provider hands over: GET shows the page for the
 * current prompt, POST `/login` signs in as the given user name, POST `/confirm` grants
 * the scopes and resources the client asked for.
 */
async function interaction(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const client = await provider.Client.find(String(details.params.client_id));
  const clientName = client?.clientName ?? String(details.params.client_id);
  const action = new URL(req.url ?? '/', 'http://x').pathname.split('/')[3];

  if (req.method === 'GET' && action === undefined) {
    const page =
      details.prompt.name === 'login'
        ? renderLoginPage(details.uid, clientName)
        : renderConsentPage(details.uid, clientName, String(details.session?.accountId ?? ''), consentItems(details.prompt.details));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(page);
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'GET, POST' }).end();
    return;
  }
  const form = new URLSearchParams(await readBody(req));
  if (action === 'login' && details.prompt.name === 'login') {
    const user = form.get('username')?.trim() ?? '';
    if (!/^[\w.@-]{1,64}$/.test(user)) {
      res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
      res.end(renderLoginPage(details.uid, clientName, 'A user name is 1 to 64 letters, digits, or . _ @ -'));
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: user } }, { mergeWithLastSubmission: false });
    return;
  }
  if (action === 'confirm' && details.prompt.name === 'consent') {
    const accountId = String(details.session?.accountId);
    const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    if (!grant) throw new Error('The grant of this sign-in is gone; start again');
    const missing = details.prompt.details as PromptDetails;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  if (action === 'abort') {
    await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user refused' }, { mergeWithLastSubmission: false });
    return;
  }
  throw new Error(`Nothing to ${action} at the ${details.prompt.name} step`);
}

interface PromptDetails {
  missingOIDCScope?: string[];
  missingOIDCClaims?: string[];
  missingResourceScopes?: Record<string, string[]>;
}

/** What the consent page lists: scopes per resource, then the OpenID scopes. */
function consentItems(details: unknown): Array<{ resource?: string; scopes: string[] }> {
  const missing = details as PromptDetails;
  const items: Array<{ resource?: string; scopes: string[] }> = Object.entries(missing.missingResourceScopes ?? {}).map(([resource, scopes]) => ({
    resource,
    scopes,
  }));
  // A resource's scope is also listed as an OpenID scope (see `scopes`): show it once, with its resource.
  const shown = new Set(items.flatMap((item) => item.scopes));
  const account = (missing.missingOIDCScope ?? []).filter((scope) => !shown.has(scope));
  if (account.length) items.push({ scopes: account });
  return items;
}

const MAX_FORM_BYTES = 8 * 1024;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new Error('The form is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

// Keys kept in a file (mode 0600) make tokens and sessions outlive a restart on the same data directory.
async function loadOrCreateKeys(file: string | undefined): Promise<StoredKeys> {
  if (file) {
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text !== undefined) return JSON.parse(text) as StoredKeys;
  }
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signing = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: randomBytes(8).toString('hex') };
  const keys: StoredKeys = { signing, cookies: [randomBytes(32).toString('base64url')] };
  if (file) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(keys), { mode: 0o600 });
  }
  return keys;
}
