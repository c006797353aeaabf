/**
 * Where the local stack finds a worker's module, and how it loads one: `${Worker_<name>}` is
 * `<workers dir>/<name with _ as ->.ts`, built-in workers always from the server's own folder.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFINITION_FILE, ToolFolderError } from '../lambdas/tools/tool-folder.ts';
import { BUILT_IN_WORKERS, workerModuleFile } from '../lambdas/tools/worker-placeholders.ts';
import type { WorkerHandler } from './stepfunctions/sfn-facade.ts';
import { DEFAULT_WORKERS_DIR } from './start-defaults.ts';

export { DEFAULT_WORKERS_DIR };

/** The module file of `worker`: a built-in worker ships with the server, whatever directory the tools' own workers are in. */
export function workerModulePath(worker: string, workersDir: string): string {
  return resolve(BUILT_IN_WORKERS.includes(worker) ? DEFAULT_WORKERS_DIR : workersDir, workerModuleFile(worker));
}

/** Imports `worker`'s handler; a module that is missing, fails to load or exports no handler is a ToolFolderError of the folder's definition. */
export async function importWorker(worker: string, workersDir: string, folderDir: string): Promise<WorkerHandler> {
  const file = workerModulePath(worker, workersDir);
  let handler: unknown;
  try {
    ({ handler } = (await import(pathToFileURL(file).href)) as { handler?: unknown });
  } catch (error) {
    // A module that exists but does not load (a syntax error, a missing import) says so, not that it is missing.
    const problem = existsSync(file) ? `worker module ${file} cannot be loaded` : `worker \${Worker_${worker}} has no module ${file}`;
    throw new ToolFolderError(resolve(folderDir, DEFINITION_FILE), `${problem} (${(error as Error).message})`);
  }
  if (typeof handler !== 'function') {
    throw new ToolFolderError(resolve(folderDir, DEFINITION_FILE), `worker module ${file} does not export a handler function`);
  }
  return handler as WorkerHandler;
}
