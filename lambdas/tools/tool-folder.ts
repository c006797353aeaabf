/**
 * Reads and validates the tool folders under a tools directory (DESIGN §3):
 * `state-machines/<tool>/tool.json`, plus `definition.asl.json` (unless the tool names an
 * existing machine by `stateMachineArn`) and optionally `mocks.json` (local stand-ins), or,
 * for a tool written as a Lambda durable function, `durable.ts` in place of the definition.
 * Used by the local runtime, the MCP Lambda, the CDK app and `validate-tools` alike, so a
 * folder that would not deploy does not start locally either. Nothing is skipped silently:
 * `inspectToolFolders` returns every problem with its file; `loadToolFolders` throws the first.
 */
import type { Dirent } from 'node:fs';
import { access, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as z from 'zod';
import { checkDefinition } from './definition-check.ts';
import { type DefinedToolConfig, definedToolConfig, type TypeScriptLoader, withTypeScriptLoader } from './defined-tool-config.ts';
import { durableHandlerProblems } from './durable-handler-check.ts';
import { schemaProblem } from './json-schema.ts';
import { parseJsonText } from './json-text.ts';
import { injectReportContext } from './report-progress-states.ts';
import { injectRequestInputContext } from './request-input-states.ts';
import { localRunProblems, mockOnlyDefinition, noStandInDefinition } from './local-tasks.ts';
import {
  crossFieldProblems,
  DEFINITION_FILE,
  DURABLE_FILE,
  stateMachineNameOf,
  TOOL_FILE,
  ToolConfigSchema,
  type ToolConfig,
  type ToolKind,
} from './tool-config.ts';
import { MOCKS_FILE, parseToolMocks, type ToolMocks } from './tool-mocks.ts';
import { findWorkerPlaceholders } from './worker-placeholders.ts';

export { DEFINITION_FILE, DURABLE_FILE, TOOL_FILE, ToolConfigSchema, type ToolConfig } from './tool-config.ts';
export { MOCKS_FILE } from './tool-mocks.ts';

/** One validated tool folder. */
export interface ToolFolder {
  /** The folder's path. */
  dir: string;
  config: ToolConfig;
  /**
   * `definition.asl.json` as written, placeholders unresolved: what the stack deploys, or
   * for an existing machine (`stateMachineArn`) its optional local stand-in.
   */
  definitionText?: string;
  /**
   * A durable function tool: its `durable.ts` (absolute path), whose `handler` runs the tool.
   * Such a folder has no definition, no workers, and nothing for the local state machine runtime.
   */
  durable?: {
    file: string;
    /** Defined by `defineTool` in durable.ts: `config` came from it, and no tool.json exists (synth writes one into the MCP asset). */
    defined?: true;
  };
  /** Names of the `${Worker_...}` placeholders the definition uses. */
  workers: string[];
  /** `mocks.json`, resolved to the test case in use. */
  mocks?: ToolMocks;
  /** What the local runtime runs: the definition, a stand-in built from `mocks.json`, or one that fails naming the ARN. */
  localDefinitionText: string;
  /** Why the local runtime cannot run this tool (Tasks without a worker or a mock); empty when it can. */
  localProblems: ToolFolderError[];
}

export class ToolFolderError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`Invalid tool folder: ${file}: ${reason}`);
    this.name = 'ToolFolderError';
  }
}

export interface LoadOptions {
  /**
   * Run the deep checks: compile the JSON Schemas, validate each definition and
   * `mocks.json`, and compile each `durable.ts`. Default true; the deployed Lambda turns
   * them off because synth already checked the very same files.
   */
  checkDefinitions?: boolean;
  /**
   * What loads each `durable.ts` made with defineTool, to read its definition. Default: a loader
   * of its own, which reads the modules as they are now; a process that imports the handlers
   * itself passes its own import, so each module is loaded once.
   */
  typeScript?: TypeScriptLoader;
}

/** Every folder that loaded, and every problem found, each with its file. */
export interface ToolFolderInspection {
  folders: ToolFolder[];
  problems: ToolFolderError[];
  /**
   * The workers each readable definition names, whether or not its folder loaded, so a
   * missing worker module is reported in the same run as the folder's other problems.
   */
  definitionWorkers: { definitionFile: string; workers: string[] }[];
}

/** Loads every tool folder under `toolsDir`, sorted by name; throws the first problem found. */
export async function loadToolFolders(toolsDir: string, options: LoadOptions = {}): Promise<ToolFolder[]> {
  const { folders, problems } = await inspectToolFolders(toolsDir, options);
  if (problems[0]) throw problems[0];
  return folders;
}

/** Checks every tool folder under `toolsDir` and reports all problems instead of stopping at the first. */
export async function inspectToolFolders(toolsDir: string, options: LoadOptions = {}): Promise<ToolFolderInspection> {
  let entries: Dirent[];
  try {
    entries = await readdir(toolsDir, { withFileTypes: true });
  } catch (error) {
    return { folders: [], problems: [new ToolFolderError(toolsDir, `cannot read the tools directory (${(error as Error).message})`)], definitionWorkers: [] };
  }
  const folders: ToolFolder[] = [];
  const problems: ToolFolderError[] = [];
  const definitionWorkers: ToolFolderInspection['definitionWorkers'] = [];
  // Each name must equal its folder's, and a directory's entries are unique, so names are unique too.
  const directories = entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name));
  // Read side by side (a cold start waits for them), reported in name order; the defineTool
  // modules through one loader, so they share what they import.
  const inspectAll = (loader: TypeScriptLoader) =>
    Promise.all(directories.map((entry) => inspectToolFolder(join(toolsDir, entry.name), entry.name, options.checkDefinitions ?? true, loader)));
  const results = await (options.typeScript ? inspectAll(options.typeScript) : withTypeScriptLoader(inspectAll));
  for (const result of results) {
    if (result.folder) folders.push(result.folder);
    problems.push(...result.problems);
    if (result.workers) definitionWorkers.push(result.workers);
  }
  if (folders.length === 0 && problems.length === 0) problems.push(new ToolFolderError(toolsDir, 'no tool folders found'));
  return { folders, problems, definitionWorkers };
}

interface FolderInspection {
  folder?: ToolFolder;
  problems: ToolFolderError[];
  workers?: ToolFolderInspection['definitionWorkers'][number];
}

async function inspectToolFolder(dir: string, folderName: string, deep: boolean, loader: TypeScriptLoader): Promise<FolderInspection> {
  const durableFile = join(dir, DURABLE_FILE);
  const kind: ToolKind = (await exists(durableFile)) ? 'durable' : 'state machine';
  if (kind === 'durable') {
    const defined = await definedToolConfig(durableFile, loader);
    if (defined.defined) return inspectDefinedFolder(dir, folderName, durableFile, defined, deep);
  }
  // Later files are checked even when tool.json is invalid, so one run reports everything.
  const { config, problems } = await readToolConfig(dir, folderName, kind, deep);
  return kind === 'durable'
    ? inspectDurableFolder(dir, durableFile, config, problems, deep)
    : inspectStateMachineFolder(dir, folderName, config, problems, deep);
}

/**
 * A durable tool whose `durable.ts` defines it (`defineTool`): its settings and schemas come
 * from there, so a tool.json beside it would be a second, drifting copy and is refused.
 */
async function inspectDefinedFolder(
  dir: string,
  folderName: string,
  durableFile: string,
  defined: Exclude<DefinedToolConfig, { defined: false }>,
  deep: boolean,
): Promise<FolderInspection> {
  const toolFile = join(dir, TOOL_FILE);
  const problems: ToolFolderError[] = [];
  const report = (reason: string): void => {
    problems.push(new ToolFolderError(durableFile, `defineTool: ${reason}`));
  };
  if (await exists(toolFile)) {
    const reason = `${TOOL_FILE} beside ${durableFile}, whose handler is made by defineTool, which defines the tool: remove ${TOOL_FILE} (or define the handler without defineTool)`;
    problems.push(new ToolFolderError(toolFile, reason));
  }
  let config: ToolConfig | undefined;
  if ('problem' in defined) problems.push(new ToolFolderError(durableFile, defined.problem));
  else {
    const parsed = ToolConfigSchema.safeParse(defined.config);
    if (!parsed.success) zodProblems(parsed.error).forEach(report);
    else {
      config = parsed.data;
      if (config.name !== folderName) report(`name "${config.name}" must match its folder name "${folderName}"`);
      crossFieldProblems(config, 'durable').forEach(report);
      if (deep) {
        for (const key of ['inputSchema', 'outputSchema'] as const) {
          const schema = config[key];
          if (schema) checkJsonSchema(schema, key, report);
        }
      }
    }
  }
  const inspection = await inspectDurableFolder(dir, durableFile, config, problems, deep);
  if (!inspection.folder) return inspection;
  return { ...inspection, folder: { ...inspection.folder, durable: { file: durableFile, defined: true } } };
}

/** `tool.json`, checked on its own and against the folder's kind. */
async function readToolConfig(dir: string, folderName: string, kind: ToolKind, deep: boolean): Promise<{ config?: ToolConfig; problems: ToolFolderError[] }> {
  const toolFile = join(dir, TOOL_FILE);
  const problems: ToolFolderError[] = [];
  const report = (reason: string) => problems.push(new ToolFolderError(toolFile, reason));
  const toolJson = await readJson(toolFile);
  if (!toolJson.ok) {
    const missing = kind === 'durable' && toolJson.error.reason === 'file is missing';
    // Without tool.json, a durable.ts must define the tool itself.
    const reason = `file is missing: define the tool in ${DURABLE_FILE} with defineTool (from async-mcp/durable), or give it a ${TOOL_FILE}`;
    return { problems: [missing ? new ToolFolderError(toolFile, reason) : toolJson.error] };
  }
  const parsed = ToolConfigSchema.safeParse(toolJson.value);
  if (!parsed.success) {
    zodProblems(parsed.error).forEach(report);
    return { problems };
  }
  const config = parsed.data;
  if (config.name !== folderName) report(`name "${config.name}" must match its folder name "${folderName}"`);
  crossFieldProblems(config, kind).forEach(report);
  if (deep) {
    for (const key of ['inputSchema', 'outputSchema'] as const) {
      const schema = config[key];
      if (schema) checkJsonSchema(schema, key, report);
    }
  }
  return { config, problems };
}

/**
 * A durable function tool: `durable.ts` instead of a definition. The deep check compiles it
 * without running it; the rest of the folder is tool.json alone.
 */
async function inspectDurableFolder(
  dir: string,
  durableFile: string,
  config: ToolConfig | undefined,
  problems: ToolFolderError[],
  deep: boolean,
): Promise<FolderInspection> {
  const [definition, mocks, handlerProblems] = await Promise.all([
    exists(join(dir, DEFINITION_FILE)),
    exists(join(dir, MOCKS_FILE)),
    deep ? durableHandlerProblems(durableFile) : [],
  ]);
  if (definition)
    problems.push(new ToolFolderError(dir, `holds both ${DEFINITION_FILE} and ${DURABLE_FILE}: keep one (a tool is a state machine or a durable function)`));
  if (mocks) {
    const reason = `does not apply to a durable function tool (${DURABLE_FILE}), whose code runs as it is locally; remove ${MOCKS_FILE}`;
    problems.push(new ToolFolderError(join(dir, MOCKS_FILE), reason));
  }
  problems.push(...handlerProblems.map((reason) => new ToolFolderError(durableFile, reason)));
  if (problems.length > 0 || !config) return { problems };
  return { folder: { dir, config, durable: { file: durableFile }, workers: [], localDefinitionText: '', localProblems: [] }, problems };
}

async function inspectStateMachineFolder(
  dir: string,
  folderName: string,
  config: ToolConfig | undefined,
  problems: ToolFolderError[],
  deep: boolean,
): Promise<FolderInspection> {
  const definitionFile = join(dir, DEFINITION_FILE);
  const mocksFile = join(dir, MOCKS_FILE);
  const report = (file: string) => (reason: string) => problems.push(new ToolFolderError(file, reason));

  // An existing machine needs no definition; when there is one, it is its local stand-in.
  const existing = config?.stateMachineArn;
  const definitionText = await readText(definitionFile, config === undefined || existing !== undefined);
  if (!definitionText.ok) problems.push(definitionText.error);
  let definition: unknown;
  if (definitionText.ok && definitionText.value !== undefined) {
    const json = parseJson(definitionFile, definitionText.value);
    if (!json.ok) problems.push(json.error);
    else {
      definition = json.value;
      if (deep) checkDefinition(definition, report(definitionFile));
    }
  }

  let mocks: ToolMocks | undefined;
  // Only the local runtime and validation read mocks; the deployed Lambda's asset has none.
  const mocksText = deep ? await readText(mocksFile, true) : { ok: true as const, value: undefined };
  if (!mocksText.ok) problems.push(mocksText.error);
  else if (mocksText.value !== undefined) {
    const json = parseJson(mocksFile, mocksText.value);
    if (!json.ok) problems.push(json.error);
    else {
      const names = [config?.name ?? folderName, ...(existing ? [stateMachineNameOf(existing)] : [])];
      const result = parseToolMocks(json.value, names);
      result.problems.forEach(report(mocksFile));
      mocks = result.mocks;
    }
  }
  const mocksRead = problems.every((problem) => problem.file !== mocksFile);
  const workers =
    definitionText.ok && definitionText.value !== undefined ? { definitionFile, workers: findWorkerPlaceholders(definitionText.value) } : undefined;
  if (problems.length > 0 || !config) {
    // The folder fails anyway: what the local runtime could not run is reported with the rest,
    // unless a broken mocks.json would make every mocked Task look unmocked.
    if (deep && definition !== undefined && mocksRead) {
      for (const reason of localRunProblems(definition, mocks, config?.name ?? folderName)) report(definitionFile)(reason);
    }
    return { problems, ...(workers ? { workers } : {}) };
  }

  let text = definitionText.ok ? definitionText.value : undefined;
  if (definition !== undefined) {
    // States that ask the client a question get the fields the request-input worker needs.
    const envelope = existing === undefined || config.input !== 'arguments';
    const injected = injectRequestInputContext(definition, { envelope, workflowType: config.workflowType });
    const reporting = injectReportContext(injected.definition, { envelope });
    const builtInProblems = [...injected.problems, ...reporting.problems];
    if (builtInProblems.length > 0)
      return { problems: builtInProblems.map((reason) => new ToolFolderError(definitionFile, reason)), ...(workers ? { workers } : {}) };
    if (injected.asks || reporting.reports) {
      definition = reporting.definition;
      text = JSON.stringify(definition, null, 2);
    }
  }
  let localDefinitionText = text ?? '';
  const localProblems: ToolFolderError[] = [];
  if (deep && definition !== undefined) {
    for (const reason of localRunProblems(definition, mocks, config.name)) localProblems.push(new ToolFolderError(definitionFile, reason));
  } else if (text === undefined && existing) {
    const standIn = mocks ? mockOnlyDefinition(mocks) : { definitionText: noStandInDefinition(config.name, existing) };
    if (standIn.problem) localProblems.push(new ToolFolderError(mocksFile, standIn.problem));
    localDefinitionText = standIn.definitionText ?? noStandInDefinition(config.name, existing);
  }
  const folder: ToolFolder = {
    dir,
    config,
    ...(text === undefined ? {} : { definitionText: text }),
    workers: text === undefined ? [] : findWorkerPlaceholders(text),
    ...(mocks ? { mocks } : {}),
    localDefinitionText,
    localProblems,
  };
  return { folder, problems, ...(workers ? { workers } : {}) };
}

function checkJsonSchema(schema: object, key: string, report: (reason: string) => void): void {
  const problem = schemaProblem(schema);
  if (problem !== undefined) report(`${key} is not a valid JSON Schema (${problem})`);
}

type Read<T> = { ok: true; value: T } | { ok: false; error: ToolFolderError };

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

async function readText(file: string, optional = false): Promise<Read<string | undefined>> {
  try {
    return { ok: true, value: await readFile(file, 'utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && optional) return { ok: true, value: undefined };
    return { ok: false, error: new ToolFolderError(file, code === 'ENOENT' ? 'file is missing' : `cannot be read (${code})`) };
  }
}

async function readJson(file: string): Promise<Read<unknown>> {
  const text = await readText(file);
  if (!text.ok) return text;
  return parseJson(file, text.value ?? '');
}

function parseJson(file: string, text: string): Read<unknown> {
  const parsed = parseJsonText(text);
  if (parsed.ok) return parsed;
  return { ok: false, error: new ToolFolderError(file, `not valid JSON at line ${parsed.line}, column ${parsed.column}: ${parsed.reason}`) };
}

function zodProblems(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`);
}
