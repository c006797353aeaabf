/**
 * The tools a local stack serves, loaded and checked as its start needs them: the tool folders
 * (a defineTool durable.ts read through the process's own import), every worker the definitions
 * name and each durable tool's handler. It imports none of the stack (the AWS SDK, the local
 * DynamoDB, the MCP server), so `npm start` refuses a broken folder before loading those.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DurableLambdaHandler } from '@aws/durable-execution-sdk-js';
import type { TypeScriptLoader } from '../lambdas/tools/defined-tool-config.ts';
import { loadToolFolders, ToolFolderError, type ToolFolder } from '../lambdas/tools/tool-folder.ts';
import type { WorkerHandler } from './stepfunctions/sfn-facade.ts';
import { DEFAULT_WORKERS_DIR, importWorker } from './worker-modules.ts';

export interface LocalTools {
  folders: ToolFolder[];
  /** The workers directory the modules came from, resolved. */
  workersDir: string;
  /** Each worker the state machine tools name, by name. */
  workers: Map<string, WorkerHandler>;
  /** Each durable tool's handler, by tool name. */
  durableHandlers: Map<string, DurableLambdaHandler>;
}

/**
 * The process's own import of a tool's TypeScript: what the local stack reads a defineTool
 * definition through, so that module is the one whose handler it then runs, loaded once.
 */
export const processImport: TypeScriptLoader = { import: (file) => import(pathToFileURL(file).href) };

/**
 * Loads the tool folders of `toolsDir` and imports what they run; throws the first problem, a
 * ToolFolderError naming the file: an invalid folder, a Task that would call AWS (no worker, no
 * mock), a worker module missing or not loading, a durable tool without a handler.
 */
export async function loadLocalTools(toolsDir: string, workersDir?: string): Promise<LocalTools> {
  const folders = await loadToolFolders(toolsDir, { typeScript: processImport });
  const unrunnable = folders.flatMap((folder) => folder.localProblems);
  if (unrunnable[0]) throw unrunnable[0];
  const resolvedWorkers = resolve(workersDir ?? DEFAULT_WORKERS_DIR);
  const workers = await importWorkers(
    folders.filter((folder) => folder.durable === undefined),
    resolvedWorkers,
  );
  const durableHandlers = await importDurableHandlers(folders);
  return { folders, workersDir: resolvedWorkers, workers, durableHandlers };
}

/** Imports every worker the definitions name, so a missing one fails startup, not a run. */
async function importWorkers(folders: readonly ToolFolder[], workersDir: string): Promise<Map<string, WorkerHandler>> {
  const workers = new Map<string, WorkerHandler>();
  for (const folder of folders) {
    for (const name of folder.workers) {
      if (!workers.has(name)) workers.set(name, await importWorker(name, workersDir, folder.dir));
    }
  }
  return workers;
}

/** Imports each durable tool's `handler`, so a module that fails to load or lacks one stops startup, naming its file. */
export async function importDurableHandlers(folders: readonly ToolFolder[]): Promise<Map<string, DurableLambdaHandler>> {
  const handlers = new Map<string, DurableLambdaHandler>();
  for (const folder of folders) {
    if (folder.durable) handlers.set(folder.config.name, await importDurableHandler(folder.durable.file));
  }
  return handlers;
}

/** One `durable.ts`'s `handler`; throws a ToolFolderError naming the file when it cannot be loaded or lacks one. */
export async function importDurableHandler(file: string): Promise<DurableLambdaHandler> {
  let handler: unknown;
  try {
    ({ handler } = (await processImport.import(file)) as { handler?: unknown });
  } catch (error) {
    throw new ToolFolderError(file, `cannot be loaded (${(error as Error).message})`);
  }
  if (typeof handler !== 'function') throw new ToolFolderError(file, 'does not export a handler function (export const handler = withDurableExecution(...))');
  return handler as DurableLambdaHandler;
}
