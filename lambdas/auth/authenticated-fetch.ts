/**
 * The MCP endpoint behind an OAuth 2.1 resource server: the protected-resource metadata is
 * answered before anything else, every other request must carry a valid bearer token, and
 * the token's issuer and subject become the principal. The token itself goes no further.
 */
import type { OAuthResourceServer } from './oauth-resource-server.ts';

/** A fetch-style MCP endpoint that takes the authenticated principal. */
export type PrincipalFetch = (request: Request, principal: string) => Promise<Response>;

export function withOAuth(oauth: OAuthResourceServer, serve: PrincipalFetch): (request: Request) => Promise<Response> {
  return async (request) => {
    const metadata = oauth.protectedResourceMetadataResponse(request);
    if (metadata) return metadata;
    const authenticated = await oauth.authenticate(request);
    if (!authenticated.ok) return authenticated.response;
    return serve(withoutAuthorization(request), authenticated.principal);
  };
}

/** The request without its bearer token: "MCP servers MUST NOT pass through the token" it received. */
function withoutAuthorization(request: Request): Request {
  if (!request.headers.has('authorization')) return request;
  const headers = new Headers(request.headers);
  headers.delete('authorization');
  const hasBody = request.body !== null && request.method !== 'GET' && request.method !== 'HEAD';
  return new Request(request.url, {
    method: request.method,
    headers,
    ...(hasBody ? { body: request.body, duplex: 'half' } : {}),
    signal: request.signal,
  } as RequestInit);
}
