/**
 * The synthesized template of AsyncMcpStack over the repository's tools: what
 * `cdk deploy` creates, checked without an AWS account (issue 5).
 */
import { rmSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { OPERATIONS_TABLE } from '../../lambdas/aws/operations-table.ts';
import { REQUEST_MARGIN_SECONDS, requestTimeoutSeconds } from '../../lambdas/operations/operations-limits.ts';
import { statusChangePattern, statusChangePrefixPattern } from '../../lambdas/aws/status-events.ts';
import { loadToolFolders, type ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { deployedStateMachineArns, STATE_MACHINE_ARN_PREFIX_ENV } from '../../lambdas/tools/state-machine-names.ts';
import { findWorkerPlaceholders, workerSubstitutionKey } from '../../lambdas/tools/worker-placeholders.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { EVENT_PATTERN_MAX_CHARS, STATE_MACHINES_PER_RULE } from '../../cdk/status-sync.ts';
import { consoleNotices, FUNCTION_URL_NONE_NOTICE } from '../support/console-notices.ts';
import { logicalIdOf, repoTools, resourcesOf, synthTemplate, toolsDirWithExtraTool } from './cdk-test-app.ts';

let tools: ToolFolder[];
let stack: AsyncMcpStack;
let template: Template;

beforeAll(async () => {
  tools = await repoTools();
  ({ stack, template } = synthTemplate(tools));
});

/** A `Fn::Join` of literals and pseudo parameters, as CloudFormation would resolve it in us-east-1 of account 123456789012. */
function resolvePseudo(value: unknown): string {
  const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': 'us-east-1', 'AWS::AccountId': '123456789012' };
  const [separator, parts] = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  return parts.map((part) => (typeof part === 'string' ? part : pseudo[(part as { Ref: string }).Ref]!)).join(separator);
}

/** The MCP Lambda's environment variables. */
function mcpEnvironmentOf(of: Template): Record<string, unknown> {
  return resourcesOf(of, 'AWS::Lambda::Function')[logicalIdOf(stack.server.mcpFunction)]!.Properties.Environment.Variables;
}

/** The tools that run as state machines (the others are durable functions: test/cdk/durable-tool-functions.test.ts). */
const machineTools = () => tools.filter((tool) => !tool.durable);
const standardTools = () => machineTools().filter((tool) => tool.config.workflowType === 'STANDARD');
const distinctWorkers = () => [...new Set(tools.flatMap((tool) => tool.workers))];
const durableToolCount = () => tools.length - machineTools().length;
/** The status-change rules of the state machines (status sync has one more for the durable functions). */
const machineRules = (of: Template) =>
  Object.values(resourcesOf(of, 'AWS::Events::Rule')).filter((rule) => rule.Properties.EventPattern.source[0] === 'aws.states');

describe('operations table', () => {
  it('is on-demand with point-in-time recovery and TTL on the attribute the code uses', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: OPERATIONS_TABLE.ttlAttribute, Enabled: true },
      KeySchema: [{ AttributeName: OPERATIONS_TABLE.partitionKey, KeyType: 'HASH' }],
    });
  });

  it('has the owner + creation time index serving listings', () => {
    const index = OPERATIONS_TABLE.ownerIndex;
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [
        {
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });

  it('is retained by default and destroyed only when asked', () => {
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    const destroy = synthTemplate(tools, { tableRemovalPolicy: RemovalPolicy.DESTROY }).template;
    destroy.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });
});

describe('Lambda functions', () => {
  it('are one MCP Lambda, one status-sync Lambda, one webhook delivery Lambda, one per distinct worker and one per durable tool', () => {
    template.resourceCountIs('AWS::Lambda::Function', 3 + distinctWorkers().length + durableToolCount());
    expect([...stack.server.workerFunctions.keys()].sort()).toEqual(distinctWorkers().sort());
  });

  it('all run ESM bundles on nodejs24.x, arm64', () => {
    for (const [id, fn] of Object.entries(resourcesOf(template, 'AWS::Lambda::Function'))) {
      expect(fn.Properties, id).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler' });
    }
  });

  it('give the MCP Lambda the table, the tool catalog, the tools directory, the server key and the limits', () => {
    const mcp = resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(stack.server.mcpFunction)]!;
    const variables = mcp.Properties.Environment.Variables as Record<string, unknown>;
    const expectedKeys = [
      ENV.tableName,
      ENV.toolsDir,
      ENV.secretArn,
      ENV.maxKeepAliveSeconds,
      ENV.allowUnlimitedKeepAlive,
      ENV.maxBlockingSeconds,
      ENV.maxActiveOperations,
      STATE_MACHINE_ARN_PREFIX_ENV,
    ];
    expect(Object.keys(variables)).toEqual(expect.arrayContaining(expectedKeys));
    expect(Object.keys(variables)).not.toContain('TOOL_STATE_MACHINE_ARNS');
    expect(variables[ENV.tableName]).toEqual({ Ref: logicalIdOf(stack.server.operations.table) });
    expect(variables[ENV.toolsDir]).toBe('/var/task/state-machines');
    expect(variables[ENV.secretArn]).toEqual({ Ref: logicalIdOf(stack.server.serverKey.secret) });
    expect(variables[ENV.maxKeepAliveSeconds]).toBe('604800');
    expect(variables[ENV.allowUnlimitedKeepAlive]).toBe('false');
    expect(variables[ENV.maxBlockingSeconds]).toBe('60');
    expect(variables[ENV.maxActiveOperations]).toBe('100');
    // One ARN prefix, whatever the number of tools: each tool's ARN is derived from its deterministic name.
    const prefix = resolvePseudo(variables[STATE_MACHINE_ARN_PREFIX_ENV]);
    const arnOf = deployedStateMachineArns(prefix);
    const names = resourcesOf(template, 'AWS::StepFunctions::StateMachine');
    for (const tool of machineTools()) {
      const machine = stack.server.toolStateMachines.get(tool.config.name)!;
      const name = names[logicalIdOf(machine.stateMachine)]!.Properties.StateMachineName as string;
      expect(arnOf(tool.config.name, tool)).toBe(`arn:aws:states:us-east-1:123456789012:stateMachine:${name}`);
    }
  });

  it("size the MCP Lambda timeout from the bound each request's one deadline uses, so Lambda never ends a request before its stop at the bound", () => {
    const { stack: custom, template: customTemplate } = synthTemplate(tools, { maxBlockingSeconds: 300, maxKeepAliveSeconds: 3600 });
    customTemplate.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: requestTimeoutSeconds(300),
      Environment: { Variables: Match.objectLike({ [ENV.maxBlockingSeconds]: '300', [ENV.maxKeepAliveSeconds]: '3600' }) },
    });
    expect(custom.server.mcpFunction.timeout?.toSeconds()).toBe(300 + REQUEST_MARGIN_SECONDS);
    // Lambda's ceiling is 900 seconds.
    const most = 900 - REQUEST_MARGIN_SECONDS;
    expect(() => synthTemplate(tools, { maxBlockingSeconds: most + 1 })).toThrow(new RegExp(`maxBlockingSeconds must be a whole number from 1 to ${most}`));
  });

  it('pass the per-principal active-operation limit to the MCP and status-sync Lambdas, refusing one that is not a positive whole number', () => {
    const { stack: custom, template: customTemplate } = synthTemplate(tools, { maxActiveOperations: 7 });
    const functions = resourcesOf(customTemplate, 'AWS::Lambda::Function');
    for (const fn of [custom.server.mcpFunction, custom.server.statusSync!.function.function]) {
      expect(functions[logicalIdOf(fn)]!.Properties.Environment.Variables[ENV.maxActiveOperations], fn.node.path).toBe('7');
    }
    for (const bad of [0, -1, 2.5, Number.NaN]) {
      expect(() => synthTemplate(tools, { maxActiveOperations: bad })).toThrow(/maxActiveOperations must be a positive whole number/);
    }
  });

  it('serve handle tools unless handleTools is false: ASYNC_MCP_HANDLE_TOOLS on the MCP Lambda alone', () => {
    const { stack: custom, template: customTemplate } = synthTemplate(tools, { handleTools: false });
    const off = resourcesOf(customTemplate, 'AWS::Lambda::Function');
    expect(off[logicalIdOf(custom.server.mcpFunction)]!.Properties.Environment.Variables[ENV.handleTools]).toBe('0');
    const on = resourcesOf(template, 'AWS::Lambda::Function');
    expect(on[logicalIdOf(stack.server.mcpFunction)]!.Properties.Environment.Variables[ENV.handleTools]).toBe('1');
    for (const [id, fn] of Object.entries(on)) {
      if (id !== logicalIdOf(stack.server.mcpFunction)) expect(fn.Properties.Environment?.Variables?.[ENV.handleTools], id).toBeUndefined();
    }
  });

  it('reserve no concurrency unless asked', () => {
    template.allResourcesProperties('AWS::Lambda::Function', { ReservedConcurrentExecutions: Match.absent() });
  });

  it('reserve concurrency for the MCP, status-sync and worker Lambdas when asked, so blocking calls cannot starve the workers', () => {
    const { stack: custom, template: customTemplate } = synthTemplate(tools, {
      mcpReservedConcurrency: 50,
      statusSyncReservedConcurrency: 5,
      workerReservedConcurrency: 20,
    });
    const functions = resourcesOf(customTemplate, 'AWS::Lambda::Function');
    const reservedOf = (fn: IConstruct) => functions[logicalIdOf(fn)]!.Properties.ReservedConcurrentExecutions as unknown;
    expect(reservedOf(custom.server.mcpFunction)).toBe(50);
    expect(reservedOf(custom.server.statusSync!.function.function)).toBe(5);
    expect(custom.server.workerFunctions.size).toBeGreaterThan(0);
    for (const worker of custom.server.workerFunctions.values()) expect(reservedOf(worker), worker.node.path).toBe(20);
    for (const prop of ['mcpReservedConcurrency', 'statusSyncReservedConcurrency', 'workerReservedConcurrency'] as const) {
      expect(() => synthTemplate(tools, { [prop]: 0 })).toThrow(new RegExp(`${prop} must be a positive whole number, got 0`));
    }
  });

  it('write to their own log groups with a retention, under roles without AWS managed policies', () => {
    // One per function (MCP, status sync, webhook delivery, each worker) and one per state machine.
    template.resourceCountIs('AWS::Logs::LogGroup', 3 + distinctWorkers().length + tools.length);
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    template.allResourcesProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
    template.allResourcesProperties('AWS::Lambda::Function', { LoggingConfig: { LogGroup: Match.anyValue() } });
  });
});

describe('Function URL', () => {
  it('uses AWS_IAM by default, and the stack outputs the URL', () => {
    template.resourceCountIs('AWS::Lambda::Url', 1);
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'AWS_IAM',
      TargetFunctionArn: { 'Fn::GetAtt': [logicalIdOf(stack.server.mcpFunction), 'Arn'] },
    });
    template.hasOutput('McpUrl', {
      Value: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf(stack.server.functionUrl), 'FunctionUrl'] }, 'mcp']] },
    });
    template.hasOutput('OperationsTableName', { Value: { Ref: logicalIdOf(stack.server.operations.table) } });
    template.hasOutput('FunctionUrlAuthType', { Value: 'AWS_IAM' });
    template.hasOutput('McpFunctionArn', { Value: { 'Fn::GetAtt': [logicalIdOf(stack.server.mcpFunction), 'Arn'] } });
    template.hasOutput('StatusSyncDeadLetterQueueUrl', { Value: { Ref: logicalIdOf(stack.server.statusSync!.deadLetterQueue) } });
    // No public invoke permission unless asked.
    expect(Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).map((p) => p.Properties.Principal)).not.toContain('*');
  });

  it('streams responses (invoke mode RESPONSE_STREAM), so SSE events reach the client as they are written, whatever the auth type', () => {
    const notices = consoleNotices('error', FUNCTION_URL_NONE_NOTICE);
    template.hasResourceProperties('AWS::Lambda::Url', { InvokeMode: 'RESPONSE_STREAM' });
    synthTemplate(tools, { functionUrlAuthType: FunctionUrlAuthType.NONE }).template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
    });
    expect(notices()).toHaveLength(1);
  });

  it('is NONE only when asked, with a warning in the synth output', () => {
    const notices = consoleNotices('error', FUNCTION_URL_NONE_NOTICE);
    const open = synthTemplate(tools, { functionUrlAuthType: FunctionUrlAuthType.NONE });
    open.template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE' });
    open.template.hasOutput('FunctionUrlAuthType', { Value: 'NONE' });
    Annotations.fromStack(open.stack).hasWarning('/AsyncMcpTest/Server', Match.stringLikeRegexp('auth type NONE'));
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('auth type NONE'));
    // The synth output says it (at each synth of the open stack).
    expect(notices().length).toBeGreaterThan(0);
    for (const notice of notices()) expect(notice).toContain('auth type NONE and no OAuth');
  });
});

describe('state machines', () => {
  it('are one per tool folder, of the workflow type tool.json names', () => {
    template.resourceCountIs('AWS::StepFunctions::StateMachine', machineTools().length);
    for (const tool of machineTools()) {
      const id = logicalIdOf(stack.server.toolStateMachines.get(tool.config.name)!.stateMachine);
      expect(resourcesOf(template, 'AWS::StepFunctions::StateMachine')[id]!.Properties.StateMachineType).toBe(tool.config.workflowType);
    }
  });

  it('are built inline from definition.asl.json, every worker placeholder substituted by the ARN of its current version', () => {
    for (const tool of machineTools()) {
      const machine = stack.server.toolStateMachines.get(tool.config.name)!.stateMachine;
      const props = resourcesOf(template, 'AWS::StepFunctions::StateMachine')[logicalIdOf(machine)]!.Properties;
      const definitionText = tool.definitionText!;
      expect(props.DefinitionString).toBe(definitionText);
      const expected = Object.fromEntries(
        findWorkerPlaceholders(definitionText).map((worker) => [
          workerSubstitutionKey(worker),
          // A qualified ARN (the Ref of an AWS::Lambda::Version), so an execution keeps the code it started with.
          { Ref: logicalIdOf(stack.server.workerFunctions.get(worker)!.currentVersion) },
        ]),
      );
      expect(props.DefinitionSubstitutions ?? {}).toEqual(expected);
      // Nothing else is left for CloudFormation to substitute.
      const left = [...definitionText.matchAll(/\$\{([^}]+)\}/g)].map((m) => m[1]!);
      expect(
        left.every((key) => key in expected),
        `${tool.config.name}: ${left.join(', ')}`,
      ).toBe(true);
    }
  });

  it('log ALL events without execution data to a vended-logs group', () => {
    template.allResourcesProperties('AWS::StepFunctions::StateMachine', {
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false, Destinations: [Match.anyValue()] },
    });
    const names = Object.values(resourcesOf(template, 'AWS::Logs::LogGroup')).map((group) => group.Properties.LogGroupName as unknown);
    expect(names.filter((name) => typeof name === 'string' && name.startsWith('/aws/vendedlogs/states/'))).toHaveLength(machineTools().length);
  });

  it('trace only when asked', () => {
    for (const machine of Object.values(resourcesOf(template, 'AWS::StepFunctions::StateMachine'))) {
      expect(machine.Properties.TracingConfiguration?.Enabled ?? false).toBe(false);
    }
    template.allResourcesProperties('AWS::Lambda::Function', { TracingConfig: Match.absent() });
    const traced = synthTemplate(tools, { tracing: true }).template;
    traced.allResourcesProperties('AWS::StepFunctions::StateMachine', { TracingConfiguration: { Enabled: true } });
    traced.allResourcesProperties('AWS::Lambda::Function', { TracingConfig: { Mode: 'Active' } });
  });

  it('grow by one when the tools directory gains a folder, with no code change', async () => {
    const dir = toolsDirWithExtraTool('quick_calculation_copy', 'quick_calculation');
    try {
      const more = await loadToolFolders(dir);
      const { template: bigger } = synthTemplate(more);
      bigger.resourceCountIs('AWS::StepFunctions::StateMachine', machineTools().length + 1);
      // The copy reuses its original's worker: still one Lambda per distinct worker.
      bigger.resourceCountIs('AWS::Lambda::Function', 3 + distinctWorkers().length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuse a placeholder whose worker module does not exist, naming it', async () => {
    const dir = toolsDirWithExtraTool('uses_missing_worker', 'quick_calculation');
    try {
      const more = await loadToolFolders(dir);
      const broken = more.map((tool) => (tool.config.name === 'uses_missing_worker' ? { ...tool, workers: ['not_written_yet'] } : tool));
      expect(() => synthTemplate(broken)).toThrow(/Worker "not_written_yet" \(used by uses_missing_worker\) has no module: expected .*not-written-yet\.ts/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('status sync', () => {
  it('forwards RUNNING as well as terminal status changes of every state machine named with the deployed prefix, in one rule', () => {
    // The prefix the MCP Lambda derives each tool's ARN from: the same token in the pattern.
    const arnPrefix = mcpEnvironmentOf(template)[STATE_MACHINE_ARN_PREFIX_ENV];
    expect(machineRules(template)).toHaveLength(1);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { stateMachineArn: [{ prefix: arnPrefix }], status: ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] },
      },
    });
    // EXPRESS machines share the prefix, but Step Functions emits no status events for them.
    expect(resolvePseudo(arnPrefix)).toBe(`arn:aws:states:us-east-1:123456789012:stateMachine:${stack.server.stateMachineNamePrefix}`);
  });

  it('keeps matching a tool removed since, so its running executions still reach status sync', () => {
    const removed = standardTools()[0]!;
    const before = `arn:aws:states:us-east-1:123456789012:stateMachine:${stack.server.toolStateMachines.get(removed.config.name)!.stateMachineName}`;
    const { template: after } = synthTemplate(tools.filter((tool) => tool !== removed));
    const [rule] = machineRules(after);
    const [matcher] = rule!.Properties.EventPattern.detail.stateMachineArn as [{ prefix: unknown }];
    expect(before.startsWith(resolvePseudo(matcher.prefix))).toBe(true);
  });

  it("uses the pattern statusChangePrefixPattern builds, and statusChangePattern (the local bus's) for existing machines", () => {
    const [rule] = machineRules(template);
    const [matcher] = rule!.Properties.EventPattern.detail.stateMachineArn as [{ prefix: string }];
    expect(rule!.Properties.EventPattern).toEqual(statusChangePrefixPattern(matcher.prefix));
  });

  it(`fits ${STATE_MACHINES_PER_RULE} of the longest state machine ARNs in one pattern, and no more`, () => {
    // A generous partition and region, and the longest state machine name (80 characters).
    const longest = `arn:${'p'.repeat(10)}:states:${'r'.repeat(15)}:123456789012:stateMachine:${'n'.repeat(80)}`;
    const length = (count: number) => JSON.stringify(statusChangePattern(Array<string>(count).fill(longest))).length;
    expect(length(STATE_MACHINES_PER_RULE)).toBeLessThanOrEqual(EVENT_PATTERN_MAX_CHARS);
    expect(length(STATE_MACHINES_PER_RULE + 1)).toBeGreaterThan(EVENT_PATTERN_MAX_CHARS);
    // The first rule holds the prefix (no longer than an ARN) and one ARN fewer.
    const withPrefix = JSON.stringify(statusChangePrefixPattern(longest, Array<string>(STATE_MACHINES_PER_RULE - 1).fill(longest))).length;
    expect(withPrefix).toBeLessThanOrEqual(EVENT_PATTERN_MAX_CHARS);
  });

  it("matches any number of deployed machines with one rule, and splits existing machines across rules within EventBridge's 2,048 characters", () => {
    const standard = standardTools()[0]!;
    // In-memory copies: bundling is skipped, so their folders are never read again.
    const many = Array.from({ length: 2 * STATE_MACHINES_PER_RULE + 1 }, (_, i) => ({
      ...standard,
      config: { ...standard.config, name: `${standard.config.name}_${i}` },
    }));
    const { stack: big, template: bigTemplate } = synthTemplate(many);
    bigTemplate.resourceCountIs('AWS::Events::Rule', 1);
    expect(big.server.statusSync!.rules).toHaveLength(1);

    const existing = Array.from({ length: STATE_MACHINES_PER_RULE + 1 }, (_, i) => ({
      ...standard,
      workers: [],
      definitionText: undefined,
      config: { ...standard.config, name: `existing_${i}`, stateMachineArn: `arn:aws:states:us-east-1:123456789012:stateMachine:existing_${i}` },
    }));
    const { stack: mixed, template: mixedTemplate } = synthTemplate([standard, ...existing]);
    mixedTemplate.resourceCountIs('AWS::Events::Rule', 2);
    const matched = Object.values(resourcesOf(mixedTemplate, 'AWS::Events::Rule')).flatMap(
      (rule) => rule.Properties.EventPattern.detail.stateMachineArn as unknown[],
    );
    expect(matched.filter((arn) => typeof arn === 'string').sort()).toEqual(existing.map((tool) => tool.config.stateMachineArn).sort());
    expect(matched.filter((arn) => typeof arn !== 'string')).toHaveLength(1);
    expect(mixed.server.statusSync!.rules).toHaveLength(2);
  });

  it('targets the status-sync Lambda with retries and a dead-letter queue', () => {
    const statusSync = stack.server.statusSync!;
    template.hasResourceProperties('AWS::Events::Rule', {
      Targets: [
        {
          Arn: { 'Fn::GetAtt': [logicalIdOf(statusSync.function.function), 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [logicalIdOf(statusSync.deadLetterQueue), 'Arn'] } },
          RetryPolicy: { MaximumRetryAttempts: Match.anyValue(), MaximumEventAgeInSeconds: Match.anyValue() },
        },
      ],
    });
    // Failed asynchronous invocations of the function land in the same queue.
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalIdOf(statusSync.function.function) },
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalIdOf(statusSync.deadLetterQueue), 'Arn'] } } },
    });
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
  });
});
