/**
 * Copies each tool's `tool.json` (and `definition.asl.json`, or `durable.ts`, when it has
 * one; for a tool defined by `defineTool`, the tool.json derived at synth) into the MCP Lambda's asset, so the deployed catalog is read from the very files the
 * state machines and durable functions were built from (a folder with `durable.ts` is a
 * durable tool, as it is in the repository). The synth copies them in its own process.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, posix } from 'node:path';
import { DEFINITION_FILE, DURABLE_FILE, TOOL_FILE, type ToolFolder } from '../lambdas/tools/tool-folder.ts';

/** The tools directory inside the asset (and so under `/var/task` at run time). */
export const BUNDLED_TOOLS_DIR = 'state-machines';

/** Where Lambda unpacks the asset. */
export const LAMBDA_TASK_ROOT = '/var/task';

/**
 * What goes into the asset: per tool, its folder in the asset and the files that go there;
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

/** Copies the tool files into the asset folder `outputDir`. */
export function copyToolFiles(tools: readonly ToolFolder[], outputDir: string): void {
  for (const { target, files, write = {} } of toolFileManifest(tools)) {
    const dir = join(outputDir, target);
    mkdirSync(dir, { recursive: true });
    for (const file of files) copyFileSync(file, join(dir, basename(file)));
    for (const [name, text] of Object.entries(write)) writeFileSync(join(dir, basename(name)), text);
  }
}
