/**
 * Who is one principal under IAM, as the CDK side sets it: `auto` by default (machine roles
 * by role, people's sessions apart), `personRoles` carried to the MCP Lambda, and a
 * deploy-time warning when `principalScope: 'role'` is set explicitly, since IAM Identity
 * Center users of one permission set would then share operations.
 */
import { CfnWaitConditionHandle, Stack } from 'aws-cdk-lib';
import { bareApp } from './cdk-test-app.ts';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { FUNCTION_URL_AUTH_ENV, functionUrlAuthFromEnv } from '../../lambdas/aws/function-url-principal.ts';
import { resolveMcpAuth, ROLE_SCOPE_WARNING_ID } from '../../cdk/mcp-auth.ts';

/** A stack to resolve auth in, with one resource: CloudFormation refuses an empty template, and synth would say so. */
function stackNamed(id: string): Stack {
  const stack = new Stack(bareApp(), id);
  new CfnWaitConditionHandle(stack, 'Placeholder');
  return stack;
}

function warningsOf(stack: Stack) {
  return Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('principalScope'));
}

describe('principalScope on the CDK side', () => {
  it("an explicit principalScope 'role' warns at synth that SSO users of one permission set would share operations", () => {
    const stack = stackNamed('Role');
    resolveMcpAuth({ kind: 'iam', principalScope: 'role' }, undefined, stack);
    const [warning] = warningsOf(stack);
    expect(warning?.entry.data).toMatch(/IAM Identity Center users of one permission set \(AWSReservedSSO_\* roles\).*would share operations/);
    expect(warning?.entry.data).toContain(ROLE_SCOPE_WARNING_ID);
  });

  it("the default (auto) and 'session' give no warning", () => {
    for (const auth of [{ kind: 'iam' as const }, { kind: 'iam' as const, principalScope: 'session' as const }, undefined]) {
      const stack = stackNamed('Quiet');
      resolveMcpAuth(auth, undefined, stack);
      expect(warningsOf(stack)).toEqual([]);
    }
  });

  it('personRoles reach the MCP Lambda as one variable the Lambda reads back', () => {
    const resolved = resolveMcpAuth({ kind: 'iam', personRoles: ['GitHubOidcDevelopers', 'People-*'] }, undefined);
    expect(resolved.environment).toEqual({
      [FUNCTION_URL_AUTH_ENV.auth]: 'iam',
      [FUNCTION_URL_AUTH_ENV.principalScope]: 'auto',
      [FUNCTION_URL_AUTH_ENV.personRoles]: 'GitHubOidcDevelopers,People-*',
    });
    expect(functionUrlAuthFromEnv(resolved.environment)).toEqual({ kind: 'iam', principalScope: 'auto', personRoles: ['GitHubOidcDevelopers', 'People-*'] });
  });

  it('refuses personRoles that are no role name, or with a scope that ignores them', () => {
    expect(() => resolveMcpAuth({ kind: 'iam', personRoles: ['arn:aws:iam::123456789012:role/X'] }, undefined)).toThrow(/auth.personRoles must be role names/);
    expect(() => resolveMcpAuth({ kind: 'iam', principalScope: 'role', personRoles: ['People'] }, undefined)).toThrow(/applies to principalScope 'auto' only/);
  });
});
