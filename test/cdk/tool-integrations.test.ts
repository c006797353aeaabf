/**
 * The construct with issue 11's tools: `permissions` on exactly that tool's role, an
 * existing state machine by ARN (no machine created, Start/Describe/Stop on it, in the
 * status rule), service-integration Tasks, cdk-nag clean with a reasoned wildcard, and a
 * stack of 100 tools (no per-tool environment, capped role descriptions, synth in seconds).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validations } from 'aws-cdk-lib';
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { loadToolFolders, type ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { MAX_ROLE_DESCRIPTION } from '../../cdk/bundled-function.ts';
import { DEFAULT_TOOLS_DIR } from '../../cdk/repo-paths.ts';
import { buildStack, copyMachineToolFolders, logicalIdOf, resourcesOf, synthTemplate, testApp } from './cdk-test-app.ts';

const EXISTING_ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:orders-pipeline';
const EXISTING_EXECUTIONS = 'arn:aws:states:us-east-1:123456789012:execution:orders-pipeline:*';
const WILDCARD_REASON = 'Reports are written under a per-day key prefix chosen at run time.';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function writeTool(root: string, name: string, files: Record<string, unknown>): void {
  mkdirSync(join(root, name), { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(join(root, name, file), JSON.stringify(content));
}

/** The repository's tools plus a DynamoDB/S3 integration tool with permissions and an existing machine. */
function integrationToolsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'async-mcp-tools-'));
  dirs.push(dir);
  copyMachineToolFolders(dir);
  writeTool(dir, 'reader', {
    'tool.json': {
      name: 'reader',
      description: 'Reads an item and stores a report',
      inputSchema: { type: 'object' },
      invocation: 'async',
      permissions: [
        { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: 'arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/items' },
        {
          Effect: 'Allow',
          Action: ['s3:PutObject'],
          Resource: 'arn:aws:s3:::reports-bucket/*',
          Condition: { StringEquals: { 's3:x-amz-acl': 'private' } },
          reason: WILDCARD_REASON,
        },
      ],
    },
    'definition.asl.json': {
      StartAt: 'GetItem',
      States: {
        GetItem: {
          Type: 'Task',
          Resource: 'arn:aws:states:::dynamodb:getItem',
          Parameters: { TableName: 'items', Key: { pk: { 'S.$': '$.arguments.id' } } },
          Next: 'Store',
        },
        Store: {
          Type: 'Task',
          Resource: 'arn:aws:states:::aws-sdk:s3:putObject',
          Parameters: { Bucket: 'reports-bucket', Key: 'r', 'Body.$': '$' },
          End: true,
        },
      },
    },
  });
  writeTool(dir, 'orders', {
    'tool.json': {
      name: 'orders',
      description: 'Runs the existing order pipeline',
      inputSchema: { type: 'object' },
      invocation: 'async',
      stateMachineArn: EXISTING_ARN,
      input: 'arguments',
    },
  });
  return dir;
}

function statementsOfRole(template: Template, roleId: string): Statement[] {
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

describe('tools with service integrations and existing state machines', () => {
  let tools: ToolFolder[];
  let stack: AsyncMcpStack;
  let template: Template;
  beforeAll(async () => {
    tools = await loadToolFolders(integrationToolsDir());
    ({ stack, template } = synthTemplate(tools));
  });

  it("put a tool's permissions on exactly its state machine's role", () => {
    const reader = stack.server.toolStateMachines.get('reader')!.stateMachine;
    const own = statementsOfRole(template, logicalIdOf(reader.role));
    expect(own).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'dynamodb:GetItem',
          Resource: { 'Fn::Sub': 'arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/items' },
        }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: 's3:PutObject',
          Resource: 'arn:aws:s3:::reports-bucket/*',
          Condition: { StringEquals: { 's3:x-amz-acl': 'private' } },
        }),
      ]),
    );
    const others = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).filter(
      (policy) => JSON.stringify(policy.Properties.Roles) !== JSON.stringify([{ Ref: logicalIdOf(reader.role) }]),
    );
    expect(JSON.stringify(others)).not.toContain('table/items');
    expect(JSON.stringify(others)).not.toContain('reports-bucket');
  });

  it('deploy a definition with service-integration Tasks as written', () => {
    const reader = stack.server.toolStateMachines.get('reader')!.stateMachine;
    const props = resourcesOf(template, 'AWS::StepFunctions::StateMachine')[logicalIdOf(reader)]!.Properties;
    expect(props.DefinitionString).toBe(tools.find((tool) => tool.config.name === 'reader')!.definitionText);
  });

  it('create no state machine for an existing one', () => {
    expect(stack.server.toolStateMachines.has('orders')).toBe(false);
    expect(stack.server.existingStateMachines.get('orders')!.stateMachineArn).toBe(EXISTING_ARN);
    template.resourceCountIs('AWS::StepFunctions::StateMachine', tools.length - 1);
    expect(JSON.stringify(resourcesOf(template, 'AWS::StepFunctions::StateMachine'))).not.toContain('orders');
  });

  it('let the MCP function start, describe and stop exactly the existing machine and its executions', () => {
    const mcp = statementsOfRole(template, logicalIdOf(stack.server.mcpFunction.role!));
    const actionsOn = (resource: string) =>
      mcp
        .filter((s) => asArray(s.Resource).includes(resource))
        .flatMap((s) => asArray(s.Action))
        .sort();
    expect(actionsOn(EXISTING_ARN)).toEqual(['states:StartExecution']);
    expect(actionsOn(EXISTING_EXECUTIONS)).toEqual(['states:DescribeExecution', 'states:StopExecution']);
  });

  it('let status sync describe and stop its executions, and put its ARN in the status-change rule', () => {
    const statusSync = stack.server.statusSync!;
    const statements = statementsOfRole(template, logicalIdOf(statusSync.function.role));
    const onExisting = statements.filter((s) => asArray(s.Resource).includes(EXISTING_EXECUTIONS)).flatMap((s) => asArray(s.Action));
    expect(onExisting.sort()).toEqual(['states:DescribeExecution', 'states:StopExecution']);
    const patterns = Object.values(resourcesOf(template, 'AWS::Events::Rule')).map((rule) => JSON.stringify(rule.Properties.EventPattern));
    expect(patterns.filter((pattern) => pattern.includes(EXISTING_ARN))).toHaveLength(1);
  });

  it('pass cdk-nag, the wildcard acknowledged with the reason from tool.json', () => {
    const app = testApp();
    const checked = buildStack(app, tools);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(new AwsSolutionsChecks().validateScope(app)).toEqual({ success: true, violations: [] });
    const role = checked.server.toolStateMachines.get('reader')!.stateMachine.role;
    const acknowledged = role.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>));
    expect(acknowledged).toContainEqual(['Annotation::AwsSolutions-IAM5[Resource::arn:aws:s3:::reports-bucket/*]', expect.stringContaining(WILDCARD_REASON)]);
  });
});

describe('a stack of 100 tools', () => {
  it('synthesizes in seconds, with one ARN prefix instead of a per-tool environment and capped role descriptions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'async-mcp-100-tools-'));
    dirs.push(dir);
    for (let i = 0; i < 100; i++) {
      // Long names: the one worker's description lists every tool that uses it.
      const name = `calculation_tool_number_${String(i).padStart(3, '0')}_with_a_long_descriptive_name`;
      cpSync(join(DEFAULT_TOOLS_DIR, 'quick_calculation'), join(dir, name), { recursive: true });
      writeTool(dir, name, {
        'tool.json': {
          name,
          description: 'Computes a op b',
          inputSchema: { type: 'object' },
          invocation: i % 2 ? 'sync' : 'async',
          workflowType: i % 2 ? 'EXPRESS' : 'STANDARD',
        },
      });
    }
    // Shallow load: asl-validator compiles its schemas on every call (about 0.25 s per
    // definition), which the loader tests cover; this measures the construct and synth.
    const tools = await loadToolFolders(dir, { checkDefinitions: false });
    const started = performance.now();
    const { stack, template } = synthTemplate(tools);
    const seconds = (performance.now() - started) / 1000;
    expect(seconds).toBeLessThan(30);

    template.resourceCountIs('AWS::StepFunctions::StateMachine', 100);
    const mcp = resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(stack.server.mcpFunction)]!;
    // Lambda allows 4 KB of environment in all; the catalog no longer grows with the tools.
    expect(JSON.stringify(mcp.Properties.Environment.Variables).length).toBeLessThan(1500);
    for (const role of Object.values(resourcesOf(template, 'AWS::IAM::Role'))) {
      expect((role.Properties.Description as string | undefined)?.length ?? 0).toBeLessThanOrEqual(MAX_ROLE_DESCRIPTION);
    }
    const worker = resourcesOf(template, 'AWS::IAM::Role')[logicalIdOf(stack.server.workerFunctions.get('calculate')!.role!)]!;
    expect(worker.Properties.Description).toMatch(/^Runs: async-mcp worker calculate \(calculation_tool_number_000.*\.\.\.$/);
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('Policy (too )?large'));
  }, 60_000);
});
