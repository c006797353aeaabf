/**
 * A tool folder with `durable.ts` deploys as a Lambda durable function (issue 38): bundled as the
 * workers are, `durableConfig` and sizes from tool.json (or their defaults), a fixed name the MCP
 * Lambda derives, a published version behind the `live` alias it invokes, a role of its own that
 * may do only what the function and its helpers do, in a nested tool stack; the MCP and
 * status-sync functions get the durable grants by the functions' name prefix, status sync a rule
 * for their status changes, and each tool a failure-rate alarm and a dashboard graph.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NestedStack, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { durableStatusChangePattern } from '../../lambdas/aws/durable-status-events.ts';
import { OPERATIONS_TABLE } from '../../lambdas/aws/operations-table.ts';
import { DURABLE_FUNCTION_ARN_PREFIX_ENV, toolDurableFunctionArns, toolFunctionName } from '../../lambdas/tools/durable-function-names.ts';
import { DURABLE_FILE, loadToolFolders, TOOL_FILE, type ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { DURABLE_DEFAULTS, projectRootOf } from '../../cdk/durable-tool-function.ts';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import { BUNDLED_TOOLS_DIR, toolFileManifest } from '../../cdk/tool-asset-commands.ts';
import { type CfnResourceJson, logicalIdOf, repoTools, resourcesOf, synthTemplate } from './cdk-test-app.ts';

const FIXTURES_DIR = join(REPO_ROOT, 'test', 'fixtures', 'cdk-durable-tools');

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

let tools: ToolFolder[];
let stack: AsyncMcpStack;
let template: Template;
let main: Template;
/** A stack whose tools are all state machines. */
let machinesOnly: { stack: AsyncMcpStack; template: Template };

beforeAll(async () => {
  const [repo, fixtures] = await Promise.all([repoTools(), loadToolFolders(FIXTURES_DIR)]);
  tools = [...repo, ...fixtures];
  ({ stack, template, main } = synthTemplate(tools));
  machinesOnly = synthTemplate(repo.filter((tool) => !tool.durable));
}, 120_000);

const durableTool = (name: string) => {
  const tool = stack.server.durableToolFunctions.get(name);
  if (!tool) throw new Error(`no durable function for ${name}`);
  return tool;
};
const functionResource = (name: string): CfnResourceJson => resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(durableTool(name).function)]!;

/** The statements of the policies attached to a role. */
function statementsOf(current: Template, role: IConstruct): Statement[] {
  const roleId = logicalIdOf(role);
  return Object.values(resourcesOf(current, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/** `arn:${Partition}:lambda:${Region}:${AccountId}:function:<tail>` as the grants write it. */
const lambdaArn = (tail: string) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':lambda:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:function:${tail}`]],
});

/** What the statements allow, as [resource, condition] -> sorted actions (CDK merges statements on one resource). */
function allowed(statements: Statement[]): Record<string, string[]> {
  const byResource: Record<string, string[]> = {};
  for (const statement of statements) {
    for (const resource of asArray(statement.Resource)) {
      const key = JSON.stringify([resource, statement.Condition ?? null]);
      byResource[key] = [...(byResource[key] ?? []), ...asArray(statement.Action)].sort();
    }
  }
  return byResource;
}

describe('a durable tool function', () => {
  it("takes durableConfig, memory and the invocation timeout from tool.json's durable block", () => {
    expect(functionResource('sized_durable').Properties).toMatchObject({
      DurableConfig: { ExecutionTimeout: 86_400, RetentionPeriodInDays: 30 },
      MemorySize: 1024,
      Timeout: 300,
    });
  });

  it('runs a year, keeps its history 14 days, and has 512 MB and 900 s per invocation without a durable block', () => {
    expect(DURABLE_DEFAULTS).toEqual({ executionTimeoutSeconds: 31_622_400, retentionDays: 14, memorySize: 512, invocationTimeoutSeconds: 900 });
    expect(functionResource('plain_durable').Properties).toMatchObject({
      DurableConfig: { ExecutionTimeout: 31_622_400, RetentionPeriodInDays: 14 },
      MemorySize: 512,
      Timeout: 900,
    });
  });

  it("is bundled from the folder's durable.ts for Node 24 on arm64, as the workers are, under the name the MCP Lambda derives", () => {
    const prefix = stack.server.durableFunctionNamePrefix;
    for (const name of ['sized_durable', 'plain_durable']) {
      const { Properties } = functionResource(name);
      expect(Properties).toMatchObject({
        FunctionName: toolFunctionName(prefix, name),
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps' } },
      });
    }
  });

  it("is bundled from the folder holding both its durable.ts and the package: the repository, or a user's project with the package installed", () => {
    expect(projectRootOf(join(FIXTURES_DIR, 'sized_durable', 'durable.ts'))).toBe(REPO_ROOT);
    expect(projectRootOf('/home/me/project/state-machines/my_tool/durable.ts', '/home/me/project/node_modules/async-mcp')).toBe('/home/me/project');
    // Outside any folder that holds the package, nothing could bundle it: synth stops, naming the file.
    expect(() => projectRootOf('/srv/tools/my_tool/durable.ts', '/home/me/project/node_modules/async-mcp')).toThrow(
      /\/srv\/tools\/my_tool\/durable\.ts: a durable tool must be inside the project that installs async-mcp/,
    );
  });

  it('lives in a nested tool stack, as the state machines do', () => {
    for (const tool of stack.server.durableToolFunctions.values()) {
      const home = Stack.of(tool.function);
      expect(NestedStack.isNestedStack(home), tool.toolName).toBe(true);
      expect(stack.server.catalogStacks.tools).toContain(home);
    }
  });

  it('publishes a version, kept after later deploys, behind a "live" alias: the ARN the MCP Lambda derives and invokes', () => {
    const name = 'sized_durable';
    const fnId = logicalIdOf(durableTool(name).function);
    const versions = Object.entries(resourcesOf(template, 'AWS::Lambda::Version')).filter(([, v]) => v.Properties.FunctionName?.Ref === fnId);
    expect(versions).toHaveLength(1);
    const [versionId, version] = versions[0]!;
    // An execution replays on the version it started on, which a later deploy leaves in place.
    expect(version.DeletionPolicy).toBe('Retain');
    const aliases = Object.values(resourcesOf(template, 'AWS::Lambda::Alias')).filter((alias) => alias.Properties.FunctionName?.Ref === fnId);
    expect(aliases.map((alias) => alias.Properties)).toEqual([
      { FunctionName: { Ref: fnId }, FunctionVersion: { 'Fn::GetAtt': [versionId, 'Version'] }, Name: 'live' },
    ]);

    // The MCP Lambda's prefix resolves to the same function name, and to its alias.
    const mcp = resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(stack.server.mcpFunction)]!;
    const prefixEnv = mcp.Properties.Environment.Variables[DURABLE_FUNCTION_ARN_PREFIX_ENV];
    expect(prefixEnv).toEqual(lambdaArn(stack.server.durableFunctionNamePrefix));
    const arnOf = toolDurableFunctionArns(`arn:aws:lambda:us-east-1:123456789012:function:${stack.server.durableFunctionNamePrefix}`);
    expect(arnOf(name)).toBe(`arn:aws:lambda:us-east-1:123456789012:function:${functionResource(name).Properties.FunctionName}:live`);
  });

  it('has a role of its own that may checkpoint its own executions, log, write questions and progress, put large results, and what tool.json permits', () => {
    const tool = durableTool('sized_durable');
    const fnName = tool.functionName;
    const statements = statementsOf(template, tool.function.role!);
    const tableArn = { 'Fn::GetAtt': [logicalIdOf(stack.server.operations.table), 'Arn'] };
    const eventsQueueArn = { 'Fn::GetAtt': [logicalIdOf(stack.server.events.queue!), 'Arn'] };
    const logGroupArn = { 'Fn::GetAtt': [logicalIdOf(tool.logGroup), 'Arn'] };
    expect(allowed(statements)).toEqual(
      allowed([
        { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], Resource: tableArn },
        // The events the helpers' writes amount to: event items only, the owner's subscriptions, the delivery queue.
        {
          Effect: 'Allow',
          Action: 'dynamodb:PutItem',
          Resource: tableArn,
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVT#*'] } },
        },
        { Effect: 'Allow', Action: 'dynamodb:Query', Resource: { 'Fn::Join': ['', [tableArn, `/index/${OPERATIONS_TABLE.ownerIndex.name}`]] } },
        { Effect: 'Allow', Action: ['lambda:CheckpointDurableExecution', 'lambda:GetDurableExecutionState'], Resource: lambdaArn(`${fnName}:*`) },
        { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: logGroupArn },
        { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::sized-durable-inputs/*' },
        {
          Effect: 'Allow',
          Action: 's3:PutObject',
          Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf(stack.server.results.bucket), 'Arn'] }, '/results/*']] },
        },
        { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: eventsQueueArn },
      ]),
    );
    // Another durable tool's role has none of this tool's permissions.
    const other = statementsOf(template, durableTool('plain_durable').function.role!);
    expect(other.flatMap((s) => asArray(s.Action))).not.toContain('s3:GetObject');
    expect(JSON.stringify(other)).not.toContain(`:function:${fnName}:*`);
  });

  it("is a folder of tool.json and durable.ts, no definition, in the MCP Lambda's asset: the deployed loader tells it by its durable.ts", () => {
    const sized = tools.find((tool) => tool.config.name === 'sized_durable')!;
    expect(toolFileManifest([sized])).toEqual([
      { target: `${BUNDLED_TOOLS_DIR}/sized_durable`, files: [join(sized.dir, TOOL_FILE), join(sized.dir, DURABLE_FILE)] },
    ]);
  });

  it('finds the table, the results bucket and the events settings in its environment', () => {
    const variables = functionResource('plain_durable').Properties.Environment.Variables as Record<string, unknown>;
    expect(Object.keys(variables)).toEqual(
      expect.arrayContaining([
        'OPERATIONS_TABLE_NAME',
        'RESULTS_BUCKET_NAME',
        'ASYNC_MCP_EVENTS',
        'ASYNC_MCP_EVENTS_DELIVERY_QUEUE_URL',
        'POWERTOOLS_SERVICE_NAME',
        'POWERTOOLS_METRICS_NAMESPACE',
      ]),
    );
  });
});

describe('the grants on the durable functions', () => {
  const prefix = () => stack.server.durableFunctionNamePrefix;
  const durableStatements = (role: IConstruct) =>
    statementsOf(template, role).filter((s) => asArray(s.Action).some((action) => action.startsWith('lambda:') && action.includes('Durable')));

  it('let the MCP Lambda invoke the aliases, describe, stop, list and answer the executions, by the name prefix', () => {
    const statements = statementsOf(template, stack.server.mcpFunction.role!);
    expect(allowed(statements.filter((s) => JSON.stringify(s.Resource).includes(`:function:${prefix()}`)))).toEqual(
      allowed([
        { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: lambdaArn(`${prefix()}*:live`) },
        { Effect: 'Allow', Action: ['lambda:GetDurableExecution', 'lambda:StopDurableExecution'], Resource: lambdaArn(`${prefix()}*:*/durable-execution/*`) },
        { Effect: 'Allow', Action: 'lambda:ListDurableExecutionsByFunction', Resource: lambdaArn(`${prefix()}*`) },
        {
          Effect: 'Allow',
          Action: ['lambda:SendDurableExecutionCallbackFailure', 'lambda:SendDurableExecutionCallbackSuccess'],
          Resource: lambdaArn(`${prefix()}*:*/durable-execution/*`),
        },
      ]),
    );
  });

  it('let status sync describe, stop and list the executions, and neither invoke nor answer', () => {
    const role = stack.server.statusSync!.function.role;
    const statements = statementsOf(template, role).filter((s) => JSON.stringify(s.Resource).includes(':lambda:'));
    expect(allowed(statements)).toEqual(
      allowed([
        { Effect: 'Allow', Action: ['lambda:GetDurableExecution', 'lambda:StopDurableExecution'], Resource: lambdaArn(`${prefix()}*:*/durable-execution/*`) },
        { Effect: 'Allow', Action: 'lambda:ListDurableExecutionsByFunction', Resource: lambdaArn(`${prefix()}*`) },
      ]),
    );
    const sync = resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(stack.server.statusSync!.function.function)]!;
    expect(sync.Properties.Environment.Variables[DURABLE_FUNCTION_ARN_PREFIX_ENV]).toEqual(lambdaArn(prefix()));
  });

  it('are absent from a stack whose tools are all state machines', () => {
    const { stack: other, template: otherTemplate } = machinesOnly;
    expect(other.server.durableToolFunctions.size).toBe(0);
    for (const role of [other.server.mcpFunction.role!, other.server.statusSync!.function.role]) {
      expect(JSON.stringify(statementsOf(otherTemplate, role))).not.toMatch(/Durable/);
    }
    expect(other.server.statusSync!.durableRule).toBeUndefined();
    // The control: the same filter finds them where there are durable tools.
    expect(durableStatements(stack.server.mcpFunction.role!).length).toBeGreaterThan(0);
  });
});

describe('status sync', () => {
  it("gets the durable executions' status changes by a rule on the functions' ARN prefix, retried and dead-lettered as the state machines' are", () => {
    const statusSync = stack.server.statusSync!;
    const rules = resourcesOf(template, 'AWS::Events::Rule');
    const durable = rules[logicalIdOf(statusSync.durableRule!)]!;
    const pattern = durableStatusChangePattern('PREFIX');
    expect(durable.Properties.EventPattern).toEqual({
      source: pattern.source,
      'detail-type': pattern['detail-type'],
      detail: { functionArn: [{ prefix: lambdaArn(stack.server.durableFunctionNamePrefix) }], status: pattern.detail.status },
    });
    const machinesRule = rules[logicalIdOf(statusSync.rules[0]!)]!;
    const [target] = durable.Properties.Targets;
    const [machinesTarget] = machinesRule.Properties.Targets;
    expect(target.Arn).toEqual({ 'Fn::GetAtt': [logicalIdOf(statusSync.function.function), 'Arn'] });
    expect({ dlq: target.DeadLetterConfig, retry: target.RetryPolicy }).toEqual({ dlq: machinesTarget.DeadLetterConfig, retry: machinesTarget.RetryPolicy });
    expect(target.RetryPolicy).toEqual({ MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 21_600 });
  });

  it('exists for a catalog of EXPRESS machines and durable tools: durable executions emit status changes as STANDARD ones do', async () => {
    const [repo, fixtures] = await Promise.all([repoTools(), loadToolFolders(FIXTURES_DIR)]);
    const { stack: built } = synthTemplate([...repo.filter((tool) => tool.config.workflowType === 'EXPRESS' && !tool.durable), ...fixtures]);
    expect(built.server.statusSync?.durableRule).toBeDefined();
  }, 60_000);
});

describe('monitoring', () => {
  /** The metrics an alarm's expression reads, as [namespace, metric name, dimensions]. */
  function alarmMetrics(alarm: CfnResourceJson): unknown[] {
    return (alarm.Properties.Metrics as Array<{ MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown } } }>)
      .filter((metric) => metric.MetricStat)
      .map(({ MetricStat }) => [MetricStat!.Metric.Namespace, MetricStat!.Metric.MetricName, MetricStat!.Metric.Dimensions]);
  }

  it("alarms on each durable tool's failed and timed-out executions (AWS/Lambda, by function), in the function's stack", () => {
    const tool = durableTool('sized_durable');
    const alarm = stack.server.alarms.executionFailureRate.get('sized_durable')!;
    expect(Stack.of(alarm)).toBe(Stack.of(tool.function));
    const json = resourcesOf(template, 'AWS::CloudWatch::Alarm')[logicalIdOf(alarm)]!;
    const byName = [{ Name: 'FunctionName', Value: tool.functionName }];
    expect(alarmMetrics(json)).toEqual([
      ['AWS/Lambda', 'DurableExecutionStarted', byName],
      ['AWS/Lambda', 'DurableExecutionFailed', byName],
      ['AWS/Lambda', 'DurableExecutionTimedOut', byName],
    ]);
    expect(json.Properties.AlarmDescription).toContain('Lambda console');
    expect(json.Properties.AlarmDescription).not.toContain('Step Functions console');
  });

  it("graphs each durable tool's executions on the dashboard, by the function's name", () => {
    const body = JSON.stringify(main.toJSON()).replaceAll('\\"', '"');
    expect(body).toContain('### Durable tool functions (executions)');
    const name = durableTool('sized_durable').functionName;
    for (const metric of [
      'DurableExecutionStarted',
      'DurableExecutionSucceeded',
      'DurableExecutionFailed',
      'DurableExecutionTimedOut',
      'DurableExecutionStopped',
    ]) {
      expect(body).toContain(`["AWS/Lambda","${metric}","FunctionName","${name}",`);
    }
  });
});
