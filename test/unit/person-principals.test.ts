/**
 * Who is one principal under IAM, from Function URL payload 2.0 events as AWS_IAM shapes them
 * (`requestContext.authorizer.iam`: `userArn`, `userId` and `callerId` "<role id>:<session>",
 * `cognitoIdentity`). By default (`auto`) a machine role's sessions are its role, so refreshed
 * credentials keep their operations, while the people who share one role are kept apart: IAM
 * Identity Center users of one permission set, Cognito identity pool users, and the sessions
 * of roles named as people's (web identity). An explicit `role` still merges them.
 */
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { functionUrlAuthFromEnv, functionUrlCaller, type FunctionUrlAuth } from '../../lambdas/aws/function-url-principal.ts';

const ACCOUNT = '123456789012';
const ROLE_ID = 'AROAZ2EXAMPLEROLEID';
const SSO_ROLE = 'AWSReservedSSO_DeployApprovers_0a1b2c3d4e5f6a7b';

interface Identity {
  userArn: string;
  cognitoIdentity?: { amr: string[]; identityId: string; identityPoolId: string } | null;
}

/** A signed request's event: the IAM identity as the Function URL's AWS_IAM auth puts it. */
function signedEvent(identity: Identity): LambdaFunctionURLEvent {
  const session = identity.userArn.split('/').at(-1)!;
  const iam = {
    accessKey: 'ASIAZ2EXAMPLEKEY',
    accountId: ACCOUNT,
    callerId: `${ROLE_ID}:${session}`,
    cognitoIdentity: identity.cognitoIdentity ?? null,
    principalOrgId: null,
    userArn: identity.userArn,
    userId: `${ROLE_ID}:${session}`,
  };
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', host: 'abc123.lambda-url.eu-west-1.on.aws' },
    body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    isBase64Encoded: false,
    requestContext: {
      accountId: ACCOUNT,
      apiId: 'abc123',
      authorizer: { iam },
      domainName: 'abc123.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abc123',
      http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '203.0.113.1', userAgent: 'test' },
      requestId: 'req-1',
      routeKey: '$default',
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: 1_767_225_600_000,
    } as LambdaFunctionURLEvent['requestContext'],
  };
}

const sessionOf = (role: string, session: string) => `arn:aws:sts::${ACCOUNT}:assumed-role/${role}/${session}`;
const roleArn = (role: string) => `arn:aws:iam::${ACCOUNT}:role/${role}`;
const AUTO = functionUrlAuthFromEnv({}) as Exclude<FunctionUrlAuth, { kind: 'oauth' }>;
const ROLE: FunctionUrlAuth = { kind: 'iam', principalScope: 'role' };

function principal(identity: Identity, auth: Exclude<FunctionUrlAuth, { kind: 'oauth' }> = AUTO): string {
  const caller = functionUrlCaller(signedEvent(identity), auth);
  if (!caller.ok) throw new Error(`refused with ${caller.response.status}`);
  return caller.principal;
}

describe('auto, the default', () => {
  it('is the default when ASYNC_MCP_PRINCIPAL_SCOPE is unset', () => {
    expect(AUTO).toEqual({ kind: 'iam', principalScope: 'auto' });
  });

  it('two IAM Identity Center users of one permission set are two principals: role plus session name (the user)', () => {
    const alice = principal({ userArn: sessionOf(SSO_ROLE, 'alice@example.com') });
    const bob = principal({ userArn: sessionOf(SSO_ROLE, 'bob@example.com') });
    expect(alice).toBe(`iam:${sessionOf(SSO_ROLE, 'alice@example.com')}`);
    expect(bob).not.toBe(alice);
    // Identity Center names every session of a user the same, so refreshed credentials keep the user's operations.
    expect(principal({ userArn: sessionOf(SSO_ROLE, 'alice@example.com') })).toBe(alice);
  });

  it('a machine role stays one principal across credential refreshes (a new session name each time)', () => {
    const first = principal({ userArn: sessionOf('McpClient', '8f2d0c7e6b5a4f3e9d1c') });
    expect(first).toBe(`iam:${roleArn('McpClient')}`);
    expect(principal({ userArn: sessionOf('McpClient', 'botocore-session-1767225600') })).toBe(first);
  });

  it('two Cognito identity pool users on one role (both sessions named CognitoIdentityCredentials) are two principals, by identity id', () => {
    const pool = 'eu-west-1:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
    const as = (identityId: string) => ({
      userArn: sessionOf('Cognito_McpUsersAuth_Role', 'CognitoIdentityCredentials'),
      cognitoIdentity: { amr: ['authenticated', 'cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example'], identityId, identityPoolId: pool },
    });
    const one = principal(as('eu-west-1:11111111-2222-3333-4444-555555555555'));
    const two = principal(as('eu-west-1:66666666-7777-8888-9999-000000000000'));
    expect(one).toBe(`iam:${roleArn('Cognito_McpUsersAuth_Role')}#cognito-identity:eu-west-1:11111111-2222-3333-4444-555555555555`);
    expect(two).not.toBe(one);
  });

  it('sessions of a role named in ASYNC_MCP_PERSON_ROLES (web identity: an OIDC role for developers) are kept apart; other roles are not', () => {
    const auth = functionUrlAuthFromEnv({ ASYNC_MCP_PERSON_ROLES: 'GitHubOidcDevelopers, People-*' }) as Exclude<FunctionUrlAuth, { kind: 'oauth' }>;
    expect(auth).toEqual({ kind: 'iam', principalScope: 'auto', personRoles: ['GitHubOidcDevelopers', 'People-*'] });
    expect(principal({ userArn: sessionOf('GitHubOidcDevelopers', 'octocat') }, auth)).toBe(`iam:${sessionOf('GitHubOidcDevelopers', 'octocat')}`);
    expect(principal({ userArn: sessionOf('People-Oncall', 'carol') }, auth)).toBe(`iam:${sessionOf('People-Oncall', 'carol')}`);
    expect(principal({ userArn: sessionOf('McpClient', 'i-0abc') }, auth)).toBe(`iam:${roleArn('McpClient')}`);
  });

  it('an IAM user is its own ARN', () => {
    const arn = `arn:aws:iam::${ACCOUNT}:user/alice`;
    expect(principal({ userArn: arn })).toBe(`iam:${arn}`);
  });
});

describe("an explicit 'role'", () => {
  it('merges every session of a role, IAM Identity Center users and Cognito users included (the CDK warns about it)', () => {
    const alice = principal({ userArn: sessionOf(SSO_ROLE, 'alice@example.com') }, ROLE);
    expect(alice).toBe(`iam:${roleArn(SSO_ROLE)}`);
    expect(principal({ userArn: sessionOf(SSO_ROLE, 'bob@example.com') }, ROLE)).toBe(alice);
  });

  it('the environment still accepts role and session, and refuses anything else naming the variable', () => {
    expect(functionUrlAuthFromEnv({ ASYNC_MCP_PRINCIPAL_SCOPE: 'role' })).toEqual({ kind: 'iam', principalScope: 'role' });
    expect(functionUrlAuthFromEnv({ ASYNC_MCP_PRINCIPAL_SCOPE: 'session' })).toEqual({ kind: 'iam', principalScope: 'session' });
    expect(() => functionUrlAuthFromEnv({ ASYNC_MCP_PRINCIPAL_SCOPE: 'user' })).toThrow(/ASYNC_MCP_PRINCIPAL_SCOPE must be auto, role or session/);
  });
});
