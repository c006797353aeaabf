/**
 * cdk-nag's AWS Solutions rules pass on the synthesized app, as on every `cdk synth`
 * (cdk/app.ts registers the same plugin). Each acknowledgement carries a reason.
 */
import { describe, expect, it } from 'vitest';
import { Stack, Validations, type App } from 'aws-cdk-lib';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { AccountPrincipal, ArnPrincipal, Role } from 'aws-cdk-lib/aws-iam';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { join } from 'node:path';
import { loadToolFolders, type ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { consoleNotices, FUNCTION_URL_NONE_NOTICE } from '../support/console-notices.ts';
import { buildStack, repoTools, testApp, toolsWithInputFixtures, type StackOverrides } from './cdk-test-app.ts';

async function checkedApp(overrides: StackOverrides, tools?: ToolFolder[], extend?: (stack: AsyncMcpStack) => void): Promise<App> {
  const app = testApp();
  const stack = buildStack(app, tools ?? (await repoTools()), overrides);
  extend?.(stack);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return app;
}

/** Every acknowledgement in the tree: construct path, rule id, reason. */
function acknowledgements(app: App): { path: string; id: string; reason: unknown }[] {
  return app.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, unknown>))
      .map(([id, reason]) => ({ path: construct.node.path, id, reason })),
  );
}

describe('AwsSolutionsChecks', () => {
  it('passes with the default props', async () => {
    const app = await checkedApp({});
    expect(() => app.synth()).not.toThrow();
    expect(new AwsSolutionsChecks().validateScope(app)).toEqual({ success: true, violations: [] });
  });

  it('passes with tools that ask the client questions (the request_input worker, task grants, the server key)', async () => {
    const app = await checkedApp({}, await toolsWithInputFixtures());
    expect(() => app.synth()).not.toThrow();
    expect(new AwsSolutionsChecks().validateScope(app)).toEqual({ success: true, violations: [] });
  });

  it("passes with durable tools of every setting, one with permissions of its own (their wildcards acknowledged with the folder's reason)", async () => {
    const fixtures = await loadToolFolders(join(REPO_ROOT, 'test', 'fixtures', 'cdk-durable-tools'));
    const app = await checkedApp({ tracing: true }, [...(await repoTools()), ...fixtures]);
    expect(() => app.synth()).not.toThrow();
    expect(new AwsSolutionsChecks().validateScope(app)).toEqual({ success: true, violations: [] });
  });

  it('passes with tracing on, a NONE Function URL and reserved concurrency', async () => {
    const notices = consoleNotices('error', FUNCTION_URL_NONE_NOTICE);
    const app = await checkedApp({
      tracing: true,
      functionUrlAuthType: FunctionUrlAuthType.NONE,
      mcpReservedConcurrency: 50,
      statusSyncReservedConcurrency: 5,
      workerReservedConcurrency: 20,
    });
    expect(() => app.synth()).not.toThrow();
    expect(new AwsSolutionsChecks().validateScope(app)).toEqual({ success: true, violations: [] });
    // The open URL is ours to warn of (at synth), not cdk-nag's to refuse.
    expect(notices().length).toBeGreaterThan(0);
  });

  it('passes with OAuth on (a NONE URL whose Lambda checks tokens), required scopes and CORS for browser clients', async () => {
    const app = await checkedApp({
      auth: { kind: 'oauth', issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example', requiredScopes: ['mcp/tools'] },
      corsAllowedOrigins: ['https://inspector.example.com'],
    });
    expect(() => app.synth()).not.toThrow();
    expect(new AwsSolutionsChecks().validateScope(app)).toEqual({ success: true, violations: [] });
  });

  it('passes with IAM on, session-scoped principals and callers granted with grantInvoke, in the account and in another', async () => {
    const app = await checkedApp({ auth: { kind: 'iam', principalScope: 'session' } }, undefined, (stack) => {
      stack.server.grantInvoke(new Role(stack, 'McpCaller', { assumedBy: new AccountPrincipal(stack.account) }));
      stack.server.grantInvoke(new ArnPrincipal('arn:aws:iam::210987654321:role/McpClient'));
    });
    expect(() => app.synth()).not.toThrow();
    expect(new AwsSolutionsChecks().validateScope(app)).toEqual({ success: true, violations: [] });
  });

  it('acknowledges only known findings, each with a reason', async () => {
    let stack!: AsyncMcpStack;
    const app = await checkedApp({ tracing: true }, undefined, (built) => {
      stack = built;
    });
    const found = acknowledgements(app);
    expect(found.length).toBeGreaterThan(0);
    for (const { path, id, reason } of found) {
      expect(id, path).toMatch(/^Annotation::AwsSolutions-(SF2|SQS3|S1|SMG4|IAM5\[Resource::.+\])$/);
      expect(typeof reason === 'string' && reason.length >= 40, `${path} ${id}`).toBe(true);
    }
    // Wildcards acknowledged: `*` only where AWS requires it, else one state machine's executions, a worker's published versions, the deployed
    // machines by their name prefix (and their executions), the durable tool functions by theirs (their aliases, executions, and one
    // function's own executions), or the result objects (the bucket's ARN, or the parameter passing it to a nested stack).
    const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const prefix = literally(stack.server.stateMachineNamePrefix);
    const durablePrefix = literally(stack.server.durableFunctionNamePrefix);
    const states = 'arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>';
    const lambda = 'arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>';
    const allowed = new RegExp(
      `\\[Resource::(\\*|${states}:execution:[A-Za-z0-9_.-]+:\\*|${states}:stateMachine:${prefix}\\*|${states}:execution:${prefix}\\*:\\*|${lambda}:function:${durablePrefix}\\*(:live|:\\*/durable-execution/\\*)?|${lambda}:function:${durablePrefix}[A-Za-z0-9_-]+:\\*|<[A-Za-z0-9]*ResultsBucket[A-Za-z0-9]+\\.Arn>/results/\\*|<referenceto[A-Za-z0-9]*ResultsBucket[A-Za-z0-9]+Arn>/results/\\*|<(referenceto)?[A-Za-z0-9]*Workers[A-Za-z0-9]+(\\.)?Arn>:\\*)\\]$`,
    );
    for (const { id } of found.filter((ack) => ack.id.includes('IAM5'))) expect(id).toMatch(allowed);
  });

  it('reports a violation when there is one (the plugin really runs here)', () => {
    const app = testApp();
    const stack = new Stack(app, 'Control');
    new Table(stack, 'NoPitr', { partitionKey: { name: 'pk', type: AttributeType.STRING } });
    const report = new AwsSolutionsChecks().validateScope(app);
    expect(report.success).toBe(false);
    expect(report.violations.map((violation) => violation.ruleName)).toContain('AwsSolutions-DDB3');
  });
});
