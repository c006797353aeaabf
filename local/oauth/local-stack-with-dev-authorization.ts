/**
 * `npm start -- --oauth-dev`: the local stack as the resource server of a development
 * authorization server started beside it, so real MCP clients go through discovery,
 * registration, sign-in, consent and token exchange against it.
 */
import { resolve } from 'node:path';
import { OAuthConfigError } from '../../lambdas/auth/oauth-config.ts';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../local-stack.ts';
import {
  DEV_MCP_SCOPE,
  DEV_USERS,
  startDevAuthorizationServer,
  type DevAuthorizationServer,
  type DevAuthorizationServerOptions,
} from './dev-authorization-server.ts';

export interface LocalStackWithDevAuthorization extends LocalStack {
  authorizationServer: DevAuthorizationServer;
}

export interface DevAuthorizationSettings extends Omit<DevAuthorizationServerOptions, 'keysFile'> {
  /** Where the banner goes. @default console.log */
  announce?: (line: string) => void;
}

/**
 * Starts the authorization server (on the MCP port + 1, or a free port when the MCP port is
 * 0; keys under `<dataDir>/oauth` when there is one), then the stack trusting it and
 * requiring {@link DEV_MCP_SCOPE}, then prints the issuer and how to sign in.
 * Throws `OAuthConfigError` when `options.oauth` names another issuer.
 */
export async function startLocalStackWithDevAuthorization(
  options: LocalStackOptions,
  settings: DevAuthorizationSettings = {},
): Promise<LocalStackWithDevAuthorization> {
  if (options.oauth) throw new OAuthConfigError('--oauth-dev runs its own issuer; leave out --oauth-issuer, --oauth-audience and --oauth-scopes');
  const mcpPort = options.port ?? 3000;
  const authorizationServer = await startDevAuthorizationServer({
    port: settings.port ?? (mcpPort === 0 ? 0 : mcpPort + 1),
    ...(options.dataDir ? { keysFile: resolve(options.dataDir, 'oauth', 'keys.json') } : {}),
    ...(settings.accessTokenTtlSeconds === undefined ? {} : { accessTokenTtlSeconds: settings.accessTokenTtlSeconds }),
    ...(settings.extraResources ? { extraResources: settings.extraResources } : {}),
  });
  let stack: LocalStack;
  try {
    stack = await startLocalStack({ ...options, oauth: { issuer: authorizationServer.issuer, requiredScopes: [DEV_MCP_SCOPE] } });
  } catch (error) {
    await authorizationServer.close();
    throw error;
  }
  authorizationServer.setResourceUrl(stack.url.href);
  const announce = settings.announce ?? console.log;
  announce(`OAuth (development only): authorization server ${authorizationServer.issuer}, tokens for ${stack.url.href} with scope ${DEV_MCP_SCOPE}`);
  announce(`  Sign in with any user name, no password (e.g. ${DEV_USERS.join(' or ')}); each name is its own principal.`);
  return {
    ...stack,
    authorizationServer,
    close: async () => {
      await stack.close();
      await authorizationServer.close();
    },
  };
}
