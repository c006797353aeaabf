/**
 * A real MCP OAuth client for tests: the official SDK's `OAuthClientProvider` kept in memory,
 * and a user agent that follows the authorization URL through the development server's
 * sign-in and consent pages with fetch (cookies kept, redirects followed by hand) and
 * stops at the client's redirect URI, as a browser would hand it back.
 */
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthClientProvider, OAuthDiscoveryState, OAuthTokens } from '@modelcontextprotocol/client';

/** The loopback redirect URI the clients register (nothing listens: the user agent stops there). */
export const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

/** What a provider stores, in memory, and the authorization URLs it was sent to. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  readonly authorizationUrls: URL[] = [];
  savedTokens: OAuthTokens | undefined;
  private client: OAuthClientInformationMixed | undefined;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;
  private lastState = '';

  private readonly resource: string | undefined;
  private readonly redirectUri: string;

  /** `resource`: ask for a token for this resource instead of the one the server's metadata names. */
  constructor(
    private readonly name: string,
    options: { resource?: string; redirectUri?: string } = {},
  ) {
    this.resource = options.resource;
    this.redirectUri = options.redirectUri ?? REDIRECT_URI;
  }

  get redirectUrl() {
    return this.redirectUri;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this.lastState = crypto.randomUUID();
    return this.lastState;
  }
  get expectedState() {
    return this.lastState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.savedTokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  async validateResourceURL(serverUrl: string | URL, resource?: string): Promise<URL | undefined> {
    return new URL(this.resource ?? resource ?? serverUrl);
  }
}

/** Cookies by name, for one host: enough for oidc-provider's interaction and session cookies. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export interface SignInPages {
  /** The HTML of the sign-in page and of the consent page, as the user saw them. */
  login: string;
  consent: string;
  /** The query of the redirect back to the client (`code`, `state`, `iss`). */
  callback: URLSearchParams;
}

/**
 * Follows `authorizationUrl` as `user`: GET the sign-in page, post the user name, GET the
 * consent page, allow, and return the parameters of the final redirect to the client.
 */
export async function signInWithFetch(authorizationUrl: URL, user: string): Promise<SignInPages> {
  const jar = new CookieJar();
  const pages: Partial<SignInPages> = {};
  let url = authorizationUrl.href;
  let method: 'GET' | 'POST' = 'GET';
  let body: string | undefined;
  for (let hops = 0; hops < 20; hops++) {
    if (url.startsWith(REDIRECT_URI)) {
      const error = new URL(url).searchParams.get('error');
      if (error) throw new Error(`the authorization server answered ${error}: ${new URL(url).searchParams.get('error_description')}`);
      if (!pages.login || !pages.consent) throw new Error('redirected back before both pages were shown');
      return { ...(pages as SignInPages), callback: new URL(url).searchParams };
    }
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(body ? { body } : {}),
    });
    jar.store(response);
    if (response.status >= 300 && response.status < 400) {
      const location = response.headers.get('location');
      if (location === null) throw new Error(`${method} ${url} answered ${response.status} without a Location`);
      url = new URL(location, url).href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${html.slice(0, 500)}`);
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`no form at ${url}: ${html.slice(0, 500)}`);
    if (action.endsWith('/login')) {
      pages.login = html;
      body = new URLSearchParams({ username: user }).toString();
    } else {
      pages.consent = html;
      body = '';
    }
    url = new URL(action, url).href;
    method = 'POST';
  }
  throw new Error('too many redirects');
}
