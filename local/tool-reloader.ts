/**
 * Reloads the local stack's tools in place (`npm start -- --watch`): the tool folders are read
 * again by the loader the stack starts with, and each tool a change touched is swapped in as a
 * deploy would swap it: its state machine rebound with its workers loaded afresh, or its durable
 * function's handler, then its catalog entry. A tool whose folder no longer loads keeps its last
 * good version, and its problems are reported. Runs already started keep the code they started
 * with (the facade and the durable service pin it per execution).
 */
import { basename, extname, relative, resolve, sep } from 'node:path';
import type { ToolCatalog } from '../lambdas/operations/tool-spec.ts';
import { buildToolCatalog } from '../lambdas/tools/tool-catalog.ts';
import { inspectToolFolders, ToolFolderError, type ToolFolder, type ToolFolderInspection } from '../lambdas/tools/tool-folder.ts';
import { BUILT_IN_WORKERS } from '../lambdas/tools/worker-placeholders.ts';
import type { FreshModules } from './fresh-modules.ts';
import type { DurableTools } from './local-durable-tools.ts';
import { importDurableHandler } from './local-tools.ts';
import type { SfnFacade, WorkerHandler } from './stepfunctions/sfn-facade.ts';
import { createTaskMocks } from './stepfunctions/sfn-facade-mocks.ts';
import { importWorker, workerModulePath } from './worker-modules.ts';

/** What one reload did. */
export interface ToolsReload {
  /** Tools now served from their folders as saved (new ones included), by name. */
  reloaded: string[];
  /** Tools whose folder is gone: no longer listed or callable; their running operations go on. */
  removed: string[];
  /** Why a touched tool was not reloaded (its last good version, if any, keeps serving); `tool` is absent for the tools folder itself. */
  problems: Array<{ tool?: string; error: ToolFolderError }>;
}

/** The parts of the stack a reload swaps tools in. */
export interface ToolReloaderParts {
  toolsDir: string;
  workersDir: string;
  /** The folders the stack started with. */
  folders: readonly ToolFolder[];
  facade: Pick<SfnFacade, 'setStateMachine' | 'removeStateMachine' | 'stateMachineArn'>;
  durable: Pick<DurableTools, 'register' | 'functionArn'>;
  /** The worker handlers the facade's `resolveWorker` reads, by worker name; updated in place. */
  workers: Map<string, WorkerHandler>;
  fresh: FreshModules;
}

/** A catalog that always answers with the tools of the last reload, and the reload itself. */
export interface ToolReloader {
  catalog: ToolCatalog;
  reload(changedPaths: readonly string[]): Promise<ToolsReload>;
}

/** Files an editor writes beside the one it saves (swap and backup files), which change no tool. */
const EDITOR_LITTER = /^(\..*|.*~|\d+|#.*#)$/;
const CODE = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json']);

export function createToolReloader(parts: ToolReloaderParts): ToolReloader {
  const toolsDir = resolve(parts.toolsDir);
  const workersDir = resolve(parts.workersDir);
  const current = new Map(parts.folders.map((folder) => [folder.config.name, folder]));
  const arnOf = (name: string, folder: ToolFolder) => (folder.durable ? parts.durable.functionArn(name) : parts.facade.stateMachineArn(name));
  let catalog = buildToolCatalog(parts.folders, arnOf);
  // What the loader found last: at start, every folder, without a problem (or the stack would not have started).
  let lastInspection: ToolFolderInspection = { folders: [...parts.folders], problems: [], definitionWorkers: [] };

  /** The tool folder a path lies in, by name; undefined outside the tools folder or directly in it. */
  const toolOf = (path: string): string | undefined => {
    const rel = relative(toolsDir, resolve(path));
    if (rel === '' || rel.startsWith('..')) return undefined;
    const [first, ...rest] = rel.split(sep);
    // A file directly in the tools folder is no tool's; a folder there is one.
    return rest.length > 0 || extname(first ?? '') === '' ? first : undefined;
  };

  /** The tools a batch of changes touches; `everything` when a changed file may be any tool's (a shared module). */
  const touched = (paths: readonly string[], folders: readonly ToolFolder[]): { names: Set<string>; everything: boolean } => {
    const names = new Set<string>();
    let everything = false;
    for (const path of paths) {
      if (EDITOR_LITTER.test(basename(path))) continue;
      const tool = toolOf(path);
      if (tool !== undefined) {
        names.add(tool);
        continue;
      }
      const ext = extname(path);
      if (ext !== '' && !CODE.has(ext)) continue;
      const users = folders.filter((folder) => folder.workers.some((worker) => workerModulePath(worker, workersDir) === path));
      for (const folder of users) names.add(folder.config.name);
      // A module no tool names as its worker (a helper, say) may be imported by any of them.
      if (users.length === 0 && (path.startsWith(`${workersDir}${sep}`) || path.startsWith(`${toolsDir}${sep}`))) everything = true;
    }
    return { names, everything };
  };

  /** Swaps one tool in; throws a ToolFolderError, changing nothing of it, when it cannot run. */
  const swapIn = async (folder: ToolFolder): Promise<void> => {
    const name = folder.config.name;
    const before = current.get(name);
    if (folder.durable) {
      parts.durable.register(name, await importDurableHandler(folder.durable.file));
      if (before && !before.durable) parts.facade.removeStateMachine(name);
      return;
    }
    const loaded = new Map<string, WorkerHandler>();
    for (const worker of folder.workers) {
      // The built-in workers are the server's own code, loaded once.
      if (BUILT_IN_WORKERS.includes(worker) && parts.workers.has(worker)) continue;
      loaded.set(worker, await importWorker(worker, workersDir, folder.dir));
    }
    for (const [worker, handler] of loaded) parts.workers.set(worker, handler);
    try {
      parts.facade.setStateMachine({
        name,
        definitionText: folder.localDefinitionText,
        workflowType: folder.config.workflowType,
        ...(folder.mocks ? { taskMocks: createTaskMocks(folder.mocks) } : {}),
      });
    } catch (error) {
      throw new ToolFolderError(folder.dir, (error as Error).message);
    }
  };

  return {
    catalog: {
      get tools() {
        return catalog.tools;
      },
      get: (name) => catalog.get(name),
    },
    async reload(changedPaths) {
      parts.fresh.renew();
      // Only a change in the tools folder can change what the loader finds there: a worker's own
      // save (the commonest) reloads from the last reading, in a fraction of the time.
      const inTools = changedPaths.some((path) => !relative(toolsDir, resolve(path)).startsWith('..'));
      // The folder as given, so problems name their files as startup's do.
      if (inTools) lastInspection = await inspectToolFolders(parts.toolsDir);
      const inspection = lastInspection;
      const problems: ToolsReload['problems'] = [];
      const problemsOf = new Map<string, ToolFolderError[]>();
      const found = new Map<string, ToolFolder>();
      for (const folder of inspection.folders) {
        found.set(folder.config.name, folder);
        // What the stack would refuse to start with, it refuses to reload.
        if (folder.localProblems.length > 0) problemsOf.set(folder.config.name, [...folder.localProblems]);
      }
      for (const error of inspection.problems) {
        const tool = toolOf(error.file);
        if (tool === undefined) problems.push({ error });
        else problemsOf.set(tool, [...(problemsOf.get(tool) ?? []), error]);
      }
      // The tools folder itself is unreadable or empty: nothing changes.
      if (problems.length > 0) return { reloaded: [], removed: [], problems };

      const { names, everything } = touched(changedPaths, [...found.values(), ...current.values()]);
      const candidates = new Set(everything ? [...current.keys(), ...found.keys(), ...problemsOf.keys()] : names);
      // A folder that appeared, or one that vanished, is a change whatever the paths said.
      for (const name of found.keys()) if (!current.has(name)) candidates.add(name);
      for (const name of current.keys()) if (!found.has(name) && !problemsOf.has(name)) candidates.add(name);

      const reloaded: string[] = [];
      const removed: string[] = [];
      for (const name of [...candidates].sort()) {
        const broken = problemsOf.get(name);
        if (broken) {
          for (const error of broken) problems.push({ tool: name, error });
          continue;
        }
        const folder = found.get(name);
        if (!folder) {
          const gone = current.get(name);
          if (!gone) continue;
          if (!gone.durable) parts.facade.removeStateMachine(name);
          current.delete(name);
          removed.push(name);
          continue;
        }
        try {
          await swapIn(folder);
        } catch (error) {
          problems.push({ tool: name, error: error instanceof ToolFolderError ? error : new ToolFolderError(folder.dir, (error as Error).message) });
          continue;
        }
        current.set(name, folder);
        reloaded.push(name);
      }
      if (reloaded.length > 0 || removed.length > 0) catalog = buildToolCatalog([...current.values()], arnOf);
      return { reloaded, removed, problems };
    },
  };
}
