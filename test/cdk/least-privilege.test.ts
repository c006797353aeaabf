/**
 * Every IAM statement names specific ARNs (issue 5: "no `*` resource except where AWS
 * requires it, each such case acknowledged with a reason"), and each role gets only
 * what its code uses. The checks read every tool folder, so they hold for a user's own tool
 * as for the project's: the README's word_count example is among the tools (issue 28).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { OPERATIONS_TABLE } from '../../lambdas/aws/operations-table.ts';
import { loadToolFolders, type ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { BUILT_IN_WORKERS, workerModuleFile } from '../../lambdas/tools/worker-placeholders.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { DEFAULT_WORKERS_DIR, REPO_ROOT } from '../../cdk/repo-paths.ts';
import { logicalIdOf, resourcesOf, synthTemplate, toolsWithInputFixtures } from './cdk-test-app.ts';
import { STATE_MACHINE_LOG_DELIVERY_ACTIONS } from '../support/log-delivery-actions.ts';
import { writeWordCountExample } from '../support/markdown-blocks.ts';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

/** Actions AWS authorizes only on Resource "*" (CDK adds them for logging and tracing). */
const WILDCARD_ONLY_ACTIONS = new Set<string>([
  ...STATE_MACHINE_LOG_DELIVERY_ACTIONS,
  'xray:PutTraceSegments',
  'xray:PutTelemetryRecords',
  'xray:GetSamplingRules',
  'xray:GetSamplingTargets',
]);

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

function allStatements(template: Template): Statement[] {
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy')).flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/** The statements of the policies attached to a role. */
function statementsOf(template: Template, role: IConstruct): Statement[] {
  const roleId = logicalIdOf(role);
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

const actionsOf = (statements: Statement[]) => [...new Set(statements.flatMap((s) => asArray(s.Action)))].sort();

/** An execution ARN pattern: `arn:…:execution:<one tool state machine's name>:*`. */
function isExecutionPattern(resource: unknown, stateMachineNames: readonly string[]): boolean {
  const last = lastPart(resource);
  return typeof last === 'string' && stateMachineNames.some((name) => last === `:execution:${name}:*`);
}

/** The deployed machines by their name prefix, `arn:…:stateMachine:<prefix>*`, or their executions, `arn:…:execution:<prefix>*:*`. */
function isPrefixPattern(resource: unknown): boolean {
  const prefix = stack.server.stateMachineNamePrefix;
  const last = lastPart(resource);
  return last === `:stateMachine:${prefix}*` || last === `:execution:${prefix}*:*`;
}

/** `<worker ARN>:*`, every published version of one worker. */
function isWorkerVersions(resource: unknown): boolean {
  return [...stack.server.workerFunctions.values()].some((fn) => JSON.stringify(resource) === JSON.stringify(workerVersions(fn)));
}

/** `arn:…:function:<worker>:*` as the grants write it. */
function workerVersions(fn: IConstruct) {
  return { 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf(fn), 'Arn'] }, ':*']] };
}

/**
 * The durable tool functions by their name prefix (`arn:…:function:<prefix>*` and its alias and
 * executions), or one durable function's own executions (`arn:…:function:<name>:*`).
 */
function isDurablePattern(resource: unknown): boolean {
  const last = lastPart(resource);
  if (typeof last !== 'string') return false;
  const prefix = stack.server.durableFunctionNamePrefix;
  const byPrefix = [`:function:${prefix}*`, `:function:${prefix}*:live`, `:function:${prefix}*:*/durable-execution/*`];
  const own = [...stack.server.durableToolFunctions.values()].map((tool) => `:function:${tool.functionName}:*`);
  return [...byPrefix, ...own].includes(last);
}

/** What the durable grants and a durable function's checkpoints allow. */
const DURABLE_ACTIONS = new Set([
  'lambda:InvokeFunction',
  'lambda:GetDurableExecution',
  'lambda:StopDurableExecution',
  'lambda:ListDurableExecutionsByFunction',
  'lambda:SendDurableExecutionCallbackSuccess',
  'lambda:SendDurableExecutionCallbackFailure',
  'lambda:CheckpointDurableExecution',
  'lambda:GetDurableExecutionState',
]);

function lastPart(resource: unknown): unknown {
  return (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join']?.[1].at(-1);
}

/** The results bucket's objects under `results/`, as the grants name them. */
function resultObjects() {
  return { 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf(stack.server.results.bucket), 'Arn'] }, '/results/*']] };
}

const s3Statements = (statements: Statement[]) => statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('s3:')));

const tableArn = () => ({ 'Fn::GetAtt': [logicalIdOf(stack.server.operations.table), 'Arn'] });
const ownerIndexArn = () => ({ 'Fn::Join': ['', [tableArn(), `/index/${OPERATIONS_TABLE.ownerIndex.name}`]] });
const eventsQueueArn = () => ({ 'Fn::GetAtt': [logicalIdOf(stack.server.events.queue!), 'Arn'] });
/** Items whose partition key starts with one of `prefixes` (`EVT#*` events, `SUB#*` subscriptions), and no operation record. */
const onItemsOf = (...prefixes: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes } });
const withAction = (statements: Statement[], action: string) => statements.filter((s) => asArray(s.Action).includes(action));

/**
 * An Events participant that records occurrences (status sync, report_progress, request_input): it appends
 * event items only, queries the owner index for the principal's subscriptions, and enqueues delivery jobs
 * on the delivery queue only.
 */
function expectEventsWriterGrants(statements: Statement[], name: string): void {
  const puts = withAction(statements, 'dynamodb:PutItem');
  expect(
    puts.map((s) => [asArray(s.Action), asArray(s.Resource), s.Condition]),
    name,
  ).toEqual([[['dynamodb:PutItem'], [tableArn()], onItemsOf('EVT#*')]]);
  expect(
    withAction(statements, 'dynamodb:Query').map((s) => [asArray(s.Action), asArray(s.Resource)]),
    name,
  ).toEqual([[['dynamodb:Query'], [ownerIndexArn()]]]);
  expect(
    withAction(statements, 'sqs:SendMessage')
      .filter((s) => JSON.stringify(s.Resource).includes(logicalIdOf(stack.server.events.queue!)))
      .map((s) => [asArray(s.Action), asArray(s.Resource)]),
    name,
  ).toEqual([[['sqs:SendMessage'], [eventsQueueArn()]]]);
}

let tools: ToolFolder[];
let stack: AsyncMcpStack;
let template: Template;
let traced: Template;
let stateMachineNames: string[];
let examples: string;
let workersDir: string;

beforeAll(async () => {
  // A user's tool as the README adds it: its worker beside copies of the project's, under the
  // repository (git-ignored .scratch/), where the CDK takes function entries from.
  mkdirSync(join(REPO_ROOT, '.scratch'), { recursive: true });
  examples = mkdtempSync(join(REPO_ROOT, '.scratch', 'least-privilege-'));
  workersDir = join(examples, 'workers');
  cpSync(DEFAULT_WORKERS_DIR, workersDir, { recursive: true });
  writeWordCountExample('README.md', join(examples, 'tools'), workersDir);
  // Machines that ask the client questions too, so the built-in worker and the task grants are checked.
  tools = [...(await toolsWithInputFixtures()), ...(await loadToolFolders(join(examples, 'tools')))];
  ({ stack, template } = synthTemplate(tools, { workersDir }));
  traced = synthTemplate(tools, { tracing: true, workersDir }).template;
  stateMachineNames = [...stack.server.toolStateMachines.values()].map((machine) => machine.stateMachineName);
}, 120_000);
afterAll(() => {
  rmSync(examples, { recursive: true, force: true });
});

it("has the README's word_count among the tools, with its own worker", () => {
  expect(tools.find((tool) => tool.config.name === 'word_count')?.workers).toEqual(['count_words']);
  expect(stack.server.workerFunctions.has('count_words')).toBe(true);
});

describe('every policy statement', () => {
  it.each([
    ['default props', () => template],
    ['tracing on', () => traced],
  ])('allows only, and names specific resources (%s)', (_, current) => {
    const statements = allStatements(current());
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      expect(statement.Effect).toBe('Allow');
      const actions = asArray(statement.Action);
      expect(
        actions.filter((action) => action.includes('*')),
        JSON.stringify(statement),
      ).toEqual([]);
      for (const resource of asArray(statement.Resource)) {
        if (resource === '*') {
          // Where AWS requires "*": acknowledged in the cdk-nag test with a reason.
          expect(
            actions.filter((action) => !WILDCARD_ONLY_ACTIONS.has(action)),
            JSON.stringify(statement),
          ).toEqual([]);
        } else if (typeof resource === 'string') {
          throw new Error(`literal resource ${resource} in ${JSON.stringify(statement)}`);
        } else if (JSON.stringify(resource) === JSON.stringify(resultObjects())) {
          // Result objects are named per result: scoped to the results prefix of the one bucket.
          expect(
            actions.every((action) => action === 's3:GetObject' || action === 's3:PutObject'),
            JSON.stringify(statement),
          ).toBe(true);
        } else if (isWorkerVersions(resource)) {
          // A worker's published versions: a running execution calls the one it started with.
          expect(actions, JSON.stringify(statement)).toEqual(['lambda:InvokeFunction']);
        } else if (isDurablePattern(resource)) {
          // The durable tool functions by their name prefix, or one function's own executions (named per call, under a version).
          expect(
            actions.filter((action) => !DURABLE_ACTIONS.has(action)),
            JSON.stringify(statement),
          ).toEqual([]);
        } else if (JSON.stringify(resource).includes('*')) {
          // Executions are named per call: scoped to one state machine's executions, or to the deployed machines' by their name prefix.
          expect(isExecutionPattern(resource, stateMachineNames) || isPrefixPattern(resource), JSON.stringify(resource)).toBe(true);
          expect(actions.every((action) => action.startsWith('states:'))).toBe(true);
        }
      }
    }
  });
});

describe('the MCP Lambda', () => {
  it('may read and write records and query the owner index, never Scan', () => {
    const statements = statementsOf(template, stack.server.mcpFunction.role!);
    const dynamo = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')));
    expect(actionsOf(dynamo)).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    const tableArn = { 'Fn::GetAtt': [logicalIdOf(stack.server.operations.table), 'Arn'] };
    expect(dynamo.flatMap((s) => asArray(s.Resource))).toEqual([tableArn, { 'Fn::Join': ['', [tableArn, `/index/${OPERATIONS_TABLE.ownerIndex.name}`]] }]);
  });

  it("may start, describe, stop and answer the deployed tool executions, by the machines' name prefix", () => {
    const statements = statementsOf(template, stack.server.mcpFunction.role!);
    const states = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('states:')));
    const allowed = (action: string) => states.filter((s) => asArray(s.Action).includes(action)).flatMap((s) => asArray(s.Resource).map((r) => lastPart(r)));
    const prefix = stack.server.stateMachineNamePrefix;
    // Every deployed machine is named `<prefix><tool>`: one statement covers them all, and the tools removed since.
    for (const machine of stack.server.toolStateMachines.values()) expect(machine.stateMachineName.startsWith(prefix)).toBe(true);
    const machines = [`:stateMachine:${prefix}*`];
    const executions = [`:execution:${prefix}*:*`];
    expect(allowed('states:StartExecution')).toEqual(machines);
    if (tools.some((t) => t.config.workflowType === 'EXPRESS')) expect(allowed('states:StartSyncExecution')).toEqual(machines);
    expect(allowed('states:DescribeExecution')).toEqual(executions);
    expect(allowed('states:StopExecution')).toEqual(executions);
    expect(allowed('states:SendTaskSuccess')).toEqual(machines);
    expect(allowed('states:SendTaskFailure')).toEqual(machines);
    expect(actionsOf(states)).toEqual(
      [
        'states:DescribeExecution',
        'states:SendTaskFailure',
        'states:SendTaskSuccess',
        'states:StartExecution',
        'states:StopExecution',
        ...(tools.some((t) => t.config.workflowType === 'EXPRESS') ? ['states:StartSyncExecution'] : []),
      ].sort(),
    );
  });

  it('may read and write result objects (resources/read, and spilling a large output), on the results prefix only', () => {
    const s3 = s3Statements(statementsOf(template, stack.server.mcpFunction.role!));
    expect(actionsOf(s3)).toEqual(['s3:GetObject', 's3:PutObject']);
    for (const statement of s3) expect(asArray(statement.Resource)).toEqual([resultObjects()]);
  });

  it('may read the server key, and no other secret', () => {
    const secrets = statementsOf(template, stack.server.mcpFunction.role!).filter((s) => asArray(s.Action).some((a) => a.startsWith('secretsmanager:')));
    expect(actionsOf(secrets)).toEqual(['secretsmanager:GetSecretValue']);
    expect(secrets.flatMap((s) => asArray(s.Resource))).toEqual([{ Ref: logicalIdOf(stack.server.serverKey.secret) }]);
  });

  it("may send webhook delivery jobs (a subscription's verification) to the delivery queue, and no other queue", () => {
    const sqs = statementsOf(template, stack.server.mcpFunction.role!).filter((s) => asArray(s.Action).some((a) => a.startsWith('sqs:')));
    expect(sqs.map((s) => [asArray(s.Action), asArray(s.Resource)])).toEqual([[['sqs:SendMessage'], [eventsQueueArn()]]]);
  });

  it('has nothing else but its own log group', () => {
    const statements = statementsOf(template, stack.server.mcpFunction.role!);
    const known = ['dynamodb:', 'states:', 's3:', 'secretsmanager:', 'sqs:'];
    // The durable tools' grants are test/cdk/durable-tool-functions.test.ts's.
    const durable = (s: Statement) => asArray(s.Resource).every((resource) => isDurablePattern(resource));
    const other = statements.filter((s) => !asArray(s.Action).some((a) => known.some((prefix) => a.startsWith(prefix))) && !durable(s));
    expect(actionsOf(other)).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(other.flatMap((s) => asArray(s.Resource))).toEqual([{ 'Fn::GetAtt': [logicalIdOf(stack.server.mcpFunction.logGroup), 'Arn'] }]);
  });
});

describe('the status-sync Lambda', () => {
  it('may update records, release their active slots, describe executions and stop those canceled while starting, spill large results, put operation events, append Events occurrences and enqueue their deliveries, read the server key, write its logs and dead-letter failures, nothing more', () => {
    const statusSync = stack.server.statusSync!;
    const statements = statementsOf(template, statusSync.function.role);
    expect(actionsOf(statements)).toEqual(
      [
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'events:PutEvents',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        's3:PutObject',
        'secretsmanager:GetSecretValue',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
        'states:DescribeExecution',
        'states:StopExecution',
        // The durable tools' executions alike, with the listing that finds one by name.
        ...(stack.server.durableToolFunctions.size > 0
          ? ['lambda:GetDurableExecution', 'lambda:ListDurableExecutionsByFunction', 'lambda:StopDurableExecution']
          : []),
      ].sort(),
    );
    const dynamo = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.filter((s) => !asArray(s.Action).includes('dynamodb:Query')).flatMap((s) => asArray(s.Resource))).toEqual([tableArn(), tableArn()]);
    expectEventsWriterGrants(statements, 'status sync');
    expect(s3Statements(statements).flatMap((s) => asArray(s.Resource))).toEqual([resultObjects()]);
    const secrets = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('secretsmanager:')));
    expect(secrets.flatMap((s) => asArray(s.Resource))).toEqual([{ Ref: logicalIdOf(stack.server.serverKey.secret) }]);
  });
});

/** Workers whose module imports the results helper (lambdas/results/write-result.ts), a user's as the project's. */
function resultWriters(): string[] {
  return [...stack.server.workerFunctions.keys()].filter(
    (name) =>
      !BUILT_IN_WORKERS.includes(name) &&
      /from\s+['"][^'"]*results\/write-result(\.ts)?['"]/.test(readFileSync(join(workersDir, workerModuleFile(name)), 'utf8')),
  );
}

describe('workers', () => {
  it('that write large results may put result objects, on the results prefix only, and nothing else but their log group', () => {
    expect(resultWriters()).toContain('export_dataset');
    for (const name of resultWriters()) {
      const fn = stack.server.workerFunctions.get(name)!;
      const statements = statementsOf(template, fn.role!);
      expect(actionsOf(statements), name).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents', 's3:PutObject']);
      expect(
        s3Statements(statements).flatMap((s) => asArray(s.Resource)),
        name,
      ).toEqual([resultObjects()]);
    }
  });

  it('that are built in (request_input, report_progress) may get and update items of the table, append Events occurrences and enqueue their deliveries, and nothing else but their log group', () => {
    const builtIn = [...stack.server.workerFunctions].filter(([name]) => BUILT_IN_WORKERS.includes(name));
    expect(builtIn.map(([name]) => name).sort()).toEqual(['report_progress', 'request_input']);
    for (const [name, fn] of builtIn) {
      const statements = statementsOf(template, fn.role!);
      expect(actionsOf(statements), name).toEqual([
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'sqs:SendMessage',
      ]);
      const records = statements.filter((s) => asArray(s.Action).some((a) => a === 'dynamodb:GetItem' || a === 'dynamodb:UpdateItem'));
      expect(
        records.map((s) => [actionsOf([s]), asArray(s.Resource)]),
        name,
      ).toEqual([[['dynamodb:GetItem', 'dynamodb:UpdateItem'], [tableArn()]]]);
      expectEventsWriterGrants(statements, name);
    }
  });

  it('others get only their own log group', () => {
    for (const [name, fn] of stack.server.workerFunctions) {
      if (resultWriters().includes(name) || BUILT_IN_WORKERS.includes(name)) continue;
      const statements = statementsOf(template, fn.role!);
      expect(actionsOf(statements), name).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
      expect(
        statements.flatMap((s) => asArray(s.Resource)),
        name,
      ).toEqual([{ 'Fn::GetAtt': [logicalIdOf(fn.logGroup), 'Arn'] }]);
    }
  });
});

describe('the webhook delivery Lambda', () => {
  it('may consume its queue, read the server key, read, save and delete subscription items, read event items, and write its log group, nothing more', () => {
    const delivery = stack.server.events.deliveryFunction!;
    const statements = statementsOf(template, delivery.role);
    expect(actionsOf(statements)).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'secretsmanager:GetSecretValue',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ]);
    const dynamo = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')));
    // Never an operation record: every item grant is held to SUB#* or EVT#* partition keys.
    expect(dynamo.map((s) => [actionsOf([s]), asArray(s.Resource), s.Condition])).toEqual([
      [['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem'], [tableArn()], onItemsOf('SUB#*')],
      [['dynamodb:GetItem'], [tableArn()], onItemsOf('EVT#*')],
    ]);
    const sqs = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('sqs:')));
    expect(sqs.flatMap((s) => asArray(s.Resource))).toEqual([eventsQueueArn()]);
    const secrets = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('secretsmanager:')));
    expect(secrets.flatMap((s) => asArray(s.Resource))).toEqual([{ Ref: logicalIdOf(stack.server.serverKey.secret) }]);
    const logs = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('logs:')));
    expect(logs.flatMap((s) => asArray(s.Resource))).toEqual([{ 'Fn::GetAtt': [logicalIdOf(delivery.logGroup), 'Arn'] }]);
  });
});

describe('the server key', () => {
  it('is read by the MCP Lambda, status sync and webhook delivery, and no other role', () => {
    const secret = JSON.stringify({ Ref: logicalIdOf(stack.server.serverKey.secret) });
    const readers = Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
      .filter((policy) => (policy.Properties.PolicyDocument.Statement as Statement[]).some((s) => JSON.stringify(s.Resource).includes(secret)))
      .map((policy) => JSON.stringify(policy.Properties.Roles))
      .sort();
    const expected = [stack.server.mcpFunction.role!, stack.server.statusSync!.function.role, stack.server.events.deliveryFunction!.role].map((role) =>
      JSON.stringify([{ Ref: logicalIdOf(role) }]),
    );
    expect(readers).toEqual(expected.sort());
  });
});

describe('tool state machines', () => {
  it('may invoke exactly the workers their definition names, each on its published versions only, never unqualified', () => {
    for (const tool of tools.filter((each) => !each.durable)) {
      const machine = stack.server.toolStateMachines.get(tool.config.name)!.stateMachine;
      const invoke = statementsOf(template, machine.role).filter((s) => asArray(s.Action).includes('lambda:InvokeFunction'));
      const expected = tool.workers.map((worker) => workerVersions(stack.server.workerFunctions.get(worker)!));
      const actual = invoke.flatMap((s) => asArray(s.Resource));
      expect(actual.map((r) => JSON.stringify(r)).sort(), tool.config.name).toEqual(expected.map((r) => JSON.stringify(r)).sort());
    }
  });
});

describe('durable tool functions', () => {
  it('may checkpoint their own executions, get and update records, append Events occurrences and enqueue their deliveries, put large results, write their log group, and what their tool.json permits, nothing more', () => {
    expect(stack.server.durableToolFunctions.size).toBeGreaterThan(0);
    for (const tool of stack.server.durableToolFunctions.values()) {
      const statements = statementsOf(template, tool.function.role!);
      const permitted = (tools.find((each) => each.config.name === tool.toolName)?.config.permissions ?? []).flatMap((p) => asArray(p.Action));
      expect(actionsOf(statements), tool.toolName).toEqual(
        [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:Query',
          'dynamodb:UpdateItem',
          'lambda:CheckpointDurableExecution',
          'lambda:GetDurableExecutionState',
          'logs:CreateLogStream',
          'logs:PutLogEvents',
          's3:PutObject',
          'sqs:SendMessage',
          ...permitted,
        ].sort(),
      );
      const checkpoints = statements.filter((s) => asArray(s.Action).includes('lambda:CheckpointDurableExecution'));
      expect(
        checkpoints.flatMap((s) => asArray(s.Resource).map(lastPart)),
        tool.toolName,
      ).toEqual([`:function:${tool.functionName}:*`]);
      expectEventsWriterGrants(statements, tool.toolName);
    }
  });
});
