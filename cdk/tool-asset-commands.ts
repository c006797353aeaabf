/**
 * Copies each tool's `tool.json` and `definition.asl.json` into the MCP Lambda's asset,
 * so the deployed catalog is read from the very files the state machines were built from.
 */
import { join } from 'node:path';
import { DEFINITION_FILE, TOOL_FILE, type ToolFolder } from '../lambdas/tools/tool-folder.ts';

/** The tools directory inside the asset (and so under `/var/task` at run time). */
export const BUNDLED_TOOLS_DIR = 'state-machines';

/** Where Lambda unpacks the asset. */
export const LAMBDA_TASK_ROOT = '/var/task';

/** Shell commands (POSIX, as CDK's local bundling runs them) that copy the tool folders. */
export function copyToolFolderCommands(tools: readonly ToolFolder[], outputDir: string): string[] {
  return tools.flatMap((tool) => {
    const target = join(outputDir, BUNDLED_TOOLS_DIR, tool.config.name);
    const sources = [TOOL_FILE, DEFINITION_FILE].map((file) => shellQuote(join(tool.dir, file)));
    return [`mkdir -p ${shellQuote(target)}`, `cp ${sources.join(' ')} ${shellQuote(target)}`];
  });
}

function shellQuote(path: string): string {
  return `'${path.replaceAll("'", `'\\''`)}'`;
}
