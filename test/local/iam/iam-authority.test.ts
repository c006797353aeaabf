import { describe, expect, it } from 'vitest';
import { IamAuthority } from '../../../local/iam/iam-authority.ts';
import {
  ACCOUNT,
  BASIC_WORKER_ROLE,
  BUCKET_ARN,
  executionArn,
  functionArn,
  machineArn,
  MCP_ROLE,
  QUICK_CALCULATION_MACHINE_ROLE,
  SECRET_ARN,
  TABLE_ARN,
} from './template-roles.ts';

const quiet = { warn: () => undefined };
const authority = () =>
  new IamAuthority([MCP_ROLE, QUICK_CALCULATION_MACHINE_ROLE, BASIC_WORKER_ROLE], {
    logger: quiet,
    permissions: [
      { functionArn: functionArn('mcp'), action: 'lambda:InvokeFunctionUrl', principal: '*', functionUrlAuthType: 'NONE' },
      {
        functionArn: functionArn('status-sync'),
        action: 'lambda:InvokeFunction',
        principal: 'events.amazonaws.com',
        sourceArn: `arn:aws:events:us-east-1:${ACCOUNT}:rule/status`,
      },
    ],
  });
const mcpSession = `arn:aws:sts::${ACCOUNT}:assumed-role/${MCP_ROLE.name}/mcp-function`;

describe('IamAuthority', () => {
  it('allows what a statement of the role grants, and names the statement', async () => {
    const iam = authority();
    await expect(iam.authorize({ principalArn: mcpSession, action: 'dynamodb:Query', resource: `${TABLE_ARN}/index/byOwner` })).resolves.toEqual({
      allowed: true,
    });
    await expect(iam.authorize({ principalArn: mcpSession, action: 's3:PutObject', resource: `${BUCKET_ARN}/results/abc` })).resolves.toEqual({
      allowed: true,
    });
    await expect(iam.authorize({ principalArn: mcpSession, action: 'secretsmanager:GetSecretValue', resource: SECRET_ARN })).resolves.toEqual({
      allowed: true,
    });
    // An execution ARN matches the grant's `execution:<machine>:*` wildcard.
    await expect(
      iam.authorize({ principalArn: mcpSession, action: 'states:DescribeExecution', resource: executionArn('export_dataset', 'op-1') }),
    ).resolves.toEqual({ allowed: true });
    expect(iam.decisions()).toEqual([
      expect.objectContaining({
        roleArn: MCP_ROLE.arn,
        action: 'dynamodb:Query',
        allowed: true,
        statement: { policy: 'ServerMcpRoleDefaultPolicy7EE236F2', index: 1 },
      }),
      expect.objectContaining({ action: 's3:PutObject', statement: { policy: 'ServerMcpRoleDefaultPolicy7EE236F2', index: 2 } }),
      expect.objectContaining({ action: 'secretsmanager:GetSecretValue', statement: { policy: 'ServerMcpRoleDefaultPolicy7EE236F2', index: 3 } }),
      expect.objectContaining({ action: 'states:DescribeExecution', statement: { policy: 'ServerMcpRoleDefaultPolicy7EE236F2', index: 6 } }),
    ]);
  });

  it("refuses what no statement grants, with AWS's AccessDenied message naming principal, action and resource", async () => {
    const iam = authority();
    // The MCP function may only StartSyncExecution the express machine, not StartExecution it.
    const resource = machineArn('quick_calculation');
    await expect(iam.authorize({ principalArn: mcpSession, action: 'states:StartExecution', resource })).resolves.toEqual({
      allowed: false,
      reason: 'implicit',
      message: `User: ${mcpSession} is not authorized to perform: states:StartExecution on resource: ${resource} because no identity-based policy allows the states:StartExecution action`,
    });
    // Objects outside results/ are not granted.
    const other = await iam.authorize({ principalArn: mcpSession, action: 's3:GetObject', resource: `${BUCKET_ARN}/other/key` });
    expect(other.allowed).toBe(false);
    expect(iam.decisions().map((d) => d.allowed)).toEqual([false, false]);
  });

  it('answers a repeated call from its first evaluation and counts it as one decision', async () => {
    const iam = authority();
    const call = { principalArn: mcpSession, action: 'dynamodb:GetItem', resource: TABLE_ARN };
    for (let i = 0; i < 3; i++) await expect(iam.authorize(call)).resolves.toEqual({ allowed: true });
    const denied = { ...call, action: 'dynamodb:Scan' };
    for (let i = 0; i < 2; i++) await expect(iam.authorize(denied)).resolves.toMatchObject({ allowed: false, reason: 'implicit' });
    expect(iam.decisions().map((d) => [d.action, d.allowed, d.count])).toEqual([
      ['dynamodb:GetItem', true, 3],
      ['dynamodb:Scan', false, 2],
    ]);
  });

  it('an explicit deny wins over an allow, and says so', async () => {
    const iam = authority();
    const principalArn = `arn:aws:sts::${ACCOUNT}:assumed-role/${BASIC_WORKER_ROLE.name}/worker`;
    await expect(iam.authorize({ principalArn, action: 'dynamodb:GetItem', resource: TABLE_ARN })).resolves.toEqual({ allowed: true });
    expect(iam.decisions()[0]!.statement).toEqual({ policy: 'WorkerServiceRoleDefaultPolicy', sid: 'ReadOnly', index: 0 });
    await expect(iam.authorize({ principalArn, action: 'dynamodb:UpdateItem', resource: TABLE_ARN })).resolves.toEqual({
      allowed: false,
      reason: 'explicit-identity',
      message: `User: ${principalArn} is not authorized to perform: dynamodb:UpdateItem on resource: ${TABLE_ARN} with an explicit deny in an identity-based policy`,
    });
  });

  it('AWSLambdaBasicExecutionRole lets a role write its logs', async () => {
    const iam = authority();
    const principalArn = `arn:aws:sts::${ACCOUNT}:assumed-role/${BASIC_WORKER_ROLE.name}/worker`;
    const logStream = `arn:aws:logs:us-east-1:${ACCOUNT}:log-group:/aws/lambda/worker:log-stream:2026/12/01/[$LATEST]abc`;
    await expect(iam.authorize({ principalArn, action: 'logs:PutLogEvents', resource: logStream })).resolves.toEqual({ allowed: true });
    expect(iam.decisions()[0]!.statement).toEqual({ policy: 'arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole', index: 0 });
    // The MCP role names no managed policy: its own log group only.
    const denied = await iam.authorize({ principalArn: mcpSession, action: 'logs:PutLogEvents', resource: logStream });
    expect(denied.allowed).toBe(false);
  });

  it("a state machine's role invokes only its own workers, versions included (function:name:*)", async () => {
    const iam = authority();
    const role = QUICK_CALCULATION_MACHINE_ROLE.arn;
    const worker = functionArn('AsyncMcp-ServerWorkerscalculateFunctionD8197A9C-0A1B2C3D4E5F');
    await expect(iam.authorize({ principalArn: role, action: 'lambda:InvokeFunction', resource: worker })).resolves.toEqual({ allowed: true });
    const other = await iam.authorize({ principalArn: role, action: 'lambda:InvokeFunction', resource: functionArn('someone-else') });
    expect(other).toMatchObject({ allowed: false, message: expect.stringContaining(`User: ${role} is not authorized to perform: lambda:InvokeFunction`) });
    // The template grants the unqualified ARN only, so a published version is refused, as in AWS.
    const version = await iam.authorize({ principalArn: role, action: 'lambda:InvokeFunction', resource: `${worker}:3` });
    expect(version.allowed).toBe(false);
  });

  it('SendTaskSuccess is authorized on the state machine whose task issued the token', async () => {
    const iam = authority();
    await expect(iam.authorize({ principalArn: mcpSession, action: 'states:SendTaskSuccess', resource: machineArn('approve_deployment') })).resolves.toEqual({
      allowed: true,
    });
    expect(iam.decisions()[0]!.statement).toEqual({ policy: 'ServerMcpRoleDefaultPolicy7EE236F2', index: 7 });
    const other = await iam.authorize({ principalArn: mcpSession, action: 'states:SendTaskSuccess', resource: machineArn('export_dataset') });
    expect(other.allowed).toBe(false);
  });

  it('issues session credentials per role and session, and maps the key back', () => {
    const iam = authority();
    const credentials = iam.credentialsFor(MCP_ROLE.arn, 'AsyncMcp-ServerMcpFunction');
    expect(credentials.accessKeyId).toMatch(/^ASIA[A-Z2-7]{16}$/);
    expect(credentials.secretAccessKey).toHaveLength(40);
    expect(credentials.sessionToken.length).toBeGreaterThan(64);
    expect(iam.identify(credentials.accessKeyId)).toEqual({
      roleArn: MCP_ROLE.arn,
      assumedRoleArn: `arn:aws:sts::${ACCOUNT}:assumed-role/${MCP_ROLE.name}/AsyncMcp-ServerMcpFunction`,
      sessionName: 'AsyncMcp-ServerMcpFunction',
      secretAccessKey: credentials.secretAccessKey,
      sessionToken: credentials.sessionToken,
    });
    expect(iam.credentialsFor(MCP_ROLE.arn, 'other').accessKeyId).not.toBe(credentials.accessKeyId);
    expect(iam.identify('ASIAUNKNOWNUNKNOWN00')).toBeUndefined();
    expect(() => iam.credentialsFor(`arn:aws:iam::${ACCOUNT}:role/not-in-stack`, 's')).toThrow(/no role/);
  });

  it('the local caller may invoke function URLs under AWS_IAM only, as grantInvokeUrl grants', async () => {
    const iam = authority();
    const { localCaller } = iam;
    expect(localCaller.assumedRoleArn).toBe(`arn:aws:sts::${ACCOUNT}:assumed-role/async-mcp-local-caller/local`);
    expect(localCaller.userId).toMatch(/^AROA[A-Z2-7]{17}:local$/);
    expect(iam.identify('local')).toMatchObject({ assumedRoleArn: localCaller.assumedRoleArn, secretAccessKey: 'local' });
    const principalArn = localCaller.assumedRoleArn;
    const resource = functionArn('other-function');
    await expect(
      iam.authorize({ principalArn, action: 'lambda:InvokeFunctionUrl', resource, context: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } }),
    ).resolves.toEqual({ allowed: true });
    const none = await iam.authorize({ principalArn, action: 'lambda:InvokeFunctionUrl', resource, context: { 'lambda:FunctionUrlAuthType': 'NONE' } });
    expect(none.allowed).toBe(false);
    const plainInvoke = await iam.authorize({ principalArn, action: 'lambda:InvokeFunction', resource });
    expect(plainInvoke.allowed).toBe(false);
  });

  it("evaluates a function's resource policy for the principals it names", async () => {
    const iam = authority();
    // Principal "*" with FunctionUrlAuthType NONE: a principal of the account with no grant of its own.
    const anyone = `arn:aws:sts::${ACCOUNT}:assumed-role/not-in-this-stack/s`;
    await expect(
      iam.authorize({
        principalArn: anyone,
        action: 'lambda:InvokeFunctionUrl',
        resource: functionArn('mcp'),
        context: { 'lambda:FunctionUrlAuthType': 'NONE' },
      }),
    ).resolves.toEqual({ allowed: true });
    await expect(
      iam.authorize({
        principalArn: 'events.amazonaws.com',
        action: 'lambda:InvokeFunction',
        resource: functionArn('status-sync'),
        context: { 'aws:SourceArn': `arn:aws:events:us-east-1:${ACCOUNT}:rule/status` },
      }),
    ).resolves.toEqual({ allowed: true });
    const wrongRule = await iam.authorize({
      principalArn: 'events.amazonaws.com',
      action: 'lambda:InvokeFunction',
      resource: functionArn('status-sync'),
      context: { 'aws:SourceArn': `arn:aws:events:us-east-1:${ACCOUNT}:rule/other` },
    });
    expect(wrongRule.allowed).toBe(false);
  });

  it('warns about a managed policy it has no document for', () => {
    const warnings: string[] = [];
    new IamAuthority([{ ...BASIC_WORKER_ROLE, managedPolicyArns: ['arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess'] }], {
      logger: { warn: (m: string) => warnings.push(m) },
    });
    expect(warnings).toEqual([expect.stringContaining('arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess')]);
  });
});
