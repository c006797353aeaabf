/**
 * One tool folder as a state machine (DESIGN §3): the definition inline from
 * `definition.asl.json`, worker placeholders substituted with the workers' ARNs,
 * the workflow type from `tool.json`, logging at level ALL without execution data, a
 * deterministic name (so the MCP Lambda can derive its ARN), and the folder's own
 * `permissions` on its role alone, each wildcard acknowledged with the folder's reason.
 */
import { Aws, type CfnResource, Names, NestedStack, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { ToolFolder } from '../lambdas/tools/tool-folder.ts';
import { REQUEST_INPUT_WORKER } from '../lambdas/tools/request-input-states.ts';
import { workerSubstitutionKey } from '../lambdas/tools/worker-placeholders.ts';
import { grantOnExecutions } from './execution-grants.ts';
import { addToolPermissions } from './tool-permission-statements.ts';

/** A tool's state machine as the MCP Lambda and status sync use it: deployed here or existing. */
export interface ToolMachine {
  readonly toolName: string;
  readonly workflowType: 'STANDARD' | 'EXPRESS';
  readonly stateMachineArn: string;
  /** StartExecution (STANDARD) or StartSyncExecution (EXPRESS), as the tool is run. */
  grantStart(grantee: IGrantable): Grant;
  /** DescribeExecution and StopExecution on this state machine's executions. */
  grantExecutionControl(grantee: IGrantable): Grant;
}

export interface ToolStateMachineProps {
  /** A validated tool folder (from `loadToolFolders`) with a definition. */
  readonly tool: ToolFolder;
  /** The state machine's name (deterministic: see state-machine-names.ts). */
  readonly stateMachineName: string;
  /**
   * A function for every worker the definition names. The definition calls its current
   * published version (`currentVersion`), so an execution keeps the worker code it started
   * with across deploys.
   */
  readonly workers: ReadonlyMap<string, LambdaFunction>;
  readonly logRetention: RetentionDays;
  /** X-Ray tracing of executions. */
  readonly tracing: boolean;
}

export class ToolStateMachine extends Construct implements ToolMachine {
  public readonly stateMachine: StateMachine;
  public readonly logGroup: LogGroup;
  public readonly toolName: string;
  public readonly workflowType: 'STANDARD' | 'EXPRESS';
  /** Known at synth: the MCP Lambda derives the ARN from it (state-machine-names.ts). */
  public readonly stateMachineName: string;
  /** Whether a state asks the client a question (calls the request_input worker), so the MCP Lambda must resume it. */
  public readonly asksForInput: boolean;

  constructor(scope: Construct, id: string, props: ToolStateMachineProps) {
    super(scope, id);
    const { tool } = props;
    this.toolName = tool.config.name;
    this.workflowType = tool.config.workflowType;
    this.stateMachineName = props.stateMachineName;
    this.asksForInput = tool.workers.includes(REQUEST_INPUT_WORKER);
    const definitionText = tool.definitionText;
    if (definitionText === undefined || tool.config.stateMachineArn !== undefined) {
      throw new Error(`Tool "${this.toolName}" has no definition to deploy (an existing state machine is an ExistingToolStateMachine)`);
    }

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
      substitutions[workerSubstitutionKey(worker)] = fn.currentVersion.functionArn;
    }

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName: props.stateMachineName,
      comment: tool.config.title ?? tool.config.name,
      definitionBody: DefinitionBody.fromString(definitionText),
      definitionSubstitutions: substitutions,
      stateMachineType: this.workflowType === 'EXPRESS' ? StateMachineType.EXPRESS : StateMachineType.STANDARD,
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: props.tracing,
    });

    for (const worker of tool.workers) {
      // Every version, not only the current one: an execution that started before a deploy
      // still calls the version it started with. The unqualified ARN is not granted.
      const fn = props.workers.get(worker);
      if (!fn) throw new Error(`Tool ${tool.config.name} names worker ${worker}, which the stack does not build`);
      Grant.addToPrincipal({ grantee: this.stateMachine, actions: ['lambda:InvokeFunction'], resourceArns: [`${fn.functionArn}:*`] });
      for (const name of nagNames(this, fn)) {
        Validations.of(this.stateMachine.role).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${name}:*]`,
          reason: `The published versions of the ${worker} worker: an execution calls the version current when it started, which a later deploy leaves in place.`,
        });
      }
    }

    addToolPermissions(this.stateMachine, this.stateMachine.role, this.toolName, tool.config.permissions ?? []);

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

  public get stateMachineArn(): string {
    return this.stateMachine.stateMachineArn;
  }

  /** StartExecution (STANDARD) or StartSyncExecution (EXPRESS), as the tool is run. */
  public grantStart(grantee: IGrantable): Grant {
    return this.workflowType === 'EXPRESS' ? this.stateMachine.grantStartSyncExecution(grantee) : this.stateMachine.grantStartExecution(grantee);
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
    const executions = `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:execution:${this.stateMachineName}:*`;
    // The finding id as cdk-nag flattens the ARN above.
    const finding = `arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${this.stateMachineName}:*`;
    return grantOnExecutions({ grantee, actions, executions, finding, toolName: this.toolName });
  }
}

/**
 * A worker function's ARN as cdk-nag names it: `<Logical.Arn>` (its own stack, or any stack
 * before the synth turns cross-stack references into parameters), and `<referenceto...Arn>`
 * where a parameter of a nested stack passes it.
 */
function nagNames(scope: Construct, fn: LambdaFunction): string[] {
  const resource = fn.node.defaultChild as CfnResource;
  const home = Stack.of(resource);
  const own = `<${home.getLogicalId(resource)}.Arn>`;
  if (home === Stack.of(scope)) return [own];
  // From a sibling nested stack, the parameter names that stack's output.
  const from = NestedStack.isNestedStack(home) && home.nestedStackResource ? `${Names.uniqueId(home.nestedStackResource)}Outputs` : '';
  return [own, `<referenceto${from}${Names.uniqueId(resource)}Arn>`];
}
