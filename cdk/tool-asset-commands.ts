/**
 * Copies each tool's `tool.json` (and `definition.asl.json`, or `durable.ts`, when it has
 * one; for a tool defined by `defineTool`, the tool.json derived at synth) into the MCP Lambda's asset, so the deployed catalog is read from the very files the
 * state machines and durable functions were built from (a folder with `durable.ts` is a
 * durable tool, as it is in the repository). The synth copies them in its own process
 * (copyToolFiles); the command form runs a Node script, not `mkdir -p`/`cp`, as a shell command
 * runs under `cmd /c` on Windows.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, posix } from 'node:path';
import { DEFINITION_FILE, DURABLE_FILE, TOOL_FILE, type ToolFolder } from '../lambdas/tools/tool-folder.ts';
import { REPO_ROOT } from './repo-paths.ts';
import { commandScratch } from './synth-scratch.ts';

/** The tools directory inside the asset (and so under `/var/task` at run time). */
export const BUNDLED_TOOLS_DIR = 'state-machines';

/** Where Lambda unpacks the asset. */
export const LAMBDA_TASK_ROOT = '/var/task';

export const COPY_SCRIPT = join(REPO_ROOT, 'cdk', 'copy-tool-files.mjs');

/**
 * What the copy script copies: per tool, its folder in the asset and the files that go there;
 * for a tool defined in its durable.ts (`defineTool`), the tool.json derived from it, so the
 * MCP function reads its catalog without loading the tool's code.
 */
export function toolFileManifest(tools: readonly ToolFolder[]): { target: string; files: string[]; write?: Record<string, string> }[] {
  return tools.map((tool) => {
    const defined = tool.durable?.defined === true;
    const files = [...(defined ? [] : [TOOL_FILE]), ...(tool.definitionText === undefined ? [] : [DEFINITION_FILE]), ...(tool.durable ? [DURABLE_FILE] : [])];
    return {
      target: posix.join(BUNDLED_TOOLS_DIR, tool.config.name),
      files: files.map((file) => join(tool.dir, file)),
      ...(defined ? { write: { [TOOL_FILE]: `${JSON.stringify(tool.config, null, 2)}\n` } } : {}),
    };
  });
}

/** Copies the tool files into the asset folder `outputDir`, as copy-tool-files.mjs does from the manifest. */
export function copyToolFiles(tools: readonly ToolFolder[], outputDir: string): void {
  for (const { target, files, write = {} } of toolFileManifest(tools)) {
    const dir = join(outputDir, target);
    mkdirSync(dir, { recursive: true });
    for (const file of files) copyFileSync(file, join(dir, basename(file)));
    for (const [name, text] of Object.entries(write)) writeFileSync(join(dir, basename(name)), text);
  }
}

/**
 * The after-bundling command that copies the tool files into `outputDir`. The manifest
 * goes to a scratch file the command removes, so the command line stays short (cmd allows
 * 8,191 characters) whatever the number of tools.
 */
export function copyToolFolderCommands(tools: readonly ToolFolder[], outputDir: string, platform: NodeJS.Platform = process.platform): string[] {
  const manifest = JSON.stringify(toolFileManifest(tools));
  const manifestFile = commandScratch(outputDir).write('tool-files.json', manifest);
  const quote = platform === 'win32' ? cmdQuote : shellQuote;
  // `node` from PATH on Windows: cmd /c strips the outer quotes of a command line that starts with one.
  const node = platform === 'win32' ? 'node' : shellQuote(process.execPath);
  return [[node, ...[COPY_SCRIPT, manifestFile, outputDir].map(quote)].join(' ')];
}

function shellQuote(path: string): string {
  return `'${path.replaceAll("'", `'\\''`)}'`;
}

function cmdQuote(path: string): string {
  if (/["%^&|<>]/.test(path)) throw new Error(`cannot pass ${path} to cmd safely; move it to a path without " % ^ & | < >`);
  return `"${path}"`;
}
