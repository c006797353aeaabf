/**
 * A throwaway OAuth issuer on loopback, for tests and for trying OAuth locally: it serves
 * RFC 8414 (or OpenID) metadata and a JWKS, mints access tokens with any claims, and
 * rotates keys. It authenticates nobody; never expose it.
 *
 *   npx tsx local/oauth/dev-issuer.ts [--port 9400] [--sub alice] [--aud URL] [--scope "a b"] [--expires 3600]
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export type DevAlgorithm = 'RS256' | 'ES256' | 'EdDSA';

export interface DevIssuerOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
  /** Issuer path, e.g. `/tenant1` for an issuer `http://127.0.0.1:PORT/tenant1`. @default '' */
  path?: string;
  /**
   * Which metadata document it serves: `oauth` at the RFC 8414 URL, or `openid` at
   * `<issuer>/.well-known/openid-configuration` only (as Amazon Cognito does). @default 'oauth'
   */
  discovery?: 'oauth' | 'openid';
  /** Signing algorithm of the first key. @default 'RS256' */
  algorithm?: DevAlgorithm;
  /** `aud` of minted tokens unless a mint names one. */
  audience?: string;
  /** The `issuer` the metadata claims, to test that clients check it. @default the real issuer */
  advertisedIssuer?: string;
}

export interface MintOptions {
  /** Sign with this key (any key this issuer made, published or retired). @default the current key */
  kid?: string;
  /** Lifetime in seconds, from now. @default 300 */
  expiresIn?: number;
}

export interface DevIssuer {
  readonly issuer: string;
  readonly jwksUri: string;
  readonly tokenEndpoint: string;
  /** The key new tokens are signed with. */
  readonly currentKid: string;
  /** Request paths in arrival order (metadata, JWKS, token), to count fetches. */
  readonly requestLog: readonly string[];
  /** A signed access token; claims given override the defaults (iss, sub, aud, iat, exp, jti). */
  mint(claims?: JWTPayload, options?: MintOptions): Promise<string>;
  /** A new current key; the previous one stays published unless `retirePrevious`. Returns its kid. */
  rotateKey(options?: { algorithm?: DevAlgorithm; retirePrevious?: boolean }): Promise<string>;
  /** The public JWK of a key (the current one by default). */
  publicJwk(kid?: string): JWK;
  close(): Promise<void>;
}

interface DevKey {
  kid: string;
  algorithm: DevAlgorithm;
  privateKey: CryptoKey;
  publicJwk: JWK;
  published: boolean;
}

const MAX_FORM_BYTES = 64 * 1024;

/** Starts the issuer; close it when done. */
export async function startDevIssuer(options: DevIssuerOptions = {}): Promise<DevIssuer> {
  const host = options.host ?? '127.0.0.1';
  const path = (options.path ?? '').replace(/\/+$/, '');
  const keys = new Map<string, DevKey>();
  const requestLog: string[] = [];
  let currentKid = '';
  let origin = '';

  const addKey = async (algorithm: DevAlgorithm): Promise<string> => {
    const { privateKey, publicKey } = await generateKeyPair(algorithm, { extractable: true });
    const kid = randomUUID();
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: algorithm, use: 'sig' };
    keys.set(kid, { kid, algorithm, privateKey, publicJwk, published: true });
    currentKid = kid;
    return kid;
  };
  await addKey(options.algorithm ?? 'RS256');

  const issuer = () => `${origin}${path}`;
  const jwksPath = () => `${path}/.well-known/jwks.json`;
  const metadataPath = options.discovery === 'openid' ? `${path}/.well-known/openid-configuration` : `/.well-known/oauth-authorization-server${path}`;

  const mint = async (claims: JWTPayload = {}, mintOptions: MintOptions = {}): Promise<string> => {
    const key = keys.get(mintOptions.kid ?? currentKid);
    if (!key) throw new Error(`No key ${mintOptions.kid}`);
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = {
      iss: issuer(),
      sub: 'dev-user',
      ...(options.audience ? { aud: options.audience } : {}),
      iat: now,
      exp: now + (mintOptions.expiresIn ?? 300),
      jti: randomUUID(),
      ...claims,
    };
    return new SignJWT(payload).setProtectedHeader({ alg: key.algorithm, kid: key.kid, typ: 'at+jwt' }).sign(key.privateKey);
  };

  const metadata = () => ({
    issuer: options.advertisedIssuer ?? issuer(),
    jwks_uri: `${origin}${jwksPath()}`,
    token_endpoint: `${origin}${path}/token`,
    grant_types_supported: ['client_credentials'],
    response_types_supported: ['token'],
    token_endpoint_auth_methods_supported: ['none'],
    id_token_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
    subject_types_supported: ['public'],
  });

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', message: 'dev issuer failure', error: String(error) }));
      if (!response.headersSent) send(response, 500, { error: 'server_error' });
    });
  });

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', origin);
    requestLog.push(url.pathname);
    if (request.method === 'GET' && url.pathname === metadataPath) return send(response, 200, metadata());
    if (request.method === 'GET' && url.pathname === jwksPath()) {
      return send(response, 200, { keys: [...keys.values()].filter((key) => key.published).map((key) => key.publicJwk) });
    }
    if (request.method === 'POST' && url.pathname === `${path}/token`) return tokenGrant(request, response);
    send(response, 404, { error: 'not_found' });
  }

  // client_credentials with the client id as subject and RFC 8707 `resource` as audience.
  async function tokenGrant(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(request));
    if (form.get('grant_type') !== 'client_credentials') return send(response, 400, { error: 'unsupported_grant_type' });
    const clientId = form.get('client_id');
    if (!clientId) return send(response, 400, { error: 'invalid_client' });
    const scope = form.get('scope') ?? undefined;
    const resource = form.get('resource') ?? undefined;
    const expiresIn = 3600;
    const token = await mint({ sub: clientId, client_id: clientId, ...(scope ? { scope } : {}), ...(resource ? { aud: resource } : {}) }, { expiresIn });
    send(response, 200, { access_token: token, token_type: 'Bearer', expires_in: expiresIn, ...(scope ? { scope } : {}) });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    get issuer() {
      return issuer();
    },
    get jwksUri() {
      return `${origin}${jwksPath()}`;
    },
    get tokenEndpoint() {
      return `${origin}${path}/token`;
    },
    get currentKid() {
      return currentKid;
    },
    requestLog,
    mint,
    async rotateKey(rotation = {}) {
      const previous = keys.get(currentKid);
      if (!previous) throw new Error(`dev issuer: the current key ${currentKid} is missing`);
      const kid = await addKey(rotation.algorithm ?? previous.algorithm);
      if (rotation.retirePrevious) previous.published = false;
      return kid;
    },
    publicJwk(kid = currentKid) {
      const key = keys.get(kid);
      if (!key) throw new Error(`No key ${kid}`);
      return { ...key.publicJwk };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

async function readBody(request: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new Error('form too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '9400' },
      sub: { type: 'string', default: 'alice' },
      aud: { type: 'string', default: 'http://127.0.0.1:3000/mcp' },
      scope: { type: 'string' },
      expires: { type: 'string', default: '3600' },
    },
    strict: true,
  });
  const dev = await startDevIssuer({ port: Number(values.port), audience: values.aud });
  const token = await dev.mint({ sub: values.sub, ...(values.scope ? { scope: values.scope } : {}) }, { expiresIn: Number(values.expires) });
  console.log(`Dev issuer (throwaway, loopback only): ${dev.issuer}
Start the server with:  npm start -- --oauth-issuer ${dev.issuer}${values.aud === 'http://127.0.0.1:3000/mcp' ? '' : ` --oauth-audience ${values.aud}`}

Access token for sub=${values.sub}, aud=${values.aud}, valid ${values.expires} s:
${token}

More tokens (client_id becomes sub, resource becomes aud):
  curl -s ${dev.tokenEndpoint} -d grant_type=client_credentials -d client_id=bob -d resource=${values.aud}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(`Cannot start the dev issuer: ${(error as Error).message}`);
    process.exit(1);
  });
}
