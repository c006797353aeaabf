/**
 * A tool folder's own `permissions` (tool.json) on the role that runs it: its state machine's or
 * its durable function's, never another's. Each wildcard is acknowledged with the folder's reason.
 */
import { Fn, Validations } from 'aws-cdk-lib';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import { asList, wildcardsOf, type PermissionStatement } from '../lambdas/tools/tool-permissions.ts';

/** What runs the tool: it adds statements to its role (a state machine, a function). */
export interface RolePolicyHolder {
  addToRolePolicy(statement: PolicyStatement): void;
}

/** Each of `statements` on `holder`'s role; its wildcards acknowledged on `role` as cdk-nag names them. */
export function addToolPermissions(holder: RolePolicyHolder, role: IConstruct, toolName: string, statements: readonly PermissionStatement[]): void {
  for (const statement of statements) {
    holder.addToRolePolicy(
      new PolicyStatement({
        ...(statement.Sid ? { sid: statement.Sid } : {}),
        effect: statement.Effect === 'Deny' ? Effect.DENY : Effect.ALLOW,
        actions: asList(statement.Action),
        // `${AWS::Region}` and the like need Fn::Sub; plain ARNs stay literal.
        resources: asList(statement.Resource).map((resource) => (resource.includes('${') ? Fn.sub(resource) : resource)),
        ...(statement.Condition ? { conditions: statement.Condition } : {}),
      }),
    );
    const actions = new Set(asList(statement.Action));
    // The loader refuses a wildcard without its reason (lambdas/tools/tool-permissions.ts).
    const reason = statement.reason ?? 'no reason given';
    for (const wildcard of wildcardsOf(statement)) {
      // cdk-nag flattens Fn::Sub's `${X}` to `<X>`.
      const finding = actions.has(wildcard) ? `Action::${wildcard}` : `Resource::${wildcard.replaceAll('${', '<').replaceAll('}', '>')}`;
      Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason: `tool.json of "${toolName}": ${reason}` });
    }
  }
}
