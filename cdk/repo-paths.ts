/**
 * Where this repository keeps what the CDK app deploys. Paths are resolved from this
 * module's location, so `cdk synth` works from any working directory, and from the package
 * as from a clone: the root is the nearest folder above with a package.json (a clone's root,
 * or the installed package's, whose dist/cdk/ holds this module compiled), and the package
 * ships the sources the functions are bundled from (lambdas/, cdk/*.mjs, cdk/aws-sdk-require/).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** The repository root (or the installed package's): the project root for bundling. */
export const REPO_ROOT = packageRoot(join(dirname(fileURLToPath(import.meta.url)), '..'));

/** Installed, the package has no tool folders of its own: a project's are in the folder its app runs from. */
const INSTALLED = !existsSync(join(REPO_ROOT, 'cdk', 'repo-paths.ts'));

/** The tool folders deployed by default. */
export const DEFAULT_TOOLS_DIR = INSTALLED ? join(process.cwd(), 'state-machines') : join(REPO_ROOT, 'state-machines');

/** Worker handlers, one module per `${Worker_<name>}` placeholder. */
export const DEFAULT_WORKERS_DIR = join(REPO_ROOT, 'lambdas', 'handlers', 'workers');

/** The MCP Lambda: the same fetch handler the local server serves, behind a Function URL. */
export const MCP_HTTP_ENTRY = join(REPO_ROOT, 'lambdas', 'handlers', 'mcp-http.ts');

/** The status-sync Lambda: EventBridge execution status changes -> operation records. */
export const STATUS_SYNC_ENTRY = join(REPO_ROOT, 'lambdas', 'handlers', 'status-sync.ts');
