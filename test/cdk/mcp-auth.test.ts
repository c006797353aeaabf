/**
 * Who may call, in the synthesized template: the `auth` prop (IAM keyed by role or session,
 * OAuth with a NONE URL and the settings in the MCP Lambda's environment, open), caller grants
 * that carry `lambda:InvokedViaFunctionUrl`, CORS for browser clients, and the retention of the
 * status-sync dead-letter queue.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { UserPool } from 'aws-cdk-lib/aws-cognito';
import { AccountPrincipal, ArnPrincipal, Role } from 'aws-cdk-lib/aws-iam';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { OAUTH_ENV, OAuthConfigError } from '../../lambdas/auth/oauth-config.ts';
import { FUNCTION_URL_AUTH_ENV } from '../../lambdas/aws/function-url-principal.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { AsyncMcpServer } from '../../cdk/async-mcp-server.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { consoleNotices, FUNCTION_URL_NONE_NOTICE } from '../support/console-notices.ts';
import { buildStack, logicalIdOf, repoTools, resourcesOf, synthTemplate, testApp, type StackOverrides } from './cdk-test-app.ts';

const ISSUER = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example';
const OTHER_ACCOUNT = '210987654321';

let tools: ToolFolder[];

beforeAll(async () => {
  tools = await repoTools();
});

function mcpEnvironment(stack: AsyncMcpStack, template: Template): Record<string, unknown> {
  return resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(stack.server.mcpFunction)]!.Properties.Environment.Variables;
}

/** A stack plus whatever `extend` adds to it (a caller role), and its template. */
function synthWith(overrides: StackOverrides, extend: (stack: AsyncMcpStack) => void) {
  const app = testApp();
  const stack = buildStack(app, tools, overrides);
  extend(stack);
  return { stack, template: Template.fromStack(stack) };
}

describe('auth: iam (the default)', () => {
  it("is an AWS_IAM URL whose MCP Lambda keys machine roles by role and people's sessions apart (auto)", () => {
    const { stack, template } = synthTemplate(tools);
    template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'AWS_IAM' });
    const variables = mcpEnvironment(stack, template);
    expect(variables).toMatchObject({ [FUNCTION_URL_AUTH_ENV.auth]: 'iam', [FUNCTION_URL_AUTH_ENV.principalScope]: 'auto' });
    expect(Object.keys(variables)).not.toContain(OAUTH_ENV.issuer);
    template.hasOutput('McpAuth', { Value: 'iam' });
    expect(stack.server.auth).toEqual({ kind: 'iam', principalScope: 'auto' });
  });

  it("keeps each assumed-role session apart with principalScope 'session'", () => {
    const { stack, template } = synthTemplate(tools, { auth: { kind: 'iam', principalScope: 'session' } });
    expect(mcpEnvironment(stack, template)).toMatchObject({ [FUNCTION_URL_AUTH_ENV.principalScope]: 'session' });
    expect(() => synthTemplate(tools, { auth: { kind: 'iam', principalScope: 'user' as 'role' } })).toThrow(
      /principalScope must be 'auto', 'role' or 'session'/,
    );
  });

  it('still takes the deprecated functionUrlAuthType, but not together with auth', () => {
    const notices = consoleNotices('error', FUNCTION_URL_NONE_NOTICE);
    const open = synthTemplate(tools, { functionUrlAuthType: FunctionUrlAuthType.NONE });
    expect(mcpEnvironment(open.stack, open.template)).toMatchObject({ [FUNCTION_URL_AUTH_ENV.auth]: 'none' });
    // NONE without OAuth is warned of at synth, whichever option asked for it.
    expect(notices()).toHaveLength(1);
    expect(() => synthTemplate(tools, { auth: { kind: 'iam' }, functionUrlAuthType: FunctionUrlAuthType.AWS_IAM })).toThrow(/not both/);
  });
});

describe('grantInvoke', () => {
  const caller = (stack: AsyncMcpStack) => new Role(stack, 'McpCaller', { assumedBy: new AccountPrincipal(stack.account) });

  it('grants a caller in the account lambda:InvokeFunctionUrl on the AWS_IAM URL and lambda:InvokeFunction only via the Function URL', () => {
    let role!: Role;
    const { stack, template } = synthWith({}, (s) => {
      role = caller(s);
      s.server.grantInvoke(role);
    });
    const fn = { 'Fn::GetAtt': [logicalIdOf(stack.server.mcpFunction), 'Arn'] };
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: logicalIdOf(role) }],
      PolicyDocument: {
        Statement: [
          { Effect: 'Allow', Action: 'lambda:InvokeFunctionUrl', Resource: fn, Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } } },
          { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: fn, Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } } },
        ],
      },
    });
    // Nowhere may the caller invoke the function directly with a hand-made event.
    const statements = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Condition?: unknown }[],
    );
    for (const statement of statements.filter((s) => [s.Action].flat().includes('lambda:InvokeFunction'))) {
      if (JSON.stringify(statement).includes(logicalIdOf(stack.server.mcpFunction))) {
        expect(statement.Condition).toEqual({ Bool: { 'lambda:InvokedViaFunctionUrl': true } });
      }
    }
  });

  it("gives a caller in another account both actions in the function's resource policy, InvokeFunction only via the URL", () => {
    const { stack, template } = synthWith({}, (s) => {
      s.server.grantInvoke(new ArnPrincipal(`arn:aws:iam::${OTHER_ACCOUNT}:role/McpClient`));
    });
    const fn = { 'Fn::GetAtt': [logicalIdOf(stack.server.mcpFunction), 'Arn'] };
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      FunctionName: fn,
      FunctionUrlAuthType: 'AWS_IAM',
      Principal: `arn:aws:iam::${OTHER_ACCOUNT}:role/McpClient`,
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: fn,
      InvokedViaFunctionUrl: true,
      Principal: `arn:aws:iam::${OTHER_ACCOUNT}:role/McpClient`,
    });
    const permissions = Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).filter(
      (permission) => permission.Properties.Principal === `arn:aws:iam::${OTHER_ACCOUNT}:role/McpClient`,
    );
    expect(permissions).toHaveLength(2);
  });

  it('refuses a server whose callers need no IAM grant (OAuth or open)', () => {
    expect(() => synthWith({ auth: { kind: 'oauth', issuer: ISSUER } }, (s) => s.server.grantInvoke(caller(s)))).toThrow(/IAM-authenticated server/);
    expect(() => synthWith({ auth: { kind: 'none' } }, (s) => s.server.grantInvoke(caller(s)))).toThrow(/IAM-authenticated server/);
  });
});

describe('auth: oauth', () => {
  it('opens the URL (NONE) and hands the issuer, audience, scopes and resource URL to the MCP Lambda, which checks every token', () => {
    const { stack, template } = synthTemplate(tools, {
      auth: { kind: 'oauth', issuer: ISSUER, audience: 'api://mcp', requiredScopes: ['mcp/tools', 'mcp/admin'], resourceUrl: 'https://mcp.example.com/mcp' },
    });
    template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE', InvokeMode: 'RESPONSE_STREAM' });
    expect(mcpEnvironment(stack, template)).toMatchObject({
      [FUNCTION_URL_AUTH_ENV.auth]: 'oauth',
      [OAUTH_ENV.issuer]: ISSUER,
      [OAUTH_ENV.audience]: 'api://mcp',
      [OAUTH_ENV.scopes]: 'mcp/tools mcp/admin',
      [FUNCTION_URL_AUTH_ENV.resourceUrl]: 'https://mcp.example.com/mcp',
    });
    template.hasOutput('McpAuth', { Value: 'oauth' });
    // Anyone may call the URL, but nobody may invoke the function directly with a hand-made event.
    const publicGrants = Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).filter((permission) => permission.Properties.Principal === '*');
    expect(publicGrants.map((permission) => permission.Properties).sort((a, b) => String(a.Action).localeCompare(String(b.Action)))).toEqual([
      expect.objectContaining({ Action: 'lambda:InvokeFunction', InvokedViaFunctionUrl: true }),
      expect.objectContaining({ Action: 'lambda:InvokeFunctionUrl', FunctionUrlAuthType: 'NONE' }),
    ]);
    // Open to the network, but not unauthenticated: no "anyone can call" warning.
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('auth type NONE'));
  });

  it('leaves the audience and resource URL to the Lambda when unset (the Function URL, learnt at the first request)', () => {
    const { stack, template } = synthTemplate(tools, { auth: { kind: 'oauth', issuer: ISSUER } });
    const keys = Object.keys(mcpEnvironment(stack, template));
    expect(keys).toContain(OAUTH_ENV.issuer);
    expect(keys).not.toContain(OAUTH_ENV.audience);
    expect(keys).not.toContain(OAUTH_ENV.scopes);
    expect(keys).not.toContain(FUNCTION_URL_AUTH_ENV.resourceUrl);
  });

  it('takes an issuer from a Cognito user pool in the same stack (a token, checked by the Lambda at its cold start instead)', () => {
    const stack = new Stack(testApp(), 'WithPool');
    const pool = new UserPool(stack, 'Users');
    const server = new AsyncMcpServer(stack, 'Server', { tools, auth: { kind: 'oauth', issuer: pool.userPoolProviderUrl } });
    const variables = resourcesOf(Template.fromStack(stack), 'AWS::Lambda::Function')[logicalIdOf(server.mcpFunction)]!.Properties.Environment.Variables;
    expect(variables[OAUTH_ENV.issuer]).toEqual({ 'Fn::GetAtt': [logicalIdOf(pool), 'ProviderURL'] });
  });

  it('fails the synth on settings that cannot work: an http issuer off loopback, an invalid scope', () => {
    expect(() => synthTemplate(tools, { auth: { kind: 'oauth', issuer: 'http://issuer.example.com' } })).toThrow(OAuthConfigError);
    expect(() => synthTemplate(tools, { auth: { kind: 'oauth', issuer: ISSUER, requiredScopes: ['a b'] } })).toThrow(/not a valid scope token/);
    expect(() => synthTemplate(tools, { auth: { kind: 'oauth', issuer: ISSUER, resourceUrl: 'https://mcp.example.com/mcp#x' } })).toThrow(/fragment/);
  });
});

describe('CORS', () => {
  it('is off unless origins are given', () => {
    synthTemplate(tools).template.hasResourceProperties('AWS::Lambda::Url', { Cors: Match.absent() });
  });

  it("exposes WWW-Authenticate and Mcp-Session-Id and allows Authorization, the MCP headers and the tools' Mcp-Param headers", () => {
    const withHeader = tools.map((tool, index) =>
      index === 0
        ? {
            ...tool,
            config: {
              ...tool.config,
              inputSchema: {
                ...tool.config.inputSchema,
                properties: { ...(tool.config.inputSchema.properties as object), region: { type: 'string', 'x-mcp-header': 'Region' } },
              },
            },
          }
        : tool,
    ) as ToolFolder[];
    const app = testApp();
    const template = Template.fromStack(
      buildStack(app, withHeader, { auth: { kind: 'oauth', issuer: ISSUER }, corsAllowedOrigins: ['https://inspector.example.com'] }),
    );
    const [url] = Object.values(resourcesOf(template, 'AWS::Lambda::Url'));
    const cors = url!.Properties.Cors as Record<string, unknown>;
    expect(cors.AllowOrigins).toEqual(['https://inspector.example.com']);
    expect(cors.AllowMethods).toEqual(['GET', 'POST', 'DELETE']);
    expect(cors.AllowHeaders).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'last-event-id', 'mcp-session-id', 'mcp-protocol-version', 'mcp-param-region']),
    );
    expect(cors.ExposeHeaders).toEqual(expect.arrayContaining(['www-authenticate', 'mcp-session-id']));
  });
});

describe('status-sync dead-letter queue retention', () => {
  /** Status sync's dead-letter queue's retention (the Events delivery queues beside it keep their own). */
  const retentionOf = ({ stack, template }: { stack: AsyncMcpStack; template: Template }) =>
    resourcesOf(template, 'AWS::SQS::Queue')[logicalIdOf(stack.server.statusSync!.deadLetterQueue)]!.Properties.MessageRetentionPeriod;
  const synthWith = (folders: ToolFolder[], overrides: StackOverrides) => {
    const stack = buildStack(testApp(), folders, overrides);
    return { stack, template: Template.fromStack(stack) };
  };

  it('defaults to the keepAlive bound: the messages hold whole events and outlive no record', () => {
    expect(retentionOf(synthTemplate(tools))).toEqual(7 * 24 * 3600);
    expect(retentionOf(synthTemplate(tools, { maxKeepAliveSeconds: 3600 }))).toEqual(3600);
  });

  it("follows the tools' own maximum and stays within SQS's bounds: 14 days when keepAlive may be longer or unlimited, a minute at least", () => {
    // The tools' own maximum (7 days here) lowers a longer server bound.
    expect(retentionOf(synthTemplate(tools, { maxKeepAliveSeconds: 30 * 24 * 3600 }))).toEqual(7 * 24 * 3600);
    const noToolMax = tools.map((tool) => ({ ...tool, config: { ...tool.config, maxKeepAliveSeconds: null } })) as ToolFolder[];
    expect(retentionOf(synthWith(noToolMax, { maxKeepAliveSeconds: 30 * 24 * 3600 }))).toEqual(14 * 24 * 3600);
    expect(retentionOf(synthWith(noToolMax, { allowUnlimitedKeepAlive: true, maxKeepAliveSeconds: 3600 }))).toEqual(14 * 24 * 3600);
    expect(retentionOf(synthTemplate(tools, { maxKeepAliveSeconds: 10 }))).toEqual(60);
  });

  it('takes the deadLetterRetention prop, refusing one SQS cannot keep', () => {
    expect(retentionOf(synthTemplate(tools, { deadLetterRetention: Duration.days(2) }))).toEqual(2 * 24 * 3600);
    expect(() => synthTemplate(tools, { deadLetterRetention: Duration.days(15) })).toThrow(/deadLetterRetention must be/);
    expect(() => synthTemplate(tools, { deadLetterRetention: Duration.seconds(30) })).toThrow(/deadLetterRetention must be/);
  });
});
