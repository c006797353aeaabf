/**
 * Reads and validates the tool folders under a tools directory
 * (`state-machines/<tool>/tool.json` + `definition.asl.json`, DESIGN §3).
 * Used by the local runtime, the MCP Lambda and the CDK app alike, so a folder
 * that would not deploy does not start locally either. Nothing is skipped silently:
 * the first invalid folder throws a ToolFolderError naming the file and the reason.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import * as z from 'zod';
import { compileSchema } from './json-schema.ts';
import { findWorkerPlaceholders } from './worker-placeholders.ts';

const require = createRequire(import.meta.url);
type AslValidator = (
  definition: unknown,
  options?: { checkPaths?: boolean; checkArn?: boolean },
) => { isValid: boolean; errorsText: (separator?: string) => string };

export const TOOL_FILE = 'tool.json';
export const DEFINITION_FILE = 'definition.asl.json';

const JsonSchemaObject = z
  .looseObject({ type: z.literal('object', { message: 'the root of a tool schema must have "type": "object"' }) })
  .describe('JSON Schema');

const seconds = z.number().int().positive();

/** `tool.json`: strict, so a misspelt key is an error instead of a silently ignored setting. */
export const ToolConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a tool name is 1-128 characters of A-Z, a-z, 0-9, _ . -'),
  title: z.string().min(1).optional(),
  description: z.string().min(1),
  inputSchema: JsonSchemaObject,
  outputSchema: JsonSchemaObject.optional(),
  invocation: z.enum(['sync', 'async', 'both']),
  workflowType: z.enum(['STANDARD', 'EXPRESS']).default('STANDARD'),
  keepAliveSeconds: seconds.optional(),
  maxKeepAliveSeconds: seconds.nullable().optional(),
  pollIntervalSeconds: seconds.optional(),
  syncTimeoutSeconds: seconds.max(900).optional(),
});
export type ToolConfig = z.infer<typeof ToolConfigSchema>;

/** One validated tool folder. */
export interface ToolFolder {
  /** The folder's path. */
  dir: string;
  config: ToolConfig;
  /** The definition as written, placeholders unresolved. */
  definitionText: string;
  /** Names of the `${Worker_...}` placeholders the definition uses. */
  workers: string[];
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
   * Run the deep checks: compile the JSON Schemas and validate each definition
   * (asl-validator, unsupported features). Default true; the deployed Lambda turns
   * them off because synth already checked the very same files.
   */
  checkDefinitions?: boolean;
}

/** Loads every tool folder under `toolsDir`, sorted by name; throws on the first invalid one. */
export async function loadToolFolders(toolsDir: string, options: LoadOptions = {}): Promise<ToolFolder[]> {
  let entries;
  try {
    entries = await readdir(toolsDir, { withFileTypes: true });
  } catch (error) {
    throw new ToolFolderError(toolsDir, `cannot read the tools directory (${(error as Error).message})`);
  }
  const folders: ToolFolder[] = [];
  // Each name must equal its folder's, and a directory's entries are unique, so names are unique too.
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    folders.push(await loadToolFolder(join(toolsDir, entry.name), entry.name, options.checkDefinitions ?? true));
  }
  if (folders.length === 0) throw new ToolFolderError(toolsDir, 'no tool folders found');
  return folders;
}

async function loadToolFolder(dir: string, folderName: string, checkDefinitions: boolean): Promise<ToolFolder> {
  const toolFile = join(dir, TOOL_FILE);
  const definitionFile = join(dir, DEFINITION_FILE);
  const config = ToolConfigSchema.safeParse(await readJson(toolFile));
  if (!config.success) throw new ToolFolderError(toolFile, describeZodError(config.error));
  if (config.data.name !== folderName) {
    throw new ToolFolderError(toolFile, `name "${config.data.name}" must match its folder name "${folderName}"`);
  }
  checkTiming(toolFile, config.data);
  if (checkDefinitions) {
    for (const key of ['inputSchema', 'outputSchema'] as const) {
      const schema = config.data[key];
      if (schema) checkJsonSchema(toolFile, key, schema);
    }
  }

  const definitionText = await readText(definitionFile);
  if (checkDefinitions) checkDefinition(definitionFile, parseJson(definitionFile, definitionText));
  return { dir, config: config.data, definitionText, workers: findWorkerPlaceholders(definitionText) };
}

function checkTiming(file: string, config: ToolConfig): void {
  if (config.workflowType === 'EXPRESS' && config.invocation !== 'sync') {
    // Express executions cannot be described or kept for later retrieval.
    throw new ToolFolderError(file, `workflowType EXPRESS is only for sync tools; use STANDARD for invocation "${config.invocation}"`);
  }
  const { keepAliveSeconds, maxKeepAliveSeconds } = config;
  if (keepAliveSeconds && maxKeepAliveSeconds && keepAliveSeconds > maxKeepAliveSeconds) {
    throw new ToolFolderError(file, `keepAliveSeconds (${keepAliveSeconds}) exceeds maxKeepAliveSeconds (${maxKeepAliveSeconds})`);
  }
}

function checkJsonSchema(file: string, key: string, schema: object): void {
  try {
    compileSchema(schema);
  } catch (error) {
    throw new ToolFolderError(file, `${key} is not a valid JSON Schema (${(error as Error).message})`);
  }
}

/** Rejects what the local interpreter would silently run differently from AWS (DESIGN §3). */
function checkDefinition(file: string, definition: unknown): void {
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) {
    throw new ToolFolderError(file, 'the definition must be a JSON object');
  }
  const unsupported = findUnsupported(definition);
  if (unsupported) throw new ToolFolderError(file, unsupported);
  // Required here, not at module load: the deployed Lambda never validates definitions.
  const validateAsl = require('asl-validator') as AslValidator;
  const result = validateAsl(definition, { checkPaths: true, checkArn: true });
  if (!result.isValid) throw new ToolFolderError(file, `not valid Amazon States Language: ${result.errorsText('; ')}`);
}

function findUnsupported(node: unknown, path = '$'): string | undefined {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) {
      const found = findUnsupported(item, `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof node !== 'object' || node === null) return undefined;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'QueryLanguage' && value !== 'JSONPath') {
      return `${path}.QueryLanguage is "${String(value)}": only JSONPath is supported (the local interpreter does not run JSONata)`;
    }
    if (key === 'Assign') return `${path}.Assign is not supported (the local interpreter has no variables); pass data with ResultPath instead`;
    const found = findUnsupported(value, `${path}.${key}`);
    if (found) return found;
  }
  return undefined;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ToolFolderError(file, code === 'ENOENT' ? 'file is missing' : `cannot be read (${code})`);
  }
}

async function readJson(file: string): Promise<unknown> {
  return parseJson(file, await readText(file));
}

function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ToolFolderError(file, `not valid JSON (${(error as Error).message})`);
  }
}

function describeZodError(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`).join('; ');
}
