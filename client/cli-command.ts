/**
 * How the CLI names itself in the commands it suggests ("Join it with: … join <id>"), so a
 * hint runs where the user ran the CLI. Inside a clone, `npm run cli` runs the sources with
 * tsx and no `async-mcp` is on the PATH; the installed bin is `async-mcp`, and through npx
 * it is `npx async-mcp`.
 */
import { basename } from 'node:path';

const SOURCES_ENTRY = /(^|[\\/])client[\\/]cli\.ts$/;
const BIN_NAMES = new Set(['async-mcp', 'async-mcp.js', 'async-mcp.cmd']);

/** The command line that starts the CLI the way this process was started; from `process.argv` and the environment by default. */
export function cliCommand(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): string {
  const entry = argv[1] ?? '';
  // The sources as the entry point: a clone (an installed package is entered through its bin).
  if (SOURCES_ENTRY.test(entry) && !/[\\/]node_modules[\\/]/.test(entry)) return 'npm run cli --';
  // npx runs the bin from a node_modules/.bin that is not on the user's PATH (npm_command is inherited: the path decides).
  const bin = entry.replaceAll('\\', '/');
  if (env.npm_command === 'exec' && bin.includes('/node_modules/.bin/') && BIN_NAMES.has(basename(bin))) return 'npx async-mcp';
  return 'async-mcp';
}
