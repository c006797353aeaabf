/**
 * The deployed-stack model read from a hand-written two-level cloud assembly: a top stack that
 * passes its table to a nested stack of tools, which holds the worker and the state machine and
 * hands the machine's ARN back as an output.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AssemblyError, loadDeployedStack } from '../../../local/as-deployed/index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function writeAssembly(change?: (files: Record<string, unknown>) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'assembly-model-'));
  dirs.push(dir);
  const files: Record<string, unknown> = {
    'manifest.json': { version: '55.0.0', artifacts: { App: { type: 'aws:cloudformation:stack', properties: { templateFile: 'App.template.json' } } } },
    'App.template.json': {
      Parameters: { BootstrapVersion: { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/cdk-bootstrap/hnb659fds/version' } },
      Resources: {
        Table: {
          Type: 'AWS::DynamoDB::Table',
          Properties: {
            KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
            AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
            TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
          },
        },
        Bucket: { Type: 'AWS::S3::Bucket', Properties: { LifecycleConfiguration: { Rules: [{ Id: 'Expire', ExpirationInDays: 10, Status: 'Enabled' }] } } },
        Key: { Type: 'AWS::SecretsManager::Secret', Properties: { GenerateSecretString: { PasswordLength: 64 } } },
        McpRole: {
          Type: 'AWS::IAM::Role',
          Properties: {
            AssumeRolePolicyDocument: {},
            ManagedPolicyArns: [{ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole']] }],
          },
        },
        McpPolicy: {
          Type: 'AWS::IAM::Policy',
          Properties: {
            PolicyName: 'McpPolicy',
            Roles: [{ Ref: 'McpRole' }],
            PolicyDocument: {
              Statement: [{ Effect: 'Allow', Action: 'states:StartExecution', Resource: { 'Fn::GetAtt': ['Tools', 'Outputs.AppToolsMachineRef'] } }],
            },
          },
        },
        Mcp: {
          Type: 'AWS::Lambda::Function',
          Metadata: { 'aws:asset:path': 'asset.mcp' },
          Properties: {
            Handler: 'index.handler',
            Runtime: 'nodejs24.x',
            Timeout: 75,
            Role: { 'Fn::GetAtt': ['McpRole', 'Arn'] },
            Environment: {
              Variables: {
                TABLE: { Ref: 'Table' },
                MACHINE: { 'Fn::GetAtt': ['Tools', 'Outputs.AppToolsMachineRef'] },
                WHERE: { 'Fn::Sub': '${AWS::Region}/${Bucket.Arn}' },
                ONLY_IN_US: { 'Fn::If': ['InUs', 'yes', { Ref: 'AWS::NoValue' }] },
              },
            },
          },
        },
        McpUrl: {
          Type: 'AWS::Lambda::Url',
          Properties: { AuthType: 'AWS_IAM', InvokeMode: 'RESPONSE_STREAM', TargetFunctionArn: { 'Fn::GetAtt': ['Mcp', 'Arn'] } },
        },
        Tools: {
          Type: 'AWS::CloudFormation::Stack',
          Metadata: { 'aws:asset:path': 'AppTools.nested.template.json' },
          Properties: { Parameters: { referencetoTableArn: { 'Fn::GetAtt': ['Table', 'Arn'] } } },
        },
      },
      Conditions: { InUs: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] } },
      Outputs: { Machine: { Value: { 'Fn::GetAtt': ['Tools', 'Outputs.AppToolsMachineRef'] } } },
    },
    'AppTools.nested.template.json': {
      Parameters: { referencetoTableArn: { Type: 'String' } },
      Resources: {
        WorkerRole: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: {} } },
        WorkerPolicy: {
          Type: 'AWS::IAM::Policy',
          Properties: {
            PolicyName: 'WorkerPolicy',
            Roles: [{ Ref: 'WorkerRole' }],
            PolicyDocument: { Statement: [{ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: { Ref: 'referencetoTableArn' } }] },
          },
        },
        Worker: {
          Type: 'AWS::Lambda::Function',
          Metadata: { 'aws:asset:path': 'asset.worker' },
          Properties: { Handler: 'index.handler', Runtime: 'nodejs24.x', FunctionName: 'calc-worker', Role: { 'Fn::GetAtt': ['WorkerRole', 'Arn'] } },
        },
        WorkerVersion: { Type: 'AWS::Lambda::Version', Properties: { FunctionName: { Ref: 'Worker' } } },
        MachineRole: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: {} } },
        Machine: {
          Type: 'AWS::StepFunctions::StateMachine',
          Properties: {
            StateMachineName: 'App-calc',
            StateMachineType: 'EXPRESS',
            RoleArn: { 'Fn::GetAtt': ['MachineRole', 'Arn'] },
            DefinitionString: '{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"${Worker_calc}","End":true}}}',
            DefinitionSubstitutions: { Worker_calc: { Ref: 'WorkerVersion' } },
          },
        },
      },
      Outputs: { AppToolsMachineRef: { Value: { Ref: 'Machine' } } },
    },
  };
  change?.(files);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(content));
  for (const asset of ['asset.mcp', 'asset.worker']) {
    mkdirSync(join(dir, asset));
    writeFileSync(join(dir, asset, 'index.mjs'), 'export const handler = async () => ({});\n');
  }
  return dir;
}

describe('a cloud assembly with a nested stack', () => {
  it('names resources as CloudFormation would, explicitly named or generated from the stack and logical id', () => {
    const model = loadDeployedStack(writeAssembly());
    expect(model.stackName).toBe('App');
    expect(model.table.name).toMatch(/^App-Table-[A-Z0-9]{12}$/);
    expect(model.table.arn).toBe(`arn:aws:dynamodb:us-east-1:000000000000:table/${model.table.name}`);
    expect(model.table.ttlAttribute).toBe('expiresAt');
    expect(model.bucket.name).toMatch(/^app-bucket-[a-z0-9]{12}$/);
    expect(model.bucket.lifecycleRules).toEqual([{ Id: 'Expire', ExpirationInDays: 10, Status: 'Enabled' }]);
    expect(model.secret.arn).toMatch(/^arn:aws:secretsmanager:us-east-1:000000000000:secret:Key-[A-Z0-9]{12}-[a-z0-9]{6}$/);
    const worker = model.functions.find((f) => f.logicalId === 'Worker')!;
    expect(worker.arn).toBe('arn:aws:lambda:us-east-1:000000000000:function:calc-worker');
    expect(worker.timeoutSeconds).toBe(3);
    // The nested stack's resources are named after the nested stack, itself named after its parent.
    const workerRole = model.roles.find((r) => r.logicalId === 'WorkerRole')!;
    expect(workerRole.name).toMatch(/^App-Tools-[A-Z0-9]{12}-WorkerRole-[A-Z0-9]{12}$/);
    // The same assembly read twice gives the same names (a redeploy keeps them).
    expect(loadDeployedStack(writeAssembly()).table.name).toBe(model.table.name);
  });

  it('passes parameters down, outputs up, and resolves Sub, If, NoValue and DefinitionSubstitutions', () => {
    const model = loadDeployedStack(writeAssembly());
    const mcp = model.functions.find((f) => f.logicalId === 'Mcp')!;
    const machine = model.stateMachines[0]!;
    expect(machine).toMatchObject({ name: 'App-calc', type: 'EXPRESS', arn: 'arn:aws:states:us-east-1:000000000000:stateMachine:App-calc' });
    expect(JSON.parse(machine.definition).States.A.Resource).toBe('arn:aws:lambda:us-east-1:000000000000:function:calc-worker:1');
    expect(model.versions).toEqual([{ arn: 'arn:aws:lambda:us-east-1:000000000000:function:calc-worker:1', functionLogicalId: 'Worker' }]);
    expect(mcp.environment).toEqual({ TABLE: model.table.name, MACHINE: machine.arn, WHERE: `us-east-1/${model.bucket.arn}`, ONLY_IN_US: 'yes' });
    expect(model.outputs.Machine).toBe(machine.arn);
    expect(model.roles.find((r) => r.logicalId === 'WorkerRole')!.policyDocuments).toEqual([
      { name: 'WorkerPolicy', document: { Statement: [{ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: model.table.arn }] } },
    ]);
    const mcpRole = model.roles.find((r) => r.logicalId === 'McpRole')!;
    expect(mcpRole.managedPolicyArns).toEqual(['arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole']);
    expect(mcpRole.policyDocuments[0]!.document.Statement).toEqual([{ Effect: 'Allow', Action: 'states:StartExecution', Resource: machine.arn }]);
    expect(model.functionUrl).toEqual({ logicalId: 'McpUrl', targetFunctionLogicalId: 'Mcp', authType: 'AWS_IAM', invokeMode: 'RESPONSE_STREAM' });
  });

  it('refuses a function whose asset folder is missing, naming the template and the resource', () => {
    const dir = writeAssembly((files) => {
      const nested = files['AppTools.nested.template.json'] as { Resources: Record<string, { Metadata?: Record<string, unknown> }> };
      nested.Resources.Worker!.Metadata = { 'aws:asset:path': 'asset.gone' };
    });
    expect(() => loadDeployedStack(dir)).toThrow(AssemblyError);
    expect(() => loadDeployedStack(dir)).toThrow(/^AppTools\.nested\.template\.json: resource Worker: the function's asset folder asset\.gone is missing/);
  });

  it('refuses a reference to a resource the template does not have, naming it', () => {
    const dir = writeAssembly((files) => {
      const top = files['App.template.json'] as { Resources: Record<string, { Properties: { Environment?: { Variables: Record<string, unknown> } } }> };
      top.Resources.Mcp!.Properties.Environment!.Variables.BAD = { Ref: 'Missing' };
    });
    expect(() => loadDeployedStack(dir)).toThrow(/App\.template\.json: resource Mcp: Ref to "Missing"/);
  });
});
