/**
 * One Lambda per distinct `${Worker_<name>}` across the deployed definitions, each in the
 * nested worker stack its name hashes to (catalog-stacks.ts), so the workers may grow with
 * the tools. Each is bundled around its module (worker-bundling.ts): the module is the user's,
 * unchanged, and the entry traces its invocations.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CfnResource, type Duration, Names, Stack, Validations } from 'aws-cdk-lib';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../lambdas/handlers/environment.ts';
import type { ToolFolder } from '../lambdas/tools/tool-folder.ts';
import { BUILT_IN_WORKERS, workerModuleFile } from '../lambdas/tools/worker-placeholders.ts';
import { BundledFunction, projectRootOf } from './bundled-function.ts';
import type { FunctionTracing } from './server-tracing.ts';
import type { CatalogStacks } from './catalog-stacks.ts';
import type { OperationsTable } from './operations-table.ts';
import { DEFAULT_WORKERS_DIR } from './repo-paths.ts';
import type { ResultsBucket } from './results-bucket.ts';
import { workerBundling } from './worker-bundling.ts';

export interface WorkerFunctionsProps {
  readonly tools: readonly ToolFolder[];
  /** Where the tools' own worker modules live; the built-in ones always come from this repository. */
  readonly workersDir: string;
  readonly stacks: CatalogStacks;
  readonly operations: OperationsTable;
  readonly results: ResultsBucket;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly logRetention: RetentionDays;
  readonly tracing: FunctionTracing;
  readonly reservedConcurrentExecutions: number | undefined;
}

/** Worker name -> its Lambda, sorted by name. */
export function createWorkerFunctions(props: WorkerFunctionsProps): Map<string, NodejsFunction> {
  const usedBy = new Map<string, string[]>();
  // An existing machine's local stand-in may call workers; the deployed machine does not.
  for (const tool of props.tools.filter((t) => t.config.stateMachineArn === undefined)) {
    for (const worker of tool.workers) usedBy.set(worker, [...(usedBy.get(worker) ?? []), tool.config.name]);
  }
  const workers = new Map<string, NodejsFunction>();
  for (const [worker, tools] of [...usedBy].sort(([a], [b]) => a.localeCompare(b))) {
    const builtIn = BUILT_IN_WORKERS.includes(worker);
    const entry = join(builtIn ? DEFAULT_WORKERS_DIR : props.workersDir, workerModuleFile(worker));
    if (!existsSync(entry)) {
      throw new Error(`Worker "${worker}" (used by ${tools.join(', ')}) has no module: expected ${entry} exporting handler`);
    }
    const fn = new BundledFunction(workersScope(props.stacks.stackFor(worker)), worker, {
      ...workerBundling(worker, entry),
      // The folder that holds the worker's module and the package, whose entry it is bundled from.
      projectRoot: projectRootOf(entry),
      description: `async-mcp worker ${worker} (${tools.join(', ')})`,
      memorySize: props.memorySize,
      timeout: props.timeout,
      logRetention: props.logRetention,
      tracing: props.tracing,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    });
    // Only a worker that uses the results helper may write results.
    if (usesResultsHelper(entry)) {
      fn.function.addEnvironment(ENV.resultsBucket, props.results.bucket.bucketName);
      props.results.grantWriteResults(fn.function);
      acknowledgeNestedResultsGrant(fn.function, props.results);
    }
    // The built-in workers write questions and progress to the operation record.
    if (builtIn) {
      fn.function.addEnvironment(ENV.tableName, props.operations.tableName);
      props.operations.grantBuiltInWorkerAccess(fn.function);
    }
    workers.set(worker, fn.function);
  }
  return workers;
}

/**
 * The scope of the workers in `stack`: their own, so a worker's logical ids differ from
 * those of a tool of the same name.
 */
function workersScope(stack: Construct): Construct {
  return (stack.node.tryFindChild('Workers') as Construct | undefined) ?? new Construct(stack, 'Workers');
}

/**
 * In a nested stack the bucket's ARN arrives as a parameter, which cdk-nag names
 * `<referenceto<bucket's unique id>Arn>`, not by the bucket's logical id the grant acknowledges.
 */
export function acknowledgeNestedResultsGrant(fn: NodejsFunction, results: ResultsBucket): void {
  const bucket = results.bucket.node.defaultChild as CfnResource;
  if (Stack.of(fn) === Stack.of(bucket)) return;
  if (!fn.role) return;
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<referenceto${Names.uniqueId(bucket)}Arn>/results/*]`,
    reason:
      'Result object keys end in a per-result id; this scopes writes to the results prefix of the one results bucket (its ARN passed to this nested stack).',
  });
}

/** Whether a worker module imports the results helper (lambdas/results/write-result.ts). */
function usesResultsHelper(entry: string): boolean {
  return /from\s+['"][^'"]*results\/write-result(\.ts)?['"]/.test(readFileSync(entry, 'utf8'));
}
