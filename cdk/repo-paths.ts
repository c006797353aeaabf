/**
 * Where this repository keeps what the CDK app deploys. Paths are resolved from this
 * module's location, so `cdk synth` works from any working directory.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the project root and lock file for bundling. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The tool folders deployed by default. */
export const DEFAULT_TOOLS_DIR = join(REPO_ROOT, 'state-machines');

/** Worker handlers, one module per `${Worker_<name>}` placeholder. */
export const DEFAULT_WORKERS_DIR = join(REPO_ROOT, 'lambdas', 'handlers', 'workers');

/** The MCP Lambda: the same fetch handler the local server serves, behind a Function URL. */
export const MCP_HTTP_ENTRY = join(REPO_ROOT, 'lambdas', 'handlers', 'mcp-http.ts');

/** The status-sync Lambda: EventBridge execution status changes -> operation records. */
export const STATUS_SYNC_ENTRY = join(REPO_ROOT, 'lambdas', 'handlers', 'status-sync.ts');

export const LOCK_FILE = join(REPO_ROOT, 'package-lock.json');
