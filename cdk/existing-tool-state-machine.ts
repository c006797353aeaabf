/**
 * A tool that runs a state machine the account already has (`tool.json` `stateMachineArn`):
 * the stack creates no machine and no role for it; it only grants the MCP Lambda and
 * status sync that one machine and its executions.
 */
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { ToolFolder } from '../lambdas/tools/tool-folder.ts';
import { grantOnExecutions } from './execution-grants.ts';
import type { ToolMachine } from './tool-state-machine.ts';

export class ExistingToolStateMachine extends Construct implements ToolMachine {
  public readonly toolName: string;
  public readonly workflowType: 'STANDARD' | 'EXPRESS';
  public readonly stateMachineArn: string;

  constructor(scope: Construct, id: string, tool: ToolFolder) {
    super(scope, id);
    if (!tool.config.stateMachineArn) throw new Error(`Tool "${tool.config.name}" names no stateMachineArn`);
    this.toolName = tool.config.name;
    this.workflowType = tool.config.workflowType;
    this.stateMachineArn = tool.config.stateMachineArn;
  }

  public grantStart(grantee: IGrantable): Grant {
    const action = this.workflowType === 'EXPRESS' ? 'states:StartSyncExecution' : 'states:StartExecution';
    return Grant.addToPrincipal({ grantee, actions: [action], resourceArns: [this.stateMachineArn] });
  }

  public grantExecutionControl(grantee: IGrantable): Grant {
    if (this.workflowType === 'EXPRESS') {
      throw new Error(`Tool "${this.toolName}" is EXPRESS: its executions cannot be described or stopped`);
    }
    const executions = `${this.stateMachineArn.replace(':stateMachine:', ':execution:')}:*`;
    return grantOnExecutions({
      grantee,
      actions: ['states:DescribeExecution', 'states:StopExecution'],
      executions,
      finding: executions,
      toolName: this.toolName,
    });
  }
}
