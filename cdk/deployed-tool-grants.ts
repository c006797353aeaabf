/**
 * Grants on every state machine this server deploys, by their common name prefix
 * (state-machine-names.ts) instead of one statement per machine. One policy then stays the
 * same size for any number of tools (IAM allows 10,240 characters of inline policy per
 * role), and it still covers the machines of tools removed since: their running executions
 * can still be described, stopped and answered until they end.
 */
import { Aws, Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

export class DeployedToolGrants {
  /** `arn:…:stateMachine:<prefix>*` */
  public readonly stateMachines: string;
  /** `arn:…:execution:<prefix>*:*` */
  public readonly executions: string;

  /** @param namePrefix the prefix of every deployed machine's name (`<prefix><tool>`) */
  constructor(private readonly namePrefix: string) {
    const base = `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}`;
    this.stateMachines = `${base}:stateMachine:${namePrefix}*`;
    this.executions = `${base}:execution:${namePrefix}*:*`;
  }

  /** StartExecution for STANDARD tools, StartSyncExecution for EXPRESS ones, as the tools are run. */
  public grantStart(grantee: IGrantable, workflowTypes: ReadonlySet<'STANDARD' | 'EXPRESS'>): Grant | undefined {
    const actions = [
      ...(workflowTypes.has('STANDARD') ? ['states:StartExecution'] : []),
      ...(workflowTypes.has('EXPRESS') ? ['states:StartSyncExecution'] : []),
    ];
    if (actions.length === 0) return undefined;
    return this.grant(
      grantee,
      actions,
      this.stateMachines,
      'stateMachine',
      'Every deployed tool state machine is named "<prefix><tool>"; this scopes the start to them.',
    );
  }

  /** DescribeExecution and StopExecution on the executions of every deployed machine. */
  public grantExecutionControl(grantee: IGrantable): Grant {
    return this.grant(
      grantee,
      ['states:DescribeExecution', 'states:StopExecution'],
      this.executions,
      'execution',
      'Execution ARNs end in a per-call name, under machines named "<prefix><tool>"; this scopes the actions to the executions of the deployed tool state machines.',
    );
  }

  /** SendTaskSuccess and SendTaskFailure for the task tokens of the deployed machines (input mid-run). */
  public grantTaskResponse(grantee: IGrantable): Grant {
    return this.grant(
      grantee,
      ['states:SendTaskSuccess', 'states:SendTaskFailure'],
      this.stateMachines,
      'stateMachine',
      'Every deployed tool state machine is named "<prefix><tool>"; this scopes the answers to their task tokens.',
    );
  }

  private grant(grantee: IGrantable, actions: string[], resource: string, kind: 'stateMachine' | 'execution', reason: string): Grant {
    const grant = Grant.addToPrincipal({ grantee, actions, resourceArns: [resource] });
    const principal: unknown = grantee.grantPrincipal;
    if (principal instanceof Construct) {
      // The finding id as cdk-nag flattens the ARN above.
      const finding = `arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:${kind}:${this.namePrefix}*${kind === 'execution' ? ':*' : ''}`;
      Validations.of(principal).acknowledge({ id: `AwsSolutions-IAM5[Resource::${finding}]`, reason });
    }
    return grant;
  }
}
