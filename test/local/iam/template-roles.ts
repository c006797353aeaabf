/**
 * Roles of the synthesized stack (`cdk synth -c auth=none`), their statements copied from the
 * template with the intrinsics resolved the way the local assembly names resources.
 */
import type { DeployedRole } from '../../../local/assembly/deployed-stack.ts';
import { STATE_MACHINE_LOG_DELIVERY_ACTIONS } from '../../support/log-delivery-actions.ts';

export const ACCOUNT = '000000000000';
export const TABLE_ARN = `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/AsyncMcp-ServerOperationsTable5E310BC9-1A2B3C4D5E6F`;
export const BUCKET = 'asyncmcp-serverresultsbucket73f17621-1a2b3c4d5e6f';
export const BUCKET_ARN = `arn:aws:s3:::${BUCKET}`;
export const SECRET_NAME = 'ServerServerKeySecret396846FA-1A2B3C4D5E6F';
export const SECRET_ARN = `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:${SECRET_NAME}-AbCdEf`;
export const MACHINE_PREFIX = 'AsyncMcp-Server-02456313-';
export const machineArn = (tool: string) => `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:${MACHINE_PREFIX}${tool}`;
export const executionArn = (tool: string, name: string) => `arn:aws:states:us-east-1:${ACCOUNT}:execution:${MACHINE_PREFIX}${tool}:${name}`;
export const functionArn = (name: string) => `arn:aws:lambda:us-east-1:${ACCOUNT}:function:${name}`;
const logGroupArn = (name: string) => `arn:aws:logs:us-east-1:${ACCOUNT}:log-group:${name}:*`;
const ASYNC_TOOLS = ['analyze_dataset', 'approve_deployment', 'export_dataset', 'run_test_suite', 'summarize_numbers'];

/** ServerMcpRoleDefaultPolicy7EE236F2, resolved. */
export const MCP_ROLE: DeployedRole = {
  logicalId: 'ServerMcpRole827BB655',
  name: 'AsyncMcp-ServerMcpRole827BB655-0A1B2C3D4E5F',
  arn: `arn:aws:iam::${ACCOUNT}:role/AsyncMcp-ServerMcpRole827BB655-0A1B2C3D4E5F`,
  managedPolicyArns: [],
  policyDocuments: [
    {
      name: 'ServerMcpRoleDefaultPolicy7EE236F2',
      document: {
        Version: '2012-10-17',
        Statement: [
          { Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Effect: 'Allow', Resource: logGroupArn('AsyncMcp-ServerMcpLogs3037A0CB-0A1B2C3D4E5F') },
          {
            Action: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
            Effect: 'Allow',
            Resource: [TABLE_ARN, `${TABLE_ARN}/index/byOwner`],
          },
          { Action: ['s3:GetObject', 's3:PutObject'], Effect: 'Allow', Resource: `${BUCKET_ARN}/results/*` },
          { Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: SECRET_ARN },
          { Action: 'states:StartExecution', Effect: 'Allow', Resource: ASYNC_TOOLS.map(machineArn) },
          { Action: 'states:StartSyncExecution', Effect: 'Allow', Resource: machineArn('quick_calculation') },
          {
            Action: ['states:DescribeExecution', 'states:StopExecution'],
            Effect: 'Allow',
            Resource: ASYNC_TOOLS.map((tool) => `arn:aws:states:us-east-1:${ACCOUNT}:execution:${MACHINE_PREFIX}${tool}:*`),
          },
          { Action: ['states:SendTaskFailure', 'states:SendTaskSuccess'], Effect: 'Allow', Resource: machineArn('approve_deployment') },
        ],
      },
    },
  ],
};

/** ServerToolsquickcalculationStateMachineRoleDefaultPolicy2F76D344, resolved. */
export const QUICK_CALCULATION_MACHINE_ROLE: DeployedRole = {
  logicalId: 'ServerToolsquickcalculationStateMachineRole11C69FFE',
  name: 'AsyncMcp-ServerToolsquickcalculationStateMachin-0A1B2C3D4E5F',
  arn: `arn:aws:iam::${ACCOUNT}:role/AsyncMcp-ServerToolsquickcalculationStateMachin-0A1B2C3D4E5F`,
  managedPolicyArns: [],
  policyDocuments: [
    {
      name: 'ServerToolsquickcalculationStateMachineRoleDefaultPolicy2F76D344',
      document: {
        Version: '2012-10-17',
        Statement: [
          {
            Action: [...STATE_MACHINE_LOG_DELIVERY_ACTIONS],
            Effect: 'Allow',
            Resource: '*',
          },
          { Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: functionArn('AsyncMcp-ServerWorkerscalculateFunctionD8197A9C-0A1B2C3D4E5F') },
        ],
      },
    },
  ],
};

/** A worker role as the default (no explicit log group) CDK function has it: the basic execution role. */
export const BASIC_WORKER_ROLE: DeployedRole = {
  logicalId: 'WorkerServiceRole',
  name: 'AsyncMcp-WorkerServiceRole-0A1B2C3D4E5F',
  arn: `arn:aws:iam::${ACCOUNT}:role/AsyncMcp-WorkerServiceRole-0A1B2C3D4E5F`,
  managedPolicyArns: ['arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole'],
  policyDocuments: [
    {
      name: 'WorkerServiceRoleDefaultPolicy',
      document: {
        Version: '2012-10-17',
        Statement: [
          { Sid: 'ReadOnly', Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], Effect: 'Allow', Resource: TABLE_ARN },
          { Action: 'dynamodb:UpdateItem', Effect: 'Deny', Resource: TABLE_ARN },
        ],
      },
    },
  ],
};
