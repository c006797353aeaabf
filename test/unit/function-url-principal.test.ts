/**
 * The principal at the Function URL edge, from real-shaped payload 2.0 events: IAM callers
 * keyed by role (or session), unsigned requests under AWS_IAM refused, an open URL's one
 * shared principal, and OAuth bearer tokens checked in the Lambda.
 */
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { toWebRequest } from '../../lambdas/aws/function-url-adapter.ts';
import {
  ANONYMOUS_PRINCIPAL,
  authenticatedFunctionUrlFetch,
  functionUrlAuthFromEnv,
  functionUrlCaller,
  type FunctionUrlAuth,
} from '../../lambdas/aws/function-url-principal.ts';
import { OAuthConfigError } from '../../lambdas/auth/oauth-config.ts';
import type { Logger } from '../../lambdas/operations/ports.ts';
import { startDevIssuer, type DevIssuer } from '../../local/oauth/dev-issuer.ts';

const DOMAIN = 'abc123.lambda-url.eu-west-1.on.aws';
const ACCOUNT = '123456789012';

interface IamIdentity {
  userArn?: string;
  callerId?: string;
}

/** A Function URL event; `iam` is what the URL's AWS_IAM authorizer puts in the request context. */
function urlEvent(options: { iam?: IamIdentity; authorization?: string; path?: string; method?: string } = {}): LambdaFunctionURLEvent {
  const method = options.method ?? 'POST';
  const path = options.path ?? '/mcp';
  const authorizer = options.iam
    ? {
        iam: {
          accessKey: 'ASIAEXAMPLE',
          accountId: ACCOUNT,
          callerId: 'AROAEXAMPLE:session',
          cognitoIdentity: null,
          principalOrgId: null,
          userId: 'AROAEXAMPLE',
          ...options.iam,
        },
      }
    : undefined;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', host: DOMAIN, ...(options.authorization ? { authorization: options.authorization } : {}) },
    body: method === 'POST' ? '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' : undefined,
    isBase64Encoded: false,
    requestContext: {
      accountId: ACCOUNT,
      apiId: 'abc123',
      domainName: DOMAIN,
      domainPrefix: 'abc123',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.1', userAgent: 'test' },
      requestId: 'req-1',
      routeKey: '$default',
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: 1_767_225_600_000,
      ...(authorizer ? { authorizer } : {}),
    } as LambdaFunctionURLEvent['requestContext'],
  };
}

const IAM_ROLE: FunctionUrlAuth = { kind: 'iam', principalScope: 'role' };
const IAM_SESSION: FunctionUrlAuth = { kind: 'iam', principalScope: 'session' };
const sessionArn = (session: string) => `arn:aws:sts::${ACCOUNT}:assumed-role/McpClient/${session}`;

function principalOf(event: LambdaFunctionURLEvent, auth: Exclude<FunctionUrlAuth, { kind: 'oauth' }>): string {
  const caller = functionUrlCaller(event, auth);
  if (!caller.ok) throw new Error(`refused with ${caller.response.status}`);
  return caller.principal;
}

/** Serves through the edge and records the principal the MCP app would get. */
async function through(auth: FunctionUrlAuth, event: LambdaFunctionURLEvent, logger: Logger = silentLogger) {
  const serve = vi.fn(async (request: Request, principal: string) => Response.json({ principal, authorization: request.headers.get('authorization') }));
  const fetch = authenticatedFunctionUrlFetch(serve, auth, { logger });
  const response = await fetch(toWebRequest(event), event);
  return { response, serve };
}

const silentLogger: Logger = { error: () => undefined, warn: () => undefined };

describe('IAM callers (AWS_IAM Function URL)', () => {
  it('an IAM user is its own ARN, marked as an IAM principal', () => {
    const arn = `arn:aws:iam::${ACCOUNT}:user/alice`;
    expect(principalOf(urlEvent({ iam: { userArn: arn } }), IAM_ROLE)).toBe(`iam:${arn}`);
    expect(principalOf(urlEvent({ iam: { userArn: arn } }), IAM_SESSION)).toBe(`iam:${arn}`);
  });

  it('an assumed-role session is keyed by its role by default, so refreshed credentials (a new session name) keep their operations', () => {
    const first = principalOf(urlEvent({ iam: { userArn: sessionArn('i-0abc-1700000000') } }), IAM_ROLE);
    const refreshed = principalOf(urlEvent({ iam: { userArn: sessionArn('i-0abc-1700003600') } }), IAM_ROLE);
    expect(first).toBe(`iam:arn:aws:iam::${ACCOUNT}:role/McpClient`);
    expect(refreshed).toBe(first);
  });

  it("with principalScope 'session' each session is its own principal (the full STS ARN)", () => {
    const first = principalOf(urlEvent({ iam: { userArn: sessionArn('one') } }), IAM_SESSION);
    expect(first).toBe(`iam:${sessionArn('one')}`);
    expect(principalOf(urlEvent({ iam: { userArn: sessionArn('two') } }), IAM_SESSION)).not.toBe(first);
  });

  it('a request with no identity is refused with 403 JSON and never reaches the app as anonymous', async () => {
    const { response, serve } = await through(IAM_ROLE, urlEvent());
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ error: 'forbidden' });
    expect(serve).not.toHaveBeenCalled();
  });

  it('an authorizer with a caller id but no user ARN is refused too (no second kind of key for the same caller)', async () => {
    const event = urlEvent({ iam: { userArn: undefined as unknown as string } });
    delete (event.requestContext as { authorizer?: { iam: IamIdentity } }).authorizer!.iam.userArn;
    const { response, serve } = await through(IAM_ROLE, event);
    expect(response.status).toBe(403);
    expect(serve).not.toHaveBeenCalled();
  });

  it('serves a signed request with the caller as principal', async () => {
    const { response, serve } = await through(IAM_ROLE, urlEvent({ iam: { userArn: sessionArn('s') } }));
    expect(response.status).toBe(200);
    expect(serve).toHaveBeenCalledOnce();
    expect(await response.json()).toMatchObject({ principal: `iam:arn:aws:iam::${ACCOUNT}:role/McpClient` });
  });
});

describe('an open URL (NONE, no OAuth)', () => {
  it('is one shared principal for every caller, whatever identity the event claims', () => {
    expect(principalOf(urlEvent(), { kind: 'none' })).toBe(ANONYMOUS_PRINCIPAL);
    expect(principalOf(urlEvent({ iam: { userArn: `arn:aws:iam::${ACCOUNT}:user/alice` } }), { kind: 'none' })).toBe('anonymous');
  });
});

describe('OAuth (NONE URL, tokens checked in the Lambda)', () => {
  let issuer: DevIssuer;
  const resource = `https://${DOMAIN}/mcp`;
  const oauth = (): FunctionUrlAuth => ({ kind: 'oauth', oauth: { issuer: issuer.issuer } });

  beforeAll(async () => {
    issuer = await startDevIssuer();
  });
  afterAll(() => issuer?.close());

  it('a request without a token gets 401 naming the metadata at the Function URL domain; the app is not called', async () => {
    const { response, serve } = await through(oauth(), urlEvent());
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="https://${DOMAIN}/.well-known/oauth-protected-resource/mcp"`);
    expect(serve).not.toHaveBeenCalled();
  });

  it('serves the protected-resource metadata without a token, the resource being https://<Function URL domain>/mcp', async () => {
    const { response } = await through(oauth(), urlEvent({ method: 'GET', path: '/.well-known/oauth-protected-resource/mcp' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ resource, authorization_servers: [issuer.issuer] });
  });

  it('a valid token for the Function URL is the principal oauth:<iss>#<sub>, and the app never sees the token', async () => {
    const token = await issuer.mint({ sub: 'alice', aud: resource });
    const { response } = await through(oauth(), urlEvent({ authorization: `Bearer ${token}` }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ principal: `oauth:${issuer.issuer}#alice`, authorization: null });
  });

  it('ignores an IAM identity in the event: only the token decides', async () => {
    const { response, serve } = await through(oauth(), urlEvent({ iam: { userArn: `arn:aws:iam::${ACCOUNT}:user/alice` } }));
    expect(response.status).toBe(401);
    expect(serve).not.toHaveBeenCalled();
  });

  it('with a resource URL set (a custom domain), that URL is the audience and the metadata names it', async () => {
    const custom = 'https://mcp.example.com/mcp';
    const auth: FunctionUrlAuth = { kind: 'oauth', oauth: { issuer: issuer.issuer }, resourceUrl: custom };
    const forFunctionUrl = await issuer.mint({ sub: 'alice', aud: resource });
    expect((await through(auth, urlEvent({ authorization: `Bearer ${forFunctionUrl}` }))).response.status).toBe(401);
    const forCustom = await issuer.mint({ sub: 'alice', aud: custom });
    const { response } = await through(auth, urlEvent({ authorization: `Bearer ${forCustom}` }));
    expect(await response.json()).toMatchObject({ principal: `oauth:${issuer.issuer}#alice` });
  });

  it('builds the resource server once per container, from the first request', async () => {
    const serve = vi.fn(async (_request: Request, principal: string) => Response.json({ principal }));
    const fetch = authenticatedFunctionUrlFetch(serve, oauth(), { logger: silentLogger });
    const first = urlEvent();
    await fetch(toWebRequest(first), first);
    // A later event naming another domain does not move the resource.
    const later = urlEvent();
    later.requestContext.domainName = 'other.lambda-url.eu-west-1.on.aws';
    const response = await fetch(toWebRequest(later), later);
    expect(response.headers.get('www-authenticate')).toContain(`https://${DOMAIN}/.well-known/oauth-protected-resource/mcp`);
  });

  it('refuses a bad issuer before the first request (the cold start fails)', () => {
    expect(() =>
      authenticatedFunctionUrlFetch(async () => new Response(), { kind: 'oauth', oauth: { issuer: 'http://issuer.example.com' } }, { logger: silentLogger }),
    ).toThrow(OAuthConfigError);
  });
});

describe('functionUrlAuthFromEnv', () => {
  it('defaults to IAM keyed by role for machine roles and by session for people (auto)', () => {
    expect(functionUrlAuthFromEnv({})).toEqual({ kind: 'iam', principalScope: 'auto' });
  });

  it('reads the principal scope and the open mode', () => {
    expect(functionUrlAuthFromEnv({ ASYNC_MCP_AUTH: 'iam', ASYNC_MCP_PRINCIPAL_SCOPE: 'session' })).toEqual({ kind: 'iam', principalScope: 'session' });
    expect(functionUrlAuthFromEnv({ ASYNC_MCP_AUTH: 'none' })).toEqual({ kind: 'none' });
  });

  it('reads the OAuth settings (scopes split on spaces or commas) and an optional resource URL', () => {
    expect(
      functionUrlAuthFromEnv({
        ASYNC_MCP_AUTH: 'oauth',
        ASYNC_MCP_OAUTH_ISSUER: 'https://issuer.example.com',
        ASYNC_MCP_OAUTH_AUDIENCE: 'api://mcp',
        ASYNC_MCP_OAUTH_SCOPES: 'mcp:tools, mcp:admin',
        ASYNC_MCP_RESOURCE_URL: 'https://mcp.example.com/mcp',
      }),
    ).toEqual({
      kind: 'oauth',
      oauth: { issuer: 'https://issuer.example.com', audience: 'api://mcp', requiredScopes: ['mcp:tools', 'mcp:admin'] },
      resourceUrl: 'https://mcp.example.com/mcp',
    });
    expect(functionUrlAuthFromEnv({ ASYNC_MCP_OAUTH_ISSUER: 'https://issuer.example.com' })).toMatchObject({ kind: 'oauth' });
  });

  it('names the variable that cannot work', () => {
    expect(() => functionUrlAuthFromEnv({ ASYNC_MCP_AUTH: 'open' })).toThrow(/ASYNC_MCP_AUTH must be iam, oauth or none/);
    expect(() => functionUrlAuthFromEnv({ ASYNC_MCP_PRINCIPAL_SCOPE: 'user' })).toThrow(/ASYNC_MCP_PRINCIPAL_SCOPE must be auto, role or session/);
    expect(() => functionUrlAuthFromEnv({ ASYNC_MCP_AUTH: 'oauth' })).toThrow(/ASYNC_MCP_OAUTH_ISSUER/);
    // An issuer on an IAM URL would silently do nothing.
    expect(() => functionUrlAuthFromEnv({ ASYNC_MCP_AUTH: 'iam', ASYNC_MCP_OAUTH_ISSUER: 'https://issuer.example.com' })).toThrow(
      /ASYNC_MCP_OAUTH_ISSUER is set/,
    );
  });
});
