/**
 * esbuild's API, for bundling the functions inside the synth's own process. The package
 * resolves it beside itself: esbuild is its optional peer dependency, which the project that
 * installs async-mcp installs too (this repository has it as a devDependency). Without it, a
 * synth that bundles fails saying how to install it, where NodejsFunction's own bundling would
 * have tried Docker instead.
 */
import { createRequire } from 'node:module';
import type * as Esbuild from 'esbuild';

export type EsbuildApi = typeof Esbuild;

/** What to run where esbuild is missing. */
export const INSTALL_ESBUILD = 'npm install --save-dev esbuild';

const requireHere = createRequire(import.meta.url);

/** How esbuild is loaded. A seam: a test replaces `load` to act as if esbuild were not installed. */
export const esbuildSource = { load: (): EsbuildApi => requireHere('esbuild') as EsbuildApi };

export class EsbuildMissingError extends Error {
  constructor(options?: ErrorOptions) {
    super(
      `esbuild is not installed: async-mcp bundles each Lambda function with it when the app synthesizes (it is an optional peer dependency of async-mcp). Install it in the project: ${INSTALL_ESBUILD}`,
      options,
    );
    this.name = 'EsbuildMissingError';
  }
}

/** esbuild's API; an EsbuildMissingError when it does not resolve. */
export function localEsbuild(): EsbuildApi {
  try {
    return esbuildSource.load();
  } catch (error) {
    if (isMissingEsbuild(error)) throw new EsbuildMissingError({ cause: error });
    throw error;
  }
}

/** Whether esbuild resolves (a broken install still fails, when it is used). */
export function esbuildInstalled(): boolean {
  try {
    esbuildSource.load();
    return true;
  } catch (error) {
    if (isMissingEsbuild(error)) return false;
    return true;
  }
}

/** Node's failure to resolve the package itself, not a module it requires. */
function isMissingEsbuild(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.includes("'esbuild'");
}
