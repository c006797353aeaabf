/** Grants on the executions of one state machine, with the cdk-nag acknowledgement of their `:*`. */
import { Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

export interface ExecutionGrant {
  readonly grantee: IGrantable;
  readonly actions: string[];
  /** `arn:…:execution:<state machine name>:*` */
  readonly executions: string;
  /** The same ARN as cdk-nag flattens it (`<AWS::Region>` for a pseudo parameter). */
  readonly finding: string;
  readonly toolName: string;
}

/**
 * Execution names come from operation tokens, so `:*` after the state machine's name is as
 * narrow as an execution ARN can be; the grantee's role acknowledges exactly that wildcard.
 */
export function grantOnExecutions({ grantee, actions, executions, finding, toolName }: ExecutionGrant): Grant {
  const grant = Grant.addToPrincipal({ grantee, actions, resourceArns: [executions] });
  const principal: unknown = grantee.grantPrincipal;
  if (principal instanceof Construct) {
    Validations.of(principal).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${finding}]`,
      reason: `Execution ARNs end in a per-call name; this scopes the actions to the executions of the "${toolName}" state machine.`,
    });
  }
  return grant;
}
