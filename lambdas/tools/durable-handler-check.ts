/**
 * Whether a durable tool's `durable.ts` compiles and exports `handler`, found without running
 * it: esbuild bundles it in memory, packages left out, and its metafile lists the entry's
 * exports. Only the deep check of a tool folder (tool-folder.ts) runs it.
 */
import { relative } from 'node:path';
import { createRequire } from 'node:module';
import type * as esbuild from 'esbuild';

const require = createRequire(import.meta.url);

/**
 * How esbuild is loaded: required at the check, not at module load, as the deployed Lambda never
 * checks. A seam: a test replaces `load` to act as if esbuild were not installed.
 */
export const checkEsbuild = { load: (): typeof esbuild => require('esbuild') as typeof esbuild };

/** What is wrong with `file` as a durable tool's handler module, one reason each; empty when nothing is. */
export async function durableHandlerProblems(file: string): Promise<string[]> {
  let build: typeof esbuild.build;
  try {
    ({ build } = checkEsbuild.load());
  } catch (error) {
    // esbuild is an optional peer of the package, which a project that has durable tools installs.
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    return ['cannot be checked: esbuild is not installed (the check compiles durable.ts with it); install it in the project: npm install --save-dev esbuild'];
  }
  let result: esbuild.BuildResult<{ metafile: true; write: false }>;
  try {
    result = await build({
      entryPoints: [file],
      bundle: true,
      write: false,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      // The helpers are the server's code, not the tool's (tsc checks their use): bundled through
      // tsconfig's paths once per tool, they made 30 tools take seconds instead of milliseconds.
      external: ['async-mcp', 'async-mcp/*'],
      metafile: true,
      logLevel: 'silent',
    });
  } catch (error) {
    const failure = error as Partial<esbuild.BuildFailure>;
    if (!Array.isArray(failure.errors)) return [`cannot be compiled (${(error as Error).message})`];
    return failure.errors.map(esbuildMessage);
  }
  const exported = Object.values(result.metafile.outputs).find((output) => output.entryPoint !== undefined)?.exports ?? [];
  if (exported.includes('handler')) return [];
  const found = exported.length === 0 ? 'it exports nothing' : `it exports ${exported.join(', ')}`;
  return [`must export handler (export const handler = withDurableExecution(...)); ${found}`];
}

/** An esbuild error as `<file>:<line>:<col>: <text>`, the file relative to the working directory. */
function esbuildMessage({ location, text }: esbuild.Message): string {
  if (!location) return text;
  return `${relative(process.cwd(), location.file) || location.file}:${location.line}:${location.column + 1}: ${text}`;
}
