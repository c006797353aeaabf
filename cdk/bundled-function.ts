/**
 * A Lambda function bundled from this repository's TypeScript with the locally installed
 * esbuild, inside the synth's process (bundled-code.ts; no Docker), with the settings of
 * lambda-bundling.ts: ESM for the nodejs24.x runtime on arm64, the AWS SDK left to the runtime,
 * its own role and log group (no AWS managed policy).
 */
import { dirname, isAbsolute, relative } from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, type DurableConfig, type IDestination, LayerVersion, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { type AfterBundling, bundledCode } from './bundled-code.ts';
import { FUNCTION_NODE_OPTIONS, lazyModulesOf } from './lambda-bundling.ts';
import { REPO_ROOT } from './repo-paths.ts';
import type { FunctionTracing } from './server-tracing.ts';

/** Pinned rather than "latest": the bundle targets this Node version (DESIGN §7). */
export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;

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
  /** X-Ray active tracing, the OpenTelemetry environment and layers (server-tracing.ts). */
  readonly tracing: FunctionTracing;
  /**
   * More files the function ships, written into its asset's folder (in the synth's process) once
   * the bundle and its lazy modules are there.
   * @default - nothing more
   */
  readonly afterBundling?: AfterBundling;
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
  /**
   * Packages the function loads with `import()` for some requests only: left out of the
   * bundle, which every cold start parses, and shipped beside it in the asset.
   * @default - lazyModulesOf(entry): jose for the MCP handler, none for the others
   */
  readonly lazyModules?: readonly string[];
  /**
   * Module substitutions for this function alone, as esbuild's alias takes them (a worker's
   * module under the name its entry imports, worker-bundling.ts), beside BUNDLE_ALIASES.
   * @default - none
   */
  readonly aliases?: Readonly<Record<string, string>>;
  /**
   * Expressions replaced at bundling for this function alone, as esbuild's define takes them.
   * @default - none
   */
  readonly define?: Readonly<Record<string, string>>;
  /**
   * The folder esbuild resolves the entry's imports from; it must hold the entry and this package.
   * @default - this repository (or the installed package)
   */
  readonly projectRoot?: string;
  /**
   * A fixed name, for a function others find by name (a durable tool's).
   * @default - a name CloudFormation generates
   */
  readonly functionName?: string;
  /**
   * Makes the function durable (checkpointed executions of up to a year).
   * @default - not durable
   */
  readonly durableConfig?: DurableConfig;
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

    // A NodejsFunction still (its type is the construct's public API), given its code: bundled here, not by its own bundling.
    this.function = new NodejsFunction(this, 'Function', {
      code: bundledCode({
        entry: props.entry,
        // The repository for its own functions; for a user's worker, the project that installs the package.
        projectRoot: props.projectRoot ?? projectRootOf(props.entry),
        lazyModules: props.lazyModules ?? lazyModulesOf(props.entry),
        ...(props.aliases ? { aliases: props.aliases } : {}),
        ...(props.define ? { define: props.define } : {}),
        ...(props.afterBundling ? { afterBundling: props.afterBundling } : {}),
      }),
      handler: 'index.handler',
      ...(props.functionName ? { functionName: props.functionName } : {}),
      ...(props.durableConfig ? { durableConfig: props.durableConfig } : {}),
      description: capped(props.description, MAX_FUNCTION_DESCRIPTION),
      runtime: FUNCTION_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(30),
      role: this.role,
      logGroup: this.logGroup,
      tracing: props.tracing.xray ? Tracing.ACTIVE : Tracing.DISABLED,
      environment: { NODE_OPTIONS: FUNCTION_NODE_OPTIONS, ...props.tracing.environment, ...props.environment },
      ...(props.tracing.layerArns.length > 0
        ? { layers: props.tracing.layerArns.map((arn, index) => LayerVersion.fromLayerVersionArn(this, `TracingLayer${index}`, arn)) }
        : {}),
      ...(props.onFailure ? { onFailure: props.onFailure } : {}),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      // Where `currentVersion` is used (the workers, which definitions call by version), each
      // deploy that changes the function publishes a version and keeps the older ones: an
      // execution that started before the deploy still calls the version it started with.
      currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN },
    });

    if (props.tracing.xray) {
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

/**
 * The nearest folder holding both `entry` and the package (`packageRoot`): the repository for
 * its own functions, the project for a user's worker or durable tool, whose node_modules holds the
 * package and the SDKs the bundle takes in.
 */
export function projectRootOf(entry: string, packageRoot: string = REPO_ROOT): string {
  const holds = (dir: string) => {
    const path = relative(dir, entry);
    return !path.startsWith('..') && !isAbsolute(path);
  };
  let dir = packageRoot;
  while (!holds(dir) && dirname(dir) !== dir) dir = dirname(dir);
  // Bundling runs the project's esbuild and resolves the tool's imports from its node_modules:
  // a tool under no folder that also holds the package has neither.
  if (dirname(dir) === dir) {
    throw new Error(
      `${entry}: a durable tool must be inside the project that installs async-mcp (or this repository), so that bundling finds esbuild and resolves its imports; move its tools directory into the project`,
    );
  }
  return dir;
}
