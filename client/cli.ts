/** The `async-mcp` command: see `USAGE` in cli-args.ts for the contract. */
import { EXIT } from './cli-args.ts';
import { runCli } from './run-cli.ts';

// A reader that stops early (`… | head -1`) closes the pipe: end quietly with the status a
// shell gives `ls` killed by SIGPIPE (Node ignores the signal, so the write fails with EPIPE).
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(EXIT.PIPE_CLOSED);
  });

process.exitCode = await runCli(process.argv.slice(2));
