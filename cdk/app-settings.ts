/**
 * The app's settings, from CDK context (`cdk deploy -c key=value` or cdk.json), so a
 * deployment can point at another tools directory or open the URL without code changes.
 */
import { isAbsolute, resolve } from 'node:path';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import type { Node } from 'constructs';
import * as z from 'zod';
import { DEFAULT_TOOLS_DIR } from './repo-paths.ts';

export const CONTEXT_KEYS = {
  /** Stack name. */
  stackName: 'stackName',
  /** Tools directory, relative to the working directory. */
  toolsDir: 'toolsDir',
  /** Worker modules directory, relative to the working directory. */
  workersDir: 'workersDir',
  /** `AWS_IAM` (default) or `NONE`. */
  functionUrlAuthType: 'functionUrlAuthType',
  /** `true` turns on X-Ray tracing. */
  tracing: 'tracing',
  /** Active operations per principal (default 100). */
  maxActiveOperations: 'maxActiveOperations',
  /** `true` serves the handle tools to clients without async support. */
  handleTools: 'handleTools',
  /** Reserved concurrency of the MCP Lambda (default none). */
  mcpReservedConcurrency: 'mcpReservedConcurrency',
  /** Reserved concurrency of the status-sync Lambda (default none). */
  statusSyncReservedConcurrency: 'statusSyncReservedConcurrency',
  /** Reserved concurrency of each worker Lambda (default none). */
  workerReservedConcurrency: 'workerReservedConcurrency',
} as const;

export interface AppSettings {
  stackName: string;
  toolsDir: string;
  /** Absent: the construct's default (the repository's workers). */
  workersDir?: string;
  functionUrlAuthType: FunctionUrlAuthType;
  tracing: boolean;
  /** Absent: the construct's default. */
  maxActiveOperations?: number;
  handleTools: boolean;
  /** Absent: no reservation. */
  mcpReservedConcurrency?: number;
  statusSyncReservedConcurrency?: number;
  workerReservedConcurrency?: number;
}

// Context from the command line arrives as strings; from cdk.json it may be typed.
const positiveWholeNumber = z.union([z.number(), z.string().regex(/^\d+$/, 'expected a whole number').transform(Number)]).pipe(z.number().int().positive());

const Settings = z.object({
  stackName: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'a stack name is letters, digits and hyphens, starting with a letter').default('AsyncMcp'),
  toolsDir: z.string().min(1).optional(),
  workersDir: z.string().min(1).optional(),
  functionUrlAuthType: z.enum(['AWS_IAM', 'NONE']).default('AWS_IAM'),
  tracing: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).default(false),
  maxActiveOperations: positiveWholeNumber.optional(),
  handleTools: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).default(false),
  mcpReservedConcurrency: positiveWholeNumber.optional(),
  statusSyncReservedConcurrency: positiveWholeNumber.optional(),
  workerReservedConcurrency: positiveWholeNumber.optional(),
});

/** Reads and validates the settings; throws naming the bad context key. */
export function readAppSettings(node: Node, cwd = process.cwd()): AppSettings {
  const raw = Object.fromEntries(
    Object.entries(CONTEXT_KEYS).map(([field, key]) => [field, node.tryGetContext(key) as unknown]).filter(([, value]) => value !== undefined),
  );
  const parsed = Settings.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = CONTEXT_KEYS[issue.path[0] as keyof typeof CONTEXT_KEYS] ?? String(issue.path[0]);
    throw new Error(`Invalid context "${key}": ${issue.message}`);
  }
  const { toolsDir, workersDir, maxActiveOperations, mcpReservedConcurrency, statusSyncReservedConcurrency, workerReservedConcurrency } = parsed.data;
  const fromCwd = (dir: string) => (isAbsolute(dir) ? dir : resolve(cwd, dir));
  return {
    stackName: parsed.data.stackName,
    toolsDir: toolsDir === undefined ? DEFAULT_TOOLS_DIR : fromCwd(toolsDir),
    ...(workersDir === undefined ? {} : { workersDir: fromCwd(workersDir) }),
    functionUrlAuthType: parsed.data.functionUrlAuthType === 'NONE' ? FunctionUrlAuthType.NONE : FunctionUrlAuthType.AWS_IAM,
    tracing: parsed.data.tracing,
    maxActiveOperations,
    handleTools: parsed.data.handleTools,
    mcpReservedConcurrency,
    statusSyncReservedConcurrency,
    workerReservedConcurrency,
  };
}
