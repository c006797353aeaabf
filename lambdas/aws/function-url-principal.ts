/**
 * Who is calling, at the Function URL edge: the principal that owns operations is decided
 * here, before the MCP app sees the request, in one of three ways the CDK construct picks
 * (`auth` prop → environment):
 * - `iam`: the Function URL checked a SigV4 signature; the caller's ARN from the event's
 *   request context is the principal. By default an assumed-role session of a machine role
 *   is keyed by its role, and one of a role people share (IAM Identity Center, web identity)
 *   by its role and session;
 * - `oauth`: the URL is open and every request must carry a bearer token this Lambda verifies;
 * - `none`: the URL is open and every caller is one shared principal.
 */
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { PrincipalFetch } from '../auth/authenticated-fetch.ts';
import { withOAuth } from '../auth/authenticated-fetch.ts';
import type { FetchLike } from '../auth/issuer-metadata.ts';
import { OAUTH_ENV, oauthConfigFromEnv, resolveOAuthConfig, type OAuthConfig } from '../auth/oauth-config.ts';
import { createOAuthResourceServer } from '../auth/oauth-resource-server.ts';
import { assumedRoleName, cognitoIdentityPrincipal, iamPrincipal, isPersonRole, roleOfAssumedRole } from '../auth/principals.ts';
import type { Logger } from '../operations/ports.ts';
import type { FunctionUrlFetch } from './function-url-adapter.ts';

/** Environment variables the construct sets on the MCP Lambda (the OAuth ones are `OAUTH_ENV`). */
export const FUNCTION_URL_AUTH_ENV = {
  /** `iam` (the default when unset), `oauth` or `none`. */
  auth: 'ASYNC_MCP_AUTH',
  /** `auto` (the default when unset), `role` or `session`. */
  principalScope: 'ASYNC_MCP_PRINCIPAL_SCOPE',
  /** Comma-separated role names (or prefixes ending in `*`) whose sessions are people, for `auto`. */
  personRoles: 'ASYNC_MCP_PERSON_ROLES',
  /** The URL clients connect to, when it is not the Function URL's own (a custom domain). */
  resourceUrl: 'ASYNC_MCP_RESOURCE_URL',
} as const;

/** The path clients connect to, on the Function URL as on the local server. */
export const MCP_PATH = '/mcp';

/** The one principal every caller of an open (`NONE`, no OAuth) URL shares. */
export const ANONYMOUS_PRINCIPAL = 'anonymous';

/**
 * How an assumed-role caller is keyed.
 * - `auto`: a machine role's sessions are its role, so credentials refreshed under a new
 *   session name keep their operations; the sessions of a role people share are each their
 *   own (`role` plus session name): IAM Identity Center roles (`AWSReservedSSO_*`), the
 *   `personRoles`, and Cognito identity pool users (role plus identity id).
 * - `role`: every session of a role is one principal, people included.
 * - `session`: every session is its own principal.
 */
export type PrincipalScope = 'auto' | 'role' | 'session';

export type FunctionUrlAuth =
  | { kind: 'iam'; principalScope: PrincipalScope; personRoles?: readonly string[] }
  | { kind: 'none' }
  /** `resourceUrl` absent: `https://<the Function URL's domain>/mcp`, learnt from the first request. */
  | { kind: 'oauth'; oauth: Omit<OAuthConfig, 'resourceUrl'>; resourceUrl?: string };

/** The principal, or the response that refuses the request. */
export type FunctionUrlCaller = { ok: true; principal: string } | { ok: false; response: Response };

/**
 * The caller of an `iam` or `none` URL. Under `AWS_IAM` the Function URL puts the verified
 * caller in `requestContext.authorizer.iam`; a request without one did not come through a
 * signed URL and is refused, never served as someone else.
 */
export function functionUrlCaller(event: LambdaFunctionURLEvent, auth: Exclude<FunctionUrlAuth, { kind: 'oauth' }>): FunctionUrlCaller {
  if (auth.kind === 'none') return { ok: true, principal: ANONYMOUS_PRINCIPAL };
  const { authorizer } = event.requestContext as { authorizer?: { iam?: { userArn?: unknown; cognitoIdentity?: unknown } } };
  const arn = authorizer?.iam?.userArn;
  if (typeof arn !== 'string' || !arn.startsWith('arn:')) {
    return {
      ok: false,
      response: Response.json(
        { error: 'forbidden', error_description: 'This endpoint requires a request signed with AWS SigV4 through its Function URL' },
        { status: 403, headers: { 'cache-control': 'no-store' } },
      ),
    };
  }
  return { ok: true, principal: iamCallerPrincipal(arn, cognitoIdentityIdOf(authorizer?.iam?.cognitoIdentity), auth) };
}

/** The principal of a verified IAM caller, by `auth.principalScope` (see {@link PrincipalScope}). */
function iamCallerPrincipal(arn: string, cognitoIdentityId: string | undefined, auth: Extract<FunctionUrlAuth, { kind: 'iam' }>): string {
  const role = assumedRoleName(arn);
  // IAM users, federated users and the root are their own ARN whatever the scope.
  if (role === undefined || auth.principalScope === 'role') return iamPrincipal(roleOfAssumedRole(arn));
  // Every Cognito identity pool user's session has the same name: its identity id names the person.
  if (cognitoIdentityId !== undefined) return cognitoIdentityPrincipal(roleOfAssumedRole(arn), cognitoIdentityId);
  if (auth.principalScope === 'session' || isPersonRole(role, auth.personRoles)) return iamPrincipal(arn);
  return iamPrincipal(roleOfAssumedRole(arn));
}

/** The identity id of a Cognito identity pool caller (`authorizer.iam.cognitoIdentity.identityId`). */
function cognitoIdentityIdOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { identityId } = value as { identityId?: unknown };
  return typeof identityId === 'string' && identityId !== '' ? identityId : undefined;
}

/** The auth settings from the environment; throws naming the variable that cannot work. */
export function functionUrlAuthFromEnv(env: Record<string, string | undefined>): FunctionUrlAuth {
  const resourceUrl = env[FUNCTION_URL_AUTH_ENV.resourceUrl]?.trim() || undefined;
  const oauth = oauthConfigFromEnv(env, resourceUrl ?? '');
  const kind = env[FUNCTION_URL_AUTH_ENV.auth]?.trim() || (oauth ? 'oauth' : 'iam');
  if (kind === 'oauth') {
    if (!oauth) throw new Error(`${FUNCTION_URL_AUTH_ENV.auth}=oauth needs ${OAUTH_ENV.issuer}`);
    const { resourceUrl: _placeholder, ...settings } = oauth;
    return { kind, oauth: settings, ...(resourceUrl ? { resourceUrl } : {}) };
  }
  if (kind !== 'iam' && kind !== 'none') throw new Error(`Environment variable ${FUNCTION_URL_AUTH_ENV.auth} must be iam, oauth or none`);
  // An issuer on an IAM or open URL would be ignored: say so rather than run without OAuth.
  if (oauth) throw new Error(`${OAUTH_ENV.issuer} is set but ${FUNCTION_URL_AUTH_ENV.auth}=${kind}`);
  if (kind === 'none') return { kind };
  const scope = env[FUNCTION_URL_AUTH_ENV.principalScope]?.trim() || 'auto';
  if (scope !== 'auto' && scope !== 'role' && scope !== 'session') {
    throw new Error(`Environment variable ${FUNCTION_URL_AUTH_ENV.principalScope} must be auto, role or session`);
  }
  const personRoles = (env[FUNCTION_URL_AUTH_ENV.personRoles] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return { kind, principalScope: scope, ...(personRoles.length > 0 ? { personRoles } : {}) };
}

export interface FunctionUrlAuthOptions {
  logger: Logger;
  /** For the issuer's metadata and keys. @default globalThis.fetch */
  fetch?: FetchLike;
}

/**
 * The fetch handler the Lambda serves: the caller is decided (or refused) first, then `serve`
 * runs with the principal. With OAuth, the settings are checked now (throws `OAuthConfigError`)
 * and the resource server is built once per container, from the first request's Function URL
 * domain unless a resource URL is set.
 */
export function authenticatedFunctionUrlFetch(serve: PrincipalFetch, auth: FunctionUrlAuth, options: FunctionUrlAuthOptions): FunctionUrlFetch {
  if (auth.kind !== 'oauth') {
    return async (request, event) => {
      const caller = functionUrlCaller(event, auth);
      return caller.ok ? serve(request, caller.principal) : caller.response;
    };
  }
  // The issuer, audience and scopes are checked now, so a bad setting fails the cold start; the
  // stand-in URL is only for that check (the real one may be known only at the first request).
  resolveOAuthConfig({ ...auth.oauth, resourceUrl: auth.resourceUrl ?? `https://localhost${MCP_PATH}` });
  let guarded: ((request: Request) => Promise<Response>) | undefined;
  return async (request, event) => {
    if (!guarded) {
      // Function URLs are https only; the domain is the one AWS routed on, not a client header.
      const resourceUrl = auth.resourceUrl ?? `https://${event.requestContext.domainName}${MCP_PATH}`;
      const server = createOAuthResourceServer({ ...auth.oauth, resourceUrl }, { logger: options.logger, ...(options.fetch ? { fetch: options.fetch } : {}) });
      guarded = withOAuth(server, serve);
    }
    return guarded(request);
  };
}
