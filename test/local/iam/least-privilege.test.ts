import { describe, expect, it } from 'vitest';
import { IamAuthority } from '../../../local/iam/iam-authority.ts';
import { describeUnusedGrants, globMatches, unexpectedUnusedGrants, unusedGrants } from '../../../local/iam/least-privilege.ts';
import { ACCOUNT, BASIC_WORKER_ROLE, BUCKET_ARN, executionArn, machineArn, MCP_ROLE, SECRET_ARN, TABLE_ARN } from './template-roles.ts';

const mcp = `arn:aws:sts::${ACCOUNT}:assumed-role/${MCP_ROLE.name}/mcp`;

describe('least privilege', () => {
  it("lists every statement's action and resource that no call of the role used", async () => {
    const iam = new IamAuthority([MCP_ROLE, BASIC_WORKER_ROLE], { logger: { warn: () => undefined } });
    // One call per grant the MCP role's flows exercise, except DeleteItem, Query on the table,
    // the index, the express start and SendTaskFailure.
    for (const [action, resource] of [
      ['logs:PutLogEvents', 'arn:aws:logs:us-east-1:000000000000:log-group:AsyncMcp-ServerMcpLogs3037A0CB-0A1B2C3D4E5F:log-stream:s'],
      ['logs:CreateLogStream', 'arn:aws:logs:us-east-1:000000000000:log-group:AsyncMcp-ServerMcpLogs3037A0CB-0A1B2C3D4E5F:log-stream:s'],
      ['dynamodb:GetItem', TABLE_ARN],
      ['dynamodb:PutItem', TABLE_ARN],
      ['dynamodb:UpdateItem', TABLE_ARN],
      ['s3:GetObject', `${BUCKET_ARN}/results/a`],
      ['s3:PutObject', `${BUCKET_ARN}/results/a`],
      ['secretsmanager:GetSecretValue', SECRET_ARN],
      ...['analyze_dataset', 'approve_deployment', 'export_dataset', 'run_test_suite', 'summarize_numbers'].flatMap((tool) => [
        ['states:StartExecution', machineArn(tool)],
        ['states:DescribeExecution', executionArn(tool, 'op')],
        ['states:StopExecution', executionArn(tool, 'op')],
      ]),
      ['states:SendTaskSuccess', machineArn('approve_deployment')],
    ] as const) {
      await expect(iam.authorize({ principalArn: mcp, action, resource })).resolves.toEqual({ allowed: true });
    }
    // A denied call uses nothing.
    await iam.authorize({ principalArn: mcp, action: 'dynamodb:DeleteItem', resource: `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/other` });

    const unused = unusedGrants([MCP_ROLE], iam.decisions());
    expect(unused.map((g) => `${g.index} ${g.action} ${g.resource}`)).toEqual([
      `1 dynamodb:DeleteItem ${TABLE_ARN}`,
      `1 dynamodb:DeleteItem ${TABLE_ARN}/index/byOwner`,
      `1 dynamodb:GetItem ${TABLE_ARN}/index/byOwner`,
      `1 dynamodb:PutItem ${TABLE_ARN}/index/byOwner`,
      `1 dynamodb:Query ${TABLE_ARN}`,
      `1 dynamodb:Query ${TABLE_ARN}/index/byOwner`,
      `1 dynamodb:UpdateItem ${TABLE_ARN}/index/byOwner`,
      `5 states:StartSyncExecution ${machineArn('quick_calculation')}`,
      `7 states:SendTaskFailure ${machineArn('approve_deployment')}`,
    ]);
    expect(unused[0]).toEqual({
      roleLogicalId: MCP_ROLE.logicalId,
      roleArn: MCP_ROLE.arn,
      policy: 'ServerMcpRoleDefaultPolicy7EE236F2',
      index: 1,
      action: 'dynamodb:DeleteItem',
      resource: TABLE_ARN,
    });
  });

  it("never counts another role's calls, nor reports AWS managed policies", async () => {
    const iam = new IamAuthority([MCP_ROLE, BASIC_WORKER_ROLE], { logger: { warn: () => undefined } });
    await iam.authorize({ principalArn: mcp, action: 'dynamodb:GetItem', resource: TABLE_ARN });
    const unused = unusedGrants([BASIC_WORKER_ROLE], iam.decisions());
    // The worker's Allow statement (index 0) is unused; its Deny (index 1) and the basic execution role are not grants to trim.
    expect(unused.map((g) => `${g.policy}#${g.index} ${g.action}`)).toEqual([
      'WorkerServiceRoleDefaultPolicy#0 dynamodb:GetItem',
      'WorkerServiceRoleDefaultPolicy#0 dynamodb:UpdateItem',
    ]);
    expect(describeUnusedGrants(unused)).toContain(`WorkerServiceRole WorkerServiceRoleDefaultPolicy#0 (ReadOnly): dynamodb:GetItem on ${TABLE_ARN}`);
  });

  it('leaves out the unused grants an expectation explains', () => {
    const unused = unusedGrants([BASIC_WORKER_ROLE], []);
    const unexpected = unexpectedUnusedGrants(unused, [{ role: 'Worker*', action: 'dynamodb:GetItem', reason: 'read only on retries' }]);
    expect(unexpected.map((g) => g.action)).toEqual(['dynamodb:UpdateItem']);
  });

  it("matches IAM's wildcards", () => {
    expect(globMatches('states:Send*', 'states:SendTaskSuccess', true)).toBe(true);
    expect(globMatches('DYNAMODB:getitem', 'dynamodb:GetItem', true)).toBe(true);
    expect(globMatches('arn:aws:s3:::b/results/*', 'arn:aws:s3:::b/other/x', false)).toBe(false);
    expect(globMatches('arn:aws:lambda:*:*:function:f:?', 'arn:aws:lambda:us-east-1:1:function:f:3', false)).toBe(true);
  });
});
