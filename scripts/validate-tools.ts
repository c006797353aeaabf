/**
 * `npm run validate-tools [-- DIR] [--workers DIR]`: checks tool folders offline, the way
 * the CDK app and the local server will (asl-validator, the loader, mocks.json, worker
 * modules, Tasks that could not run locally, and a durable tool's durable.ts compiled and
 * exporting handler; one defined by defineTool is loaded, as synth loads it, to read its
 * definition), and prints every problem with its file.
 * Exit code 0 when all folders pass, 1 when any problem was found, 2 on a usage error.
 */
import { existsSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { inspectToolFolders, ToolFolderError } from '../lambdas/tools/tool-folder.ts';
import { BUILT_IN_WORKERS, workerModuleFile } from '../lambdas/tools/worker-placeholders.ts';
// Where the built-in workers' sources are, in a clone and in the installed package alike (whose scripts run from dist/).
import { DEFAULT_WORKERS_DIR as BUILT_IN_WORKERS_DIR } from '../cdk/repo-paths.ts';
import { commandAsStarted } from '../client/command-as-started.ts';
import { docsPath, shownPath } from '../client/help-paths.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const USAGE = `usage: ${commandAsStarted('validate-tools', 'validate-tools')} [DIR] [--workers DIR]`;

/** Every problem in the tool folders under `toolsDir`, workers looked up in `workersDir`. */
async function validateTools(toolsDir: string, workersDir: string): Promise<{ tools: string[]; problems: ToolFolderError[] }> {
  const { folders, problems, definitionWorkers } = await inspectToolFolders(toolsDir);
  for (const folder of folders) problems.push(...folder.localProblems);
  // Every definition that could be read, loaded or not: a missing worker is printed with the folder's other problems.
  for (const { definitionFile, workers } of definitionWorkers) {
    for (const worker of workers) {
      // Built-in workers ship with the server, whatever directory the tools' own workers are in.
      const module = join(BUILT_IN_WORKERS.includes(worker) ? BUILT_IN_WORKERS_DIR : workersDir, workerModuleFile(worker));
      if (!existsSync(module))
        problems.push(new ToolFolderError(definitionFile, `worker \${Worker_${worker}} has no module: expected ${module} exporting handler`));
    }
  }
  // One folder's problems together (its own, as "holds both", among them), in the order the folders were read.
  const folderOf = (problem: ToolFolderError) => relative(toolsDir, problem.file).split(sep)[0];
  const order = [...new Set(problems.map(folderOf))];
  problems.sort((a, b) => order.indexOf(folderOf(a)) - order.indexOf(folderOf(b)));
  return { tools: folders.map((folder) => folder.config.name), problems };
}

async function main(): Promise<number> {
  const args = { allowPositionals: true, options: { workers: { type: 'string' }, help: { type: 'boolean', short: 'h' } } } satisfies ParseArgsConfig;
  let parsed: ReturnType<typeof parseArgs<typeof args>>;
  try {
    parsed = parseArgs(args);
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const toolsDir = resolve(parsed.positionals[0] ?? join(REPO_ROOT, 'state-machines'));
  const workersDir = resolve(parsed.values.workers ?? join(REPO_ROOT, 'lambdas', 'handlers', 'workers'));
  if (parsed.values.help || parsed.positionals.length > 1) {
    const help = `${USAGE}
  DIR            the tool folders (default: ${shownPath(toolsDir)})
  --workers DIR  the worker modules they name (default: ${shownPath(workersDir)})
What a tool folder may hold: ${docsPath('tools.md')}`;
    (parsed.values.help ? console.log : console.error)(help);
    return parsed.values.help ? 0 : 2;
  }
  const { tools, problems } = await validateTools(toolsDir, workersDir);
  for (const problem of problems) console.error(`${relative(process.cwd(), problem.file) || problem.file}: ${problem.reason}`);
  if (problems.length > 0) {
    console.error(`\n${problems.length} problem${problems.length === 1 ? '' : 's'} in ${toolsDir}`);
    return 1;
  }
  console.log(`${tools.length} tool${tools.length === 1 ? '' : 's'} valid: ${tools.join(', ')}`);
  return 0;
}

process.exitCode = await main();
