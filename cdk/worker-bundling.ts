/**
 * How a worker's bundle is built around its module: the entry is always
 * lambdas/handlers/worker-entry.ts, which starts and flushes OpenTelemetry's SDK and makes each
 * invocation a worker span, and the worker's own module (ours or a user's, unchanged) takes the
 * place of the name that entry imports. Free of aws-cdk-lib, so tests bundle a worker as the
 * stack does.
 */
import { join } from 'node:path';
import { REPO_ROOT } from './repo-paths.ts';

/** The module every worker's bundle starts from. */
export const WORKER_ENTRY = join(REPO_ROOT, 'lambdas', 'handlers', 'worker-entry.ts');

/** The name worker-entry.ts imports the worker's `handler` by (lambdas/handlers/worker-module.d.ts). */
export const WORKER_MODULE = 'async-mcp-worker-module';

/** What worker-entry.ts reads the worker's name from, replaced at bundling. */
const WORKER_NAME_DEFINE = 'process.env.ASYNC_MCP_WORKER_NAME';

/** The per-function part of a worker's bundling, as BundledFunction takes it. */
export interface WorkerBundling {
  readonly entry: string;
  /** esbuild's alias: the worker's module under {@link WORKER_MODULE}. */
  readonly aliases: Readonly<Record<string, string>>;
  /** esbuild's define: the worker's name, for its span. */
  readonly define: Readonly<Record<string, string>>;
}

/** The bundling of worker `worker` (as `${Worker_<name>}` names it), whose module is `moduleFile`. */
export function workerBundling(worker: string, moduleFile: string): WorkerBundling {
  return { entry: WORKER_ENTRY, aliases: { [WORKER_MODULE]: moduleFile }, define: { [WORKER_NAME_DEFINE]: JSON.stringify(worker) } };
}
