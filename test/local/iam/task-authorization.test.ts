import { describe, expect, it } from 'vitest';
import { IamAuthority } from '../../../local/iam/iam-authority.ts';
import { authorizeTask, stateMachineSession } from '../../../local/iam/task-authorization.ts';
import { ACCOUNT, functionArn, QUICK_CALCULATION_MACHINE_ROLE, TABLE_ARN } from './template-roles.ts';

const WORKER = functionArn('AsyncMcp-ServerWorkerscalculateFunctionD8197A9C-0A1B2C3D4E5F');

describe("a Task's IAM check with its state machine's role", () => {
  const iam = new IamAuthority([QUICK_CALCULATION_MACHINE_ROLE], { logger: { warn: () => undefined } });
  const role = QUICK_CALCULATION_MACHINE_ROLE.arn;

  it('lets the machine invoke the worker its template grants', async () => {
    await expect(
      authorizeTask(iam, { roleArn: role, resource: 'arn:aws:states:::lambda:invoke', parameters: { FunctionName: WORKER, Payload: {} } }),
    ).resolves.toBeUndefined();
    expect(iam.decisions().at(-1)).toMatchObject({ roleArn: role, action: 'lambda:InvokeFunction', resource: WORKER, allowed: true });
  });

  it('fails any other invoke as AWS does: Lambda.AWSLambdaException naming the session, action and function', async () => {
    const other = functionArn('someone-else');
    const denied = await authorizeTask(iam, { roleArn: role, resource: 'arn:aws:states:::lambda:invoke', parameters: { FunctionName: other } });
    const session = stateMachineSession(iam, role);
    expect(session).toMatch(new RegExp(`^arn:aws:sts::${ACCOUNT}:assumed-role/${QUICK_CALCULATION_MACHINE_ROLE.name}/[A-Za-z]{32}$`));
    expect(denied).toEqual({
      error: 'Lambda.AWSLambdaException',
      cause: expect.stringMatching(
        new RegExp(
          `^User: ${session.replace(/[/.]/g, '\\$&')} is not authorized to perform: lambda:InvokeFunction on resource: ${other.replace(/[/.]/g, '\\$&')} because no identity-based policy allows the lambda:InvokeFunction action \\(Service: AWSLambda; Status Code: 403; Error Code: AccessDeniedException; Request ID: [0-9a-f-]{36}; Proxy: null\\)$`,
        ),
      ),
    });
  });

  it('checks SDK integrations too, answered by mocks or not', async () => {
    const denied = await authorizeTask(iam, {
      roleArn: role,
      resource: 'arn:aws:states:::aws-sdk:dynamodb:putItem',
      parameters: { TableName: TABLE_ARN, Item: {} },
    });
    expect(denied).toMatchObject({ error: 'DynamoDb.DynamoDbException', cause: expect.stringContaining(`dynamodb:PutItem on resource: ${TABLE_ARN}`) });
  });
});
