/**
 * One durable tool folder as a Lambda durable function: its `durable.ts` bundled as the workers
 * are (Node 24, ESM, the AWS SDK left to the runtime, the durable SDK and the helpers inside),
 * `durableConfig` and sizes from tool.json, a deterministic name (durable-function-names.ts),
 * and a published version behind the alias the MCP Lambda invokes, so an execution keeps the
 * code it started on across deploys. With tracing on, the durable SDK loads our plugin from
 * beside the bundle (durable-tracing-bundling.ts), so its invocations and steps join the
 * operation's trace. Its role may checkpoint its own executions, write logs,
 * do what the built-in workers do on the operations table (the helpers ask and report from
 * inside it), put large results, and whatever the folder's `permissions` allow.
 */
import { Annotations, Aws, Duration, Validations } from 'aws-cdk-lib';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Alias } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../lambdas/handlers/environment.ts';
import { DURABLE_FUNCTION_ALIAS } from '../lambdas/tools/durable-function-names.ts';
import { MAX_RUN_SECONDS } from '../lambdas/tools/tool-catalog.ts';
import type { ToolFolder } from '../lambdas/tools/tool-folder.ts';
import { BundledFunction, projectRootOf } from './bundled-function.ts';
import { DURABLE_LAZY_MODULES, durableTracingEnvironment } from './durable-tracing-bundling.ts';
import type { FunctionTracing } from './server-tracing.ts';

export { projectRootOf } from './bundled-function.ts';
import type { OperationsTable } from './operations-table.ts';
import type { ResultsBucket } from './results-bucket.ts';
import { addToolPermissions } from './tool-permission-statements.ts';
import { acknowledgeNestedResultsGrant } from './worker-functions.ts';

/** The defaults of tool.json's `durable` block. */
export const DURABLE_DEFAULTS = {
  /** As long as Lambda allows, the catalog's bound (MAX_RUN_SECONDS.DURABLE). */
  executionTimeoutSeconds: MAX_RUN_SECONDS.DURABLE,
  /** Lambda's own default. */
  retentionDays: 14,
  memorySize: 512,
  /** Lambda's longest: a run that needs more resumes in a later invocation from its checkpoints. */
  invocationTimeoutSeconds: 900,
} as const;

/** The id of Lambda's info that adding `durableConfig` to an existing function replaces it. */
export const DURABILITY_REPLACEMENT_INFO = 'aws-lambda:Function.DurableConfig';

/** What the durable execution SDK calls on the function's own executions. */
const CHECKPOINT_ACTIONS = ['lambda:CheckpointDurableExecution', 'lambda:GetDurableExecutionState'];

export interface DurableToolFunctionProps {
  /** A validated durable tool folder (from `loadToolFolders`, with `durable`). */
  readonly tool: ToolFolder;
  /** The function's name (deterministic: `toolFunctionName`). */
  readonly functionName: string;
  readonly operations: OperationsTable;
  readonly results: ResultsBucket;
  readonly logRetention: RetentionDays;
  readonly tracing: FunctionTracing;
}

export class DurableToolFunction extends Construct {
  public readonly toolName: string;
  /** Known at synth: the MCP Lambda derives the alias ARN from it (durable-function-names.ts). */
  public readonly functionName: string;
  public readonly function: NodejsFunction;
  /** Its own log group, where every invocation of every execution logs. */
  public readonly logGroup: LogGroup;
  /** `live`, on the version this deploy published: what the MCP Lambda invokes. */
  public readonly alias: Alias;

  constructor(scope: Construct, id: string, props: DurableToolFunctionProps) {
    super(scope, id);
    const { tool } = props;
    this.toolName = tool.config.name;
    this.functionName = props.functionName;
    if (!tool.durable) throw new Error(`Tool "${this.toolName}" has no durable.ts to deploy as a durable function`);
    const settings = { ...DURABLE_DEFAULTS, ...tool.config.durable };

    const bundled = new BundledFunction(this, 'Handler', {
      entry: tool.durable.file,
      projectRoot: projectRootOf(tool.durable.file),
      functionName: props.functionName,
      description: `async-mcp durable tool ${this.toolName}`,
      memorySize: settings.memorySize,
      timeout: Duration.seconds(settings.invocationTimeoutSeconds),
      durableConfig: {
        executionTimeout: Duration.seconds(settings.executionTimeoutSeconds),
        retentionPeriod: Duration.days(settings.retentionDays),
      },
      environment: { [ENV.tableName]: props.operations.tableName, ...durableTracingEnvironment(props.tracing.environment) },
      lazyModules: DURABLE_LAZY_MODULES,
      logRetention: props.logRetention,
      tracing: props.tracing,
    });
    this.function = bundled.function;
    this.logGroup = bundled.logGroup;
    // Lambda's note is about an existing function given durableConfig; this one has it from its first deploy.
    Annotations.of(this.function).acknowledgeInfo(
      DURABILITY_REPLACEMENT_INFO,
      'A durable tool function is created durable: no existing function is turned durable, so nothing is replaced.',
    );

    // Every version's executions, by the name known at synth: the function's own ARN in its role's
    // policy would make the function wait on a policy that waits on it. An execution ARN names the
    // version it runs, never the alias (`…:function:<name>:<version>/durable-execution/…`).
    const ownExecutions = `arn:${Aws.PARTITION}:lambda:${Aws.REGION}:${Aws.ACCOUNT_ID}:function:${props.functionName}:*`;
    this.function.addToRolePolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: CHECKPOINT_ACTIONS, resources: [ownExecutions] }));
    Validations.of(bundled.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:${props.functionName}:*]`,
      reason: `The durable executions of this function (every version's): the SDK checkpoints and reads the state of the execution it runs.`,
    });

    // askClient and reportProgress write the question and the progress as the built-in workers do.
    props.operations.grantBuiltInWorkerAccess(this.function);
    // A result too large to return is put in the results bucket (linkResult).
    this.function.addEnvironment(ENV.resultsBucket, props.results.bucket.bucketName);
    props.results.grantWriteResults(this.function);
    acknowledgeNestedResultsGrant(this.function, props.results);

    addToolPermissions(this.function, bundled.role, this.toolName, tool.config.permissions ?? []);

    this.alias = new Alias(this, 'Live', { aliasName: DURABLE_FUNCTION_ALIAS, version: this.function.currentVersion });
  }
}
