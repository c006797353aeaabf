/** The `async-mcp` command: see `USAGE` in cli-args.ts for the contract. */
import { runCli } from './run-cli.ts';

process.exitCode = await runCli(process.argv.slice(2));
