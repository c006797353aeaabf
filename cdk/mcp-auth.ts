/**
 * Who may call the MCP Function URL, as the construct's `auth` prop: the URL's auth type and
 * the MCP Lambda's environment (read by lambdas/aws/function-url-principal.ts), checked at
 * synth so a setting that cannot work fails `cdk synth`, not the first request.
 */
import { Annotations, Duration, Token } from 'aws-cdk-lib';
import { FunctionUrlAuthType, HttpMethod, type FunctionUrlCorsOptions } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { OAUTH_ENV, resolveOAuthConfig } from '../lambdas/auth/oauth-config.ts';
import { FUNCTION_URL_AUTH_ENV, MCP_PATH, type PrincipalScope } from '../lambdas/aws/function-url-principal.ts';
import { headerDeclarationsOf } from '../lambdas/tools/header-declarations.ts';
import type { ToolFolder } from '../lambdas/tools/tool-folder.ts';

/** Callers sign requests with SigV4; the Function URL checks the signature and the caller's IAM permissions. */
export interface IamAuth {
  readonly kind: 'iam';
  /**
   * How a caller's operations are keyed. IAM users are their ARN whatever the scope.
   * - `auto`: a machine role's sessions count as the role, so a client whose credentials are
   *   refreshed (a new session name: ECS tasks, EC2 instances, SDK AssumeRole) keeps its
   *   operations; the sessions of roles people share are each their own principal (role
   *   plus session name): IAM Identity Center roles (`AWSReservedSSO_*`), the `personRoles`,
   *   and Cognito identity pool users (role plus identity id).
   * - `role`: every session of a role is one principal. Everyone given one IAM Identity
   *   Center permission set then shares operations: they can read, cancel and answer each other's.
   * - `session`: every session is its own principal.
   * @default 'auto'
   */
  readonly principalScope?: PrincipalScope;
  /**
   * For `auto`: more roles whose sessions are people, by name or by a prefix ending in `*`,
   * such as roles assumed with web identity (OIDC) or SAML. The session name then tells people
   * apart, so the role's trust policy should fix it to the person (an `sts:RoleSessionName`
   * condition), or one person could name another's session.
   * @default - only IAM Identity Center roles
   */
  readonly personRoles?: readonly string[];
}

/**
 * The server is an OAuth 2.1 resource server (MCP authorization): the Function URL is `NONE`
 * and the MCP Lambda checks a bearer token on every request, since a Function URL cannot
 * check JWTs itself.
 */
export interface OAuthAuth {
  readonly kind: 'oauth';
  /** The authorization server's issuer, exactly as its tokens carry it in `iss` (https; http only on loopback). */
  readonly issuer: string;
  /**
   * The `aud` tokens must carry.
   * @default - the resource URL (RFC 8707)
   */
  readonly audience?: string;
  /**
   * Scopes every token must hold; a token without one gets 403 `insufficient_scope`.
   * @default - none
   */
  readonly requiredScopes?: readonly string[];
  /**
   * The URL clients connect to, when it is not the Function URL (a custom domain in front).
   * @default - `https://<the Function URL's domain>/mcp`
   */
  readonly resourceUrl?: string;
}

/** No authentication: anyone with the URL can call every tool, all as one principal. For trials only. */
export interface NoAuth {
  readonly kind: 'none';
}

/** Who may call the MCP endpoint. */
export type McpAuth = IamAuth | OAuthAuth | NoAuth;

/** What `auth` makes of the Function URL and the MCP Lambda. */
export interface ResolvedMcpAuth {
  /** The setting, with `principalScope` filled in for IAM. */
  readonly auth: McpAuth;
  readonly urlAuthType: FunctionUrlAuthType;
  readonly environment: Record<string, string>;
}

/** A role name as IAM allows it, or a prefix of one ending in `*`. */
const PERSON_ROLE = /^[\w+=,.@-]{1,64}\*?$/;

/** The deploy-time warning an explicit `principalScope: 'role'` gets (its id, for acknowledgeWarning). */
export const ROLE_SCOPE_WARNING_ID = 'async-mcp:principalScopeRole';

/**
 * The `auth` prop (or the deprecated `functionUrlAuthType`) resolved; throws naming the
 * setting that cannot work. Values that are tokens (an issuer from a Cognito user pool in
 * the same stack) are checked by the Lambda at its cold start instead. With `scope`, a
 * setting that works but shares operations between people gets a deploy-time warning there.
 */
export function resolveMcpAuth(auth: McpAuth | undefined, functionUrlAuthType: FunctionUrlAuthType | undefined, scope?: IConstruct): ResolvedMcpAuth {
  if (auth !== undefined && functionUrlAuthType !== undefined) {
    throw new Error('Set auth or functionUrlAuthType, not both (functionUrlAuthType is deprecated: use auth)');
  }
  const chosen: McpAuth = auth ?? (functionUrlAuthType === FunctionUrlAuthType.NONE ? { kind: 'none' } : { kind: 'iam' });
  switch (chosen.kind) {
    case 'iam': {
      const principalScope = chosen.principalScope ?? 'auto';
      if (principalScope !== 'auto' && principalScope !== 'role' && principalScope !== 'session') {
        throw new Error(`auth.principalScope must be 'auto', 'role' or 'session', got ${JSON.stringify(principalScope)}`);
      }
      const personRoles = [...(chosen.personRoles ?? [])];
      const invalid = personRoles.find((name) => !PERSON_ROLE.test(name));
      if (invalid !== undefined) {
        throw new Error(`auth.personRoles must be role names or prefixes ending in *, got ${JSON.stringify(invalid)}`);
      }
      if (personRoles.length > 0 && principalScope !== 'auto') {
        throw new Error(`auth.personRoles applies to principalScope 'auto' only, not '${principalScope}'`);
      }
      if (chosen.principalScope === 'role' && scope) {
        Annotations.of(scope).addWarningV2(
          ROLE_SCOPE_WARNING_ID,
          "auth.principalScope is 'role': every session of a role is one principal, so IAM Identity Center users of one permission set " +
            "(AWSReservedSSO_* roles) and people on one web-identity role would share operations: read, cancel and answer each other's. " +
            "Leave it unset ('auto') to key those sessions apart, or use 'session'.",
        );
      }
      return {
        auth: { kind: 'iam', principalScope, ...(personRoles.length > 0 ? { personRoles } : {}) },
        urlAuthType: FunctionUrlAuthType.AWS_IAM,
        environment: {
          [FUNCTION_URL_AUTH_ENV.auth]: 'iam',
          [FUNCTION_URL_AUTH_ENV.principalScope]: principalScope,
          ...(personRoles.length > 0 ? { [FUNCTION_URL_AUTH_ENV.personRoles]: personRoles.join(',') } : {}),
        },
      };
    }
    case 'none':
      return { auth: chosen, urlAuthType: FunctionUrlAuthType.NONE, environment: { [FUNCTION_URL_AUTH_ENV.auth]: 'none' } };
    case 'oauth':
      return { auth: chosen, urlAuthType: FunctionUrlAuthType.NONE, environment: oauthEnvironment(chosen) };
    default:
      throw new Error(`auth.kind must be 'iam', 'oauth' or 'none', got ${JSON.stringify((chosen as { kind: unknown }).kind)}`);
  }
}

function oauthEnvironment(auth: OAuthAuth): Record<string, string> {
  const scopes = auth.requiredScopes ?? [];
  const values = [auth.issuer, auth.audience, auth.resourceUrl, ...scopes].filter((value) => value !== undefined);
  if (!values.some((value) => Token.isUnresolved(value))) {
    // The same checks the Lambda runs; a stand-in resource URL when it is the Function URL's own (unknown at synth).
    resolveOAuthConfig({ ...auth, requiredScopes: scopes, resourceUrl: auth.resourceUrl ?? `https://localhost${MCP_PATH}` });
  }
  return {
    [FUNCTION_URL_AUTH_ENV.auth]: 'oauth',
    [OAUTH_ENV.issuer]: auth.issuer,
    ...(auth.audience === undefined ? {} : { [OAUTH_ENV.audience]: auth.audience }),
    ...(scopes.length > 0 ? { [OAUTH_ENV.scopes]: scopes.join(' ') } : {}),
    ...(auth.resourceUrl === undefined ? {} : { [FUNCTION_URL_AUTH_ENV.resourceUrl]: auth.resourceUrl }),
  };
}

/** Request headers MCP clients send (Streamable HTTP, MCP authorization, SEP-2243). */
const MCP_REQUEST_HEADERS = ['authorization', 'content-type', 'accept', 'last-event-id', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name'];

/**
 * Function URL CORS for browser-based MCP clients. The Function URL answers preflights itself;
 * `WWW-Authenticate` is exposed so a browser client can read the 401's `resource_metadata`,
 * and `Mcp-Session-Id` so it can keep its session. The tools' `Mcp-Param-*` headers are allowed.
 */
export function mcpCorsOptions(allowedOrigins: readonly string[], tools: readonly ToolFolder[]): FunctionUrlCorsOptions {
  if (allowedOrigins.length === 0) throw new Error('corsAllowedOrigins must name at least one origin (or "*")');
  const paramHeaders = tools.flatMap((tool) => {
    const declared = headerDeclarationsOf(tool.config.inputSchema as Record<string, unknown>);
    return declared.ok ? declared.declarations.map((declaration) => `mcp-param-${declaration.headerName.toLowerCase()}`) : [];
  });
  return {
    allowedOrigins: [...allowedOrigins],
    allowedMethods: [HttpMethod.GET, HttpMethod.POST, HttpMethod.DELETE],
    // Listed by name: a `*` in Access-Control-Allow-Headers never covers Authorization.
    allowedHeaders: [...new Set([...MCP_REQUEST_HEADERS, ...paramHeaders])],
    exposedHeaders: ['www-authenticate', 'mcp-session-id', 'mcp-protocol-version'],
    maxAge: Duration.hours(1),
  };
}
