/**
 * How a project command of the `async-mcp` bin (start, new-tool, validate-tools, init) names
 * itself in its usage, so a usage line runs where the user ran the command: `npm start --` or
 * `npm run new-tool --` from a package.json script (a project's or a clone's), `async-mcp start`
 * or `npx async-mcp start` from the bin (see cli-command.ts), and a clone's npm script when a
 * clone runs the module itself.
 */
import { basename } from 'node:path';
import { cliCommand } from './cli-command.ts';

const BIN_NAMES = new Set(['async-mcp', 'async-mcp.js', 'async-mcp.cmd']);

/**
 * The command line that starts `command` as this process was started. `script` is the npm
 * script that runs it (`start` for `npm start`); without one, a clone's module run by itself
 * is named as a user runs it, through npx.
 */
export function commandAsStarted(command: string, script?: string, argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): string {
  const npmScript = script === undefined ? undefined : script === 'start' ? 'npm start --' : `npm run ${script} --`;
  if (npmScript && env.npm_lifecycle_event === script) return npmScript;
  const entry = (argv[1] ?? '').replaceAll('\\', '/');
  if (BIN_NAMES.has(basename(entry))) return `${cliCommand(argv, env)} ${command}`;
  return npmScript ?? `npx async-mcp ${command}`;
}
