/**
 * The official SDK's `OAuthClientProvider` over a FileLoginStore: the SDK's `auth()` does
 * discovery, registration, PKCE, the token exchange and refresh; this keeps what it produces
 * in the login file. The PKCE verifier and the state stay in memory: they live only as long
 * as the one `login` process that waits for the browser.
 */
import { randomBytes } from 'node:crypto';
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { cliCommand } from '../cli-command.ts';
import { loginKey, type FileLoginStore, type StoredLogin } from '../stores/login-store.ts';

/** How the CLI names itself when it registers (RFC 7591 `client_name`). */
export const CLIENT_NAME = 'async-mcp CLI';

export interface StoredLoginProviderOptions {
  /** The loopback redirect URI of a login in progress; else the one registered before. */
  redirectUrl?: string;
  /** Sends the user to the authorization URL. Left out outside `login`: then a new sign-in is refused with `onLoginNeeded`. */
  onAuthorizationUrl?: (url: URL) => void | Promise<void>;
  /** The error to throw when the stored login can no longer be renewed without the user. */
  onLoginNeeded?: () => Error;
}

export class StoredLoginProvider implements OAuthClientProvider {
  readonly serverUrl: string;
  /** The state sent with the authorization request (RFC 6749 §10.12), to check on the callback. */
  readonly expectedState = randomBytes(16).toString('base64url');
  private verifier = '';
  private login: StoredLogin | undefined;

  constructor(
    private readonly store: FileLoginStore,
    serverUrl: string | URL,
    private readonly options: StoredLoginProviderOptions = {},
  ) {
    this.serverUrl = String(serverUrl);
  }

  /** Loads the stored login once; every read below answers from it. */
  async load(): Promise<StoredLogin | undefined> {
    this.login = await this.store.get(this.serverUrl);
    return this.login;
  }

  get redirectUrl(): string | undefined {
    return this.options.redirectUrl ?? registeredRedirect(this.login?.client);
  }

  get clientMetadata(): OAuthClientMetadata {
    const redirect = this.redirectUrl;
    return {
      client_name: CLIENT_NAME,
      redirect_uris: redirect ? [redirect] : [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A CLI keeps no secret (RFC 8252 §8.4): a public client, protected by PKCE.
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    } as OAuthClientMetadata;
  }

  state(): string {
    return this.expectedState;
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.login?.client;
  }

  async saveClientInformation(client: StoredOAuthClientInformation): Promise<void> {
    await this.change((login) => ({ ...login, client }));
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.login?.tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    await this.change((login) => ({ ...login, tokens, tokensSavedAt: Date.now() }));
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.options.onAuthorizationUrl) throw this.options.onLoginNeeded?.() ?? new Error(`Run ${cliCommand()} login ${this.serverUrl}`);
    await this.options.onAuthorizationUrl(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  async saveDiscoveryState(discovery: OAuthDiscoveryState): Promise<void> {
    await this.change((login) => ({ ...login, discovery }));
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.login?.discovery;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.verifier = '';
      return;
    }
    if (scope === 'tokens') {
      // Another async-mcp process may have refreshed (and so rotated) the tokens since this one read them: use theirs.
      const current = await this.store.get(this.serverUrl);
      if (current?.tokens && current.tokens.refresh_token !== this.login?.tokens?.refresh_token) {
        this.login = current;
        return;
      }
    }
    await this.change(({ client, tokens, tokensSavedAt, discovery, ...rest }) => ({
      ...rest,
      ...(scope === 'all' || scope === 'client' || !client ? {} : { client }),
      ...(scope === 'all' || scope === 'tokens' || !tokens ? {} : { tokens, ...(tokensSavedAt === undefined ? {} : { tokensSavedAt }) }),
      ...(scope === 'all' || scope === 'discovery' || !discovery ? {} : { discovery }),
    }));
  }

  private async change(edit: (login: StoredLogin) => StoredLogin): Promise<void> {
    const base = this.login ?? { resource: loginKey(this.serverUrl), serverUrl: this.serverUrl };
    this.login = edit(base);
    await this.store.put(this.login);
  }
}

/** The loopback redirect URI the client registered, so a refresh names the same client. */
function registeredRedirect(client: StoredOAuthClientInformation | undefined): string | undefined {
  const uris = (client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
  return Array.isArray(uris) && typeof uris[0] === 'string' ? uris[0] : undefined;
}
