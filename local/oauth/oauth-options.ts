/**
 * The OAuth settings of `npm start`: `--oauth-issuer`, `--oauth-audience` and `--oauth-scopes`,
 * each falling back to its `ASYNC_MCP_OAUTH_*` variable. Checked before anything starts.
 */
import { OAUTH_ENV, oauthConfigFromEnv, OAuthConfigError, resolveOAuthConfig, type OAuthConfig } from '../../lambdas/auth/oauth-config.ts';

export interface OAuthFlags {
  'oauth-issuer'?: string | undefined;
  'oauth-audience'?: string | undefined;
  'oauth-scopes'?: string | undefined;
}

/**
 * The local stack's `oauth` option, or `undefined` when no issuer is set (OAuth off). Flags
 * win over the environment; throws `OAuthConfigError` for a setting that cannot work.
 */
export function oauthOptionsFrom(flags: OAuthFlags, env: Record<string, string | undefined>): Omit<OAuthConfig, 'resourceUrl'> | undefined {
  const merged = {
    ...env,
    ...(flags['oauth-issuer'] === undefined ? {} : { [OAUTH_ENV.issuer]: flags['oauth-issuer'] }),
    ...(flags['oauth-audience'] === undefined ? {} : { [OAUTH_ENV.audience]: flags['oauth-audience'] }),
    ...(flags['oauth-scopes'] === undefined ? {} : { [OAUTH_ENV.scopes]: flags['oauth-scopes'] }),
  };
  // The resource URL is the server's own, known once it listens: a stand-in for the checks.
  const config = oauthConfigFromEnv(merged, 'http://127.0.0.1/mcp');
  if (!config) {
    if (merged[OAUTH_ENV.audience]?.trim() || merged[OAUTH_ENV.scopes]?.trim()) {
      throw new OAuthConfigError(`--oauth-audience and --oauth-scopes need --oauth-issuer (or ${OAUTH_ENV.issuer})`);
    }
    return undefined;
  }
  resolveOAuthConfig(config);
  const { resourceUrl: _standIn, ...oauth } = config;
  return oauth;
}
