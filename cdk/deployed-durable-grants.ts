/**
 * Grants on every durable tool function this server deploys, by their common name prefix
 * (durable-function-names.ts), as DeployedToolGrants does for the state machines: one policy
 * of the same size for any number of tools, still covering the functions of tools removed
 * since, whose running executions can be described, stopped and answered until they end.
 *
 * The resources, per Lambda's "Security and permissions for Lambda durable functions": an
 * execution is a sub-resource of a function version, `…:function:<name>:<version>/durable-execution/<name>/<id>`
 * (never the alias, even when invoked through it), and a policy naming the unqualified function
 * matches none. Invoke is authorized on the qualified ARN it is called with (the alias).
 */
import { Aws, Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { DURABLE_FUNCTION_ALIAS } from '../lambdas/tools/durable-function-names.ts';

/** What the grants name, as ARN patterns after `arn:…:function:`. */
type Kind = 'alias' | 'executions' | 'function';

export class DeployedDurableGrants {
  /** `arn:…:function:<prefix>*:live`: the aliases the engine invokes. */
  public readonly aliases: string;
  /** `arn:…:function:<prefix>*:*\/durable-execution/*`: every execution of every version. */
  public readonly executions: string;
  /** `arn:…:function:<prefix>*`: the functions themselves, as ListDurableExecutionsByFunction names them (and their qualifiers). */
  public readonly functions: string;

  /** @param namePrefix the prefix of every deployed durable function's name (`<prefix><tool>`) */
  constructor(private readonly namePrefix: string) {
    const base = `arn:${Aws.PARTITION}:lambda:${Aws.REGION}:${Aws.ACCOUNT_ID}:function:`;
    this.aliases = `${base}${this.pattern('alias')}`;
    this.executions = `${base}${this.pattern('executions')}`;
    this.functions = `${base}${this.pattern('function')}`;
  }

  /** Invoke through the alias: a start (`Event`) and a synchronous run (`RequestResponse`). */
  public grantStart(grantee: IGrantable): Grant {
    return this.grant(
      grantee,
      ['lambda:InvokeFunction'],
      'alias',
      `Every deployed durable tool function is named "<prefix><tool>" and invoked through its "${DURABLE_FUNCTION_ALIAS}" alias; this scopes the invoke to those aliases.`,
    );
  }

  /**
   * Describe and stop the executions, and find one by name: the core records an ARN before the
   * start answers, and the engine resolves it with ListDurableExecutionsByFunction.
   */
  public grantExecutionControl(grantee: IGrantable): void {
    this.grant(
      grantee,
      ['lambda:GetDurableExecution', 'lambda:StopDurableExecution'],
      'executions',
      'Durable execution ARNs end in a version, a per-call name and an id Lambda assigns, under functions named "<prefix><tool>"; this scopes the actions to the executions of the deployed durable tools.',
    );
    this.grant(
      grantee,
      ['lambda:ListDurableExecutionsByFunction'],
      'function',
      'Every deployed durable tool function is named "<prefix><tool>"; listing finds an execution by its name on one of them.',
    );
  }

  /** Answer a question a durable tool asked (its callback), with a result or a failure. */
  public grantCallbackResponse(grantee: IGrantable): Grant {
    return this.grant(
      grantee,
      ['lambda:SendDurableExecutionCallbackSuccess', 'lambda:SendDurableExecutionCallbackFailure'],
      'executions',
      'A callback belongs to one durable execution, whose ARN ends in a version, a per-call name and an id; this scopes the answers to the executions of the deployed durable tools.',
    );
  }

  private pattern(kind: Kind): string {
    if (kind === 'alias') return `${this.namePrefix}*:${DURABLE_FUNCTION_ALIAS}`;
    if (kind === 'executions') return `${this.namePrefix}*:*/durable-execution/*`;
    return `${this.namePrefix}*`;
  }

  private grant(grantee: IGrantable, actions: string[], kind: Kind, reason: string): Grant {
    const resource = { alias: this.aliases, executions: this.executions, function: this.functions }[kind];
    const grant = Grant.addToPrincipal({ grantee, actions, resourceArns: [resource] });
    const principal: unknown = grantee.grantPrincipal;
    if (principal instanceof Construct) {
      // The finding id as cdk-nag flattens the ARN above.
      const finding = `arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:${this.pattern(kind)}`;
      Validations.of(principal).acknowledge({ id: `AwsSolutions-IAM5[Resource::${finding}]`, reason });
    }
    return grant;
  }
}
