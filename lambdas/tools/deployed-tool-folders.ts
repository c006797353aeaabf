/**
 * Reads the tool folders the MCP Lambda's asset carries: each `tool.json`, and the
 * `definition.asl.json` text the catalog takes the run timeout from, or, in a durable
 * function tool's folder, `durable.ts`, only to know it is one (the code runs in the tool's
 * own function; its timeout is in tool.json). Synth validated these very files with
 * `loadToolFolders`, so the cold start skips what only the local runtime and validation
 * need (mocks, local stand-ins, built-in state injection, compiling durable.ts), and does
 * not load the modules for them.
 */
import { access, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crossFieldProblems, DEFINITION_FILE, DURABLE_FILE, TOOL_FILE, ToolConfigSchema, type ToolConfig } from './tool-config.ts';
import type { ToolFolder } from './tool-folder.ts';

/** The deployed tool folders under `toolsDir`, sorted by name; a bad folder fails the cold start naming its file. */
export async function loadDeployedToolFolders(toolsDir: string): Promise<ToolFolder[]> {
  const entries = await readdir(toolsDir, { withFileTypes: true });
  const names = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  if (names.length === 0) throw new Error(`${toolsDir}: no tool folders found`);
  // Read side by side: the cold start waits for them. Sorted by code unit, as the catalog sorts
  // its tools: the first localeCompare of a process sets up ICU's collator, about 12 ms of CPU.
  return Promise.all(names.sort(byCodeUnit).map((name) => loadFolder(join(toolsDir, name), name)));
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function loadFolder(dir: string, folderName: string): Promise<ToolFolder> {
  const toolFile = join(dir, TOOL_FILE);
  // Without zod's JIT: compiling the schema's fast path (about 4 ms of a cold start's CPU)
  // costs more than it saves on a few tool.json parses, and the process parses none again.
  const parsed = ToolConfigSchema.safeParse(JSON.parse(await readFile(toolFile, 'utf8')), { jitless: true });
  if (!parsed.success) throw new Error(`${toolFile}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
  const config = parsed.data;
  // An existing machine (stateMachineArn) has no definition of ours, and a durable tool none at all.
  const definition = config.stateMachineArn === undefined ? await readDefinition(dir) : undefined;
  const durable = definition === null;
  const problems = [
    ...(config.name === folderName ? [] : [`name "${config.name}" must match its folder name "${folderName}"`]),
    ...crossFieldProblems(config, durable ? 'durable' : 'state machine'),
  ];
  if (problems.length > 0) throw new Error(`${toolFile}: ${problems.join('; ')}`);
  return definition === null ? durableFolder(dir, config) : stateMachineFolder(dir, config, definition);
}

/** The definition's text, or null for a durable tool's folder (durable.ts, no definition). */
async function readDefinition(dir: string): Promise<string | null> {
  try {
    return await readFile(join(dir, DEFINITION_FILE), 'utf8');
  } catch (error) {
    // Only a folder without a definition pays for the second look.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const durable = await access(join(dir, DURABLE_FILE)).then(
      () => true,
      () => false,
    );
    if (durable) return null;
    throw error;
  }
}

function durableFolder(dir: string, config: ToolConfig): ToolFolder {
  return { dir, config, durable: { file: join(dir, DURABLE_FILE) }, workers: [], localDefinitionText: '', localProblems: [] };
}

function stateMachineFolder(dir: string, config: ToolConfig, definitionText: string | undefined): ToolFolder {
  return {
    dir,
    config,
    ...(definitionText === undefined ? {} : { definitionText }),
    workers: [],
    localDefinitionText: definitionText ?? '',
    localProblems: [],
  };
}
