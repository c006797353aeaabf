/**
 * A Lambda function bundled from this repository's TypeScript with the locally
 * installed esbuild (no Docker): ESM for the nodejs24.x runtime on arm64, the AWS SDK left to the
 * runtime, its own role and log group (no AWS managed policy).
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing, type IDestination } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { LOCK_FILE, REPO_ROOT } from './repo-paths.ts';

/** Pinned rather than "latest": the bundle targets this Node version (DESIGN §7). */
export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;

// ESM bundles of CommonJS dependencies call `require` for Node built-ins; give them one.
const REQUIRE_BANNER = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/** IAM's limit on a role description. */
export const MAX_ROLE_DESCRIPTION = 1000;
/** Lambda's limit on a function description. */
export const MAX_FUNCTION_DESCRIPTION = 256;

export interface BundledFunctionProps {
  /** The TypeScript module exporting `handler`. */
  readonly entry: string;
  readonly description: string;
  /** @default - none */
  readonly environment?: Record<string, string>;
  /** @default 512 */
  readonly memorySize?: number;
  /** @default Duration.seconds(30) */
  readonly timeout?: Duration;
  readonly logRetention: RetentionDays;
  /** Active X-Ray tracing. */
  readonly tracing: boolean;
  /**
   * Shell commands run after esbuild, given the asset's output directory.
   * @default - none
   */
  readonly afterBundling?: (outputDir: string) => string[];
  /**
   * Where failed asynchronous invocations go.
   * @default - dropped after Lambda's retries
   */
  readonly onFailure?: IDestination;
  /**
   * Concurrent executions reserved for this function, which also cap it.
   * @default - none: the function shares the account's unreserved concurrency
   */
  readonly reservedConcurrentExecutions?: number;
}

export class BundledFunction extends Construct {
  public readonly function: NodejsFunction;
  public readonly role: Role;
  public readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: BundledFunctionProps) {
    super(scope, id);
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: capped(`Runs: ${props.description}`, MAX_ROLE_DESCRIPTION),
    });
    // Logs are operational data with a retention; they go with the stack.
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: RemovalPolicy.DESTROY });
    this.logGroup.grantWrite(this.role);

    const afterBundling = props.afterBundling;
    this.function = new NodejsFunction(this, 'Function', {
      entry: props.entry,
      handler: 'handler',
      description: capped(props.description, MAX_FUNCTION_DESCRIPTION),
      runtime: FUNCTION_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(30),
      role: this.role,
      logGroup: this.logGroup,
      tracing: props.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      ...(props.onFailure ? { onFailure: props.onFailure } : {}),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      projectRoot: REPO_ROOT,
      depsLockFilePath: LOCK_FILE,
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        mainFields: ['module', 'main'],
        externalModules: ['@aws-sdk/*'],
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        banner: REQUIRE_BANNER,
        forceDockerBundling: false,
        logLevel: LogLevel.WARNING,
        ...(afterBundling
          ? {
              commandHooks: {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (_inputDir: string, outputDir: string) => afterBundling(outputDir),
              },
            }
          : {}),
      },
    });

    if (props.tracing) {
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'xray:PutTraceSegments and xray:PutTelemetryRecords support only Resource "*" (added by active tracing).',
      });
    }
  }
}

/** `text` within `max` characters, `...` marking a cut (IAM descriptions allow Latin-1 only). */
export function capped(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}
