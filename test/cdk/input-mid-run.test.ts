/**
 * Input mid-run in the synthesized template (issue 9): the built-in request_input worker
 * for the machines that ask, its access to the operations table, the MCP Lambda's right
 * to resume exactly those machines, and the server key in Secrets Manager.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { OPERATIONS_TABLE } from '../../lambdas/aws/operations-table.ts';
import { MIN_SECRET_KEY_BYTES } from '../../lambdas/aws/secrets-manager-key.ts';
import { REQUEST_INPUT_WORKER } from '../../lambdas/tools/request-input-states.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { logicalIdOf, repoTools, resourcesOf, synthTemplate, toolsWithInputFixtures } from './cdk-test-app.ts';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** The statements of the policies attached to a role. */
function statementsOf(template: Template, role: IConstruct): Statement[] {
  const roleId = logicalIdOf(role);
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/** Every statement in the template that allows `action`, with the roles it is attached to. */
function grantsOf(template: Template, action: string): { roles: unknown; resources: string[] }[] {
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy')).flatMap((policy) =>
    (policy.Properties.PolicyDocument.Statement as Statement[])
      .filter((statement) => asArray(statement.Action).includes(action))
      .map((statement) => ({ roles: policy.Properties.Roles, resources: asArray(statement.Resource).map((r) => JSON.stringify(r)) })),
  );
}

const actionsOf = (statements: Statement[]) => [...new Set(statements.flatMap((s) => asArray(s.Action)))].sort();

let tools: ToolFolder[];
let stack: AsyncMcpStack;
let template: Template;
let asking: ToolFolder[];

beforeAll(async () => {
  tools = await toolsWithInputFixtures();
  ({ stack, template } = synthTemplate(tools));
  asking = tools.filter((tool) => tool.workers.includes(REQUEST_INPUT_WORKER));
});

/** `arn:<partition>:states:<region>:<account>:<rest>` as CDK renders it. */
const prefixArn = (rest: string) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':states:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:${rest}`]],
});

describe('the request_input worker', () => {
  it('is deployed once for all the machines that name ${Worker_request_input}, and each calls its current version and may invoke its versions', () => {
    expect(asking.length).toBeGreaterThanOrEqual(2);
    const worker = stack.server.workerFunctions.get(REQUEST_INPUT_WORKER)!;
    expect(worker).toBeDefined();
    const version = JSON.stringify({ Ref: logicalIdOf(worker.currentVersion) });
    const versions = JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf(worker), 'Arn'] }, ':*']] });
    const machines = resourcesOf(template, 'AWS::StepFunctions::StateMachine');
    for (const tool of asking) {
      const machine = stack.server.toolStateMachines.get(tool.config.name)!.stateMachine;
      expect(JSON.stringify(machines[logicalIdOf(machine)]!.Properties.DefinitionSubstitutions.Worker_request_input), tool.config.name).toBe(version);
      const invoke = statementsOf(template, machine.role).filter((s) => asArray(s.Action).includes('lambda:InvokeFunction'));
      expect(
        invoke.flatMap((s) => asArray(s.Resource)).map((r) => JSON.stringify(r)),
        tool.config.name,
      ).toContain(versions);
    }
  });

  it('runs definitions whose asking states carry the execution name and operation the loader adds', () => {
    const machines = resourcesOf(template, 'AWS::StepFunctions::StateMachine');
    for (const tool of asking) {
      const definition = machines[logicalIdOf(stack.server.toolStateMachines.get(tool.config.name)!.stateMachine)]!.Properties.DefinitionString as string;
      expect(definition, tool.config.name).toMatch(/"executionName(\.\$)?": "(\$\$\.Execution\.Name|\{% \$states\.context\.Execution\.Name %\})"/);
    }
  });

  it('gets the operations table name in OPERATIONS_TABLE_NAME', () => {
    const worker = stack.server.workerFunctions.get(REQUEST_INPUT_WORKER)!;
    const variables = resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(worker)]!.Properties.Environment.Variables as Record<string, unknown>;
    expect(variables[ENV.tableName]).toEqual({ Ref: logicalIdOf(stack.server.operations.table) });
  });

  it('may get and update items of the operations table (records and execution pointers), append operation.input_required to the event log and enqueue its deliveries, and write its own logs', () => {
    const worker = stack.server.workerFunctions.get(REQUEST_INPUT_WORKER)!;
    const statements = statementsOf(template, worker.role!);
    expect(actionsOf(statements)).toEqual([
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'sqs:SendMessage',
    ]);
    const tableArn = { 'Fn::GetAtt': [logicalIdOf(stack.server.operations.table), 'Arn'] };
    const withAction = (action: string) =>
      statements.filter((s) => asArray(s.Action).includes(action)).map((s) => [asArray(s.Action), asArray(s.Resource), s.Condition]);
    // Records: the table itself, no Scan, no Put or Delete of an operation record.
    expect(withAction('dynamodb:UpdateItem')).toEqual([[['dynamodb:GetItem', 'dynamodb:UpdateItem'], [tableArn], undefined]]);
    // Events: Put on EVT# items alone, Query on the owner index alone (the principal's subscriptions), SendMessage on the delivery queue.
    expect(withAction('dynamodb:PutItem')).toEqual([[['dynamodb:PutItem'], [tableArn], { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVT#*'] } }]]);
    expect(withAction('dynamodb:Query')).toEqual([
      [['dynamodb:Query'], [{ 'Fn::Join': ['', [tableArn, `/index/${OPERATIONS_TABLE.ownerIndex.name}`]] }], undefined],
    ]);
    expect(withAction('sqs:SendMessage')).toEqual([[['sqs:SendMessage'], [{ 'Fn::GetAtt': [logicalIdOf(stack.server.events.queue!), 'Arn'] }], undefined]]);
  });

  it('comes from this repository even when the tools name another workers directory', () => {
    const empty = mkdtempSync(join(tmpdir(), 'async-mcp-no-workers-'));
    try {
      const onlyAsking = asking.filter((tool) => tool.workers.every((worker) => worker === REQUEST_INPUT_WORKER));
      expect(onlyAsking.length).toBeGreaterThan(0);
      const { stack: custom } = synthTemplate(onlyAsking, { workersDir: empty });
      expect([...custom.server.workerFunctions.keys()]).toEqual([REQUEST_INPUT_WORKER]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('answers resuming the states that asked', () => {
  it('SendTaskSuccess/SendTaskFailure granted to the MCP function alone, on the deployed machines by their name prefix', () => {
    const mcpRoles = JSON.stringify([{ Ref: logicalIdOf(stack.server.mcpFunction.role!) }]);
    // One statement for any number of asking machines, which still covers a machine whose tool was removed while it waited.
    const expected = [JSON.stringify(prefixArn(`stateMachine:${stack.server.stateMachineNamePrefix}*`))];
    for (const action of ['states:SendTaskSuccess', 'states:SendTaskFailure']) {
      const grants = grantsOf(template, action);
      // Nobody else may resume a task: not status sync, not a worker, not a state machine.
      expect(
        grants.every((grant) => JSON.stringify(grant.roles) === mcpRoles),
        action,
      ).toBe(true);
      expect(grants.flatMap((grant) => grant.resources).sort(), action).toEqual(expected);
    }
    const notAsking = tools.filter((tool) => !asking.includes(tool) && tool.config.stateMachineArn === undefined);
    expect(notAsking.length).toBeGreaterThan(0);
  });

  it('are granted on no machine when no tool asks, and no request_input worker is deployed', async () => {
    const repo = (await repoTools()).filter((tool) => !tool.workers.includes(REQUEST_INPUT_WORKER));
    const { stack: quiet, template: quietTemplate } = synthTemplate(repo);
    expect(grantsOf(quietTemplate, 'states:SendTaskSuccess')).toEqual([]);
    expect(grantsOf(quietTemplate, 'states:SendTaskFailure')).toEqual([]);
    expect(quiet.server.workerFunctions.has(REQUEST_INPUT_WORKER)).toBe(false);
  });
});

describe('the server key', () => {
  it('is a Secrets Manager secret the construct generates, of at least 32 characters, never written in the template', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    const [secret] = Object.values(resourcesOf(template, 'AWS::SecretsManager::Secret'));
    const generate = secret!.Properties.GenerateSecretString as { PasswordLength: number; ExcludeCharacters?: string };
    expect(generate.PasswordLength).toBeGreaterThanOrEqual(MIN_SECRET_KEY_BYTES);
    expect(secret!.Properties.SecretString).toBeUndefined();
  });

  it('is named to the MCP Lambda in ASYNC_MCP_SECRET_ARN', () => {
    const mcp = resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(stack.server.mcpFunction)]!;
    expect(mcp.Properties.Environment.Variables[ENV.secretArn]).toEqual({ Ref: logicalIdOf(stack.server.serverKey.secret) });
  });

  it('may be read by the MCP Lambda, status sync (the events owner id) and webhook delivery (sealed secrets) alone, with GetSecretValue on that secret only', () => {
    const secretRef = JSON.stringify({ Ref: logicalIdOf(stack.server.serverKey.secret) });
    const readers = [stack.server.mcpFunction, stack.server.statusSync?.function.function, stack.server.events.deliveryFunction?.function];
    const expected = readers.map((fn) => ({
      roles: JSON.stringify([{ Ref: logicalIdOf(fn!.role!) }]),
      actions: ['secretsmanager:GetSecretValue'],
      resources: [secretRef],
    }));
    const secretGrants = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as Statement[])
        .filter((statement) => asArray(statement.Action).some((action) => action.startsWith('secretsmanager:')))
        .map((statement) => ({
          roles: JSON.stringify(policy.Properties.Roles),
          actions: asArray(statement.Action),
          resources: asArray(statement.Resource).map((r) => JSON.stringify(r)),
        })),
    );
    expect(secretGrants).toHaveLength(3);
    expect(secretGrants).toEqual(expect.arrayContaining(expected));
  });
});
