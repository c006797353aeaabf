/**
 * One tool folder as a state machine (DESIGN §3): the definition inline from
 * `definition.asl.json`, worker placeholders substituted with the workers' ARNs,
 * the workflow type from `tool.json`, logging at level ALL without execution data.
 */
import { Aws, Names, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnStateMachine, DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct, type IConstruct } from 'constructs';
import type { ToolFolder } from '../lambdas/tools/tool-folder.ts';
import { workerSubstitutionKey } from '../lambdas/tools/worker-placeholders.ts';

export interface ToolStateMachineProps {
  /** A validated tool folder (from `loadToolFolders`). */
  readonly tool: ToolFolder;
  /** A function for every worker the definition names. */
  readonly workers: ReadonlyMap<string, IFunction>;
  readonly logRetention: RetentionDays;
  /** X-Ray tracing of executions. */
  readonly tracing: boolean;
}

export class ToolStateMachine extends Construct {
  public readonly stateMachine: StateMachine;
  public readonly logGroup: LogGroup;
  public readonly toolName: string;
  public readonly workflowType: 'STANDARD' | 'EXPRESS';

  constructor(scope: Construct, id: string, props: ToolStateMachineProps) {
    super(scope, id);
    const { tool } = props;
    this.toolName = tool.config.name;
    this.workflowType = tool.config.workflowType;

    // The /aws/vendedlogs/ prefix keeps Step Functions from growing the account's
    // CloudWatch Logs resource policy by one entry per log group (it has a size limit).
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${Names.uniqueResourceName(this, { maxLength: 200, separator: '-' })}`,
      retention: props.logRetention,
      // A fixed name: a retained group would block the next deployment of the same stack.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    const substitutions: Record<string, string> = {};
    for (const worker of tool.workers) {
      const fn = props.workers.get(worker);
      if (!fn) throw new Error(`Tool "${this.toolName}" uses \${${workerSubstitutionKey(worker)}} but no worker function was given for it`);
      substitutions[workerSubstitutionKey(worker)] = fn.functionArn;
    }

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      comment: tool.config.title ?? tool.config.name,
      definitionBody: DefinitionBody.fromString(tool.definitionText),
      definitionSubstitutions: substitutions,
      stateMachineType: this.workflowType === 'EXPRESS' ? StateMachineType.EXPRESS : StateMachineType.STANDARD,
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: props.tracing,
    });

    for (const worker of tool.workers) {
      // The definition calls the unqualified ARN, so the exact ARN is all it needs
      // (IFunction.grantInvoke would add `:*` for every version and alias).
      Grant.addToPrincipal({
        grantee: this.stateMachine,
        actions: ['lambda:InvokeFunction'],
        resourceArns: [props.workers.get(worker)!.functionArn],
      });
    }

    Validations.of(this.stateMachine.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Vended log delivery (logs:CreateLogDelivery, logs:DescribeResourcePolicies, ...) and X-Ray (xray:PutTraceSegments, ...) support only Resource "*"; CDK adds them for logging and tracing.',
    });
    if (!props.tracing) {
      Validations.of(this.stateMachine).acknowledge({
        id: 'AwsSolutions-SF2',
        reason: 'X-Ray tracing is opt-in (the tracing prop): it is billed per trace and the execution logs cover operations.',
      });
    }
  }

  /** StartExecution (STANDARD) or StartSyncExecution (EXPRESS), as the tool is run. */
  public grantStart(grantee: IGrantable): Grant {
    return this.workflowType === 'EXPRESS'
      ? this.stateMachine.grantStartSyncExecution(grantee)
      : this.stateMachine.grantStartExecution(grantee);
  }

  /** DescribeExecution and StopExecution on this state machine's executions. */
  public grantExecutionControl(grantee: IGrantable): Grant {
    return this.grantOnExecutions(grantee, 'states:DescribeExecution', 'states:StopExecution');
  }

  /** SendTaskSuccess and SendTaskFailure for this state machine's task tokens (input mid-run). */
  public grantTaskResponse(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['states:SendTaskSuccess', 'states:SendTaskFailure'],
      resourceArns: [this.stateMachine.stateMachineArn],
    });
  }

  private grantOnExecutions(grantee: IGrantable, ...actions: string[]): Grant {
    if (this.workflowType === 'EXPRESS') {
      throw new Error(`Tool "${this.toolName}" is EXPRESS: its executions cannot be described or stopped`);
    }
    // Execution names come from operation tokens, so `:*` after this state machine's
    // name is as narrow as an execution ARN can be.
    const executions = `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:execution:${this.stateMachine.stateMachineName}:*`;
    const grant = Grant.addToPrincipal({ grantee, actions, resourceArns: [executions] });
    const principal: unknown = grantee.grantPrincipal;
    if (principal instanceof Construct) this.acknowledgeExecutionWildcard(principal);
    return grant;
  }

  private acknowledgeExecutionWildcard(principal: IConstruct): void {
    const logicalId = Stack.of(this).getLogicalId(this.stateMachine.node.defaultChild as CfnStateMachine);
    // The finding id as cdk-nag flattens the ARN above.
    const resource = `arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<${logicalId}.Name>:*`;
    Validations.of(principal).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${resource}]`,
      reason: `Execution ARNs end in a per-call name; this scopes the actions to the executions of the "${this.toolName}" state machine.`,
    });
  }
}
