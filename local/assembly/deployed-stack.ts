/**
 * The model of what `cdk deploy` would deploy, read from a cloud assembly: every resource named
 * and ARN'd as CloudFormation would in account 000000000000, region us-east-1, with every
 * intrinsic resolved. The local runners start services from this model only.
 */
import type { AttributeDefinition, GlobalSecondaryIndex, KeySchemaElement } from '@aws-sdk/client-dynamodb';

export type { AttributeDefinition, GlobalSecondaryIndex, KeySchemaElement };

/** The deployed stack, nested stacks flattened into it. */
export interface DeployedStack {
  /** The top-level stack's name, e.g. "AsyncMcp". */
  stackName: string;
  region: 'us-east-1';
  accountId: '000000000000';
  table: {
    logicalId: string;
    name: string;
    arn: string;
    keySchema: KeySchemaElement[];
    attributeDefinitions: AttributeDefinition[];
    globalSecondaryIndexes: GlobalSecondaryIndex[];
    ttlAttribute?: string;
    streamSpecification?: unknown;
  };
  bucket: { logicalId: string; name: string; arn: string; lifecycleRules: unknown[] };
  secret: { logicalId: string; name: string; arn: string; generateSecretString?: Record<string, unknown> };
  functions: DeployedFunction[];
  functionUrl?: {
    logicalId: string;
    targetFunctionLogicalId: string;
    authType: 'NONE' | 'AWS_IAM';
    invokeMode: 'BUFFERED' | 'RESPONSE_STREAM';
    cors?: Record<string, unknown>;
  };
  /** AWS::Lambda::Permission resources (resource policy of functions). */
  permissions: Array<{
    functionArn: string;
    action: string;
    principal: string;
    functionUrlAuthType?: string;
    sourceArn?: string;
  }>;
  stateMachines: Array<{
    logicalId: string;
    name: string;
    arn: string;
    type: 'STANDARD' | 'EXPRESS';
    /** DefinitionString with DefinitionSubstitutions and intrinsics resolved. */
    definition: string;
    roleArn: string;
  }>;
  rules: Array<{
    logicalId: string;
    name: string;
    arn: string;
    eventPattern: Record<string, unknown>;
    /** The pattern selects Lambda's durable execution status changes (lambdas/aws/durable-status-events.ts). */
    durableStatusChanges: boolean;
    targets: Array<{
      functionArn: string;
      retryPolicy?: { maximumRetryAttempts?: number; maximumEventAgeInSeconds?: number };
      deadLetterQueueArn?: string;
    }>;
  }>;
  queues: Array<{
    logicalId: string;
    name: string;
    arn: string;
    url: string;
    /** The template's VisibilityTimeout, MessageRetentionPeriod and RedrivePolicy, when it sets them. */
    visibilityTimeoutSeconds?: number;
    messageRetentionSeconds?: number;
    redrive?: { deadLetterTargetArn: string; maxReceiveCount: number };
  }>;
  /** AWS::Lambda::EventSourceMapping resources of SQS queues: who polls which queue for which function. */
  eventSourceMappings: Array<{
    logicalId: string;
    functionLogicalId: string;
    queueArn: string;
    batchSize: number;
    /** ScalingConfig.MaximumConcurrency. */
    maximumConcurrency?: number;
    reportBatchItemFailures: boolean;
    enabled: boolean;
  }>;
  roles: DeployedRole[];
  /** Published versions / aliases (AWS::Lambda::Version, AWS::Lambda::Alias) -> the function they name. */
  versions: Array<{ /** Function ARN with :N or :alias. */ arn: string; functionLogicalId: string }>;
  /** The aliases (AWS::Lambda::Alias) among them, with the version each names (a durable tool is invoked through its `live`). */
  aliases: Array<{ logicalId: string; name: string; arn: string; functionLogicalId: string; functionVersion: string }>;
  outputs: Record<string, string>;
}

/** One AWS::Lambda::Function, ready to run from its bundled asset. */
export interface DeployedFunction {
  logicalId: string;
  name: string;
  arn: string;
  /** Absolute: <assembly>/<aws:asset:path>. */
  assetDir: string;
  /** E.g. "index.handler". */
  handler: string;
  runtime: string;
  timeoutSeconds: number;
  memorySize: number;
  /** Exactly Environment.Variables, resolved. */
  environment: Record<string, string>;
  roleArn: string;
  /** The template's DurableConfig: the function is a durable function, whose executions Lambda runs. */
  durable?: { executionTimeoutSeconds: number; retentionDays?: number };
}

/** One AWS::IAM::Role with every policy that applies to it. */
export interface DeployedRole {
  logicalId: string;
  name: string;
  arn: string;
  /** Inline Policies of the role, every AWS::IAM::Policy / ManagedPolicy attached to it, resolved. */
  policyDocuments: Array<{ name: string; document: { Version?: string; Statement: unknown[] } }>;
  /** AWS managed policy ARNs it names (e.g. service-role/AWSLambdaBasicExecutionRole). */
  managedPolicyArns: string[];
}
