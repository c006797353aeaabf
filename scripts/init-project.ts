/**
 * `npx async-mcp init <folder>`: a new project that uses async-mcp as a package (see
 * project-template.ts), in a new or empty folder. Prints what it wrote and the next commands.
 * Exit code 0 when written, 1 when the folder is not empty, 2 on a usage error.
 */
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { InitError, ourPackage, tarballSpec, writeProject } from './project-template.ts';
import { commandAsStarted } from '../client/command-as-started.ts';
import { nodeVersionNotice } from '../local/node-version-notice.ts';

const USAGE = `usage: ${commandAsStarted('init')} <folder>   (a new or empty folder: the project is written there)`;

function main(): number {
  let positionals: string[];
  let help: boolean | undefined;
  try {
    ({
      positionals,
      values: { help },
    } = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (help || positionals.length !== 1 || !positionals[0]) {
    (help ? console.log : console.error)(USAGE);
    return help ? 0 : 2;
  }
  const dir = resolve(positionals[0]);
  let files: string[];
  try {
    files = writeProject(dir, ourPackage(), tarballSpec(dir));
  } catch (error) {
    if (!(error instanceof InitError)) throw error;
    console.error(`async-mcp init: ${error.message}`);
    return 1;
  }
  const here = relative(process.cwd(), dir);
  const shown = here.startsWith('..') ? dir : here || '.';
  console.log(`Wrote a new async-mcp project in ${shown}:`);
  for (const file of files) console.log(`  ${file}`);
  console.log(
    `\nNext:\n  cd ${shown}\n  npm install && npm start   # its tools on the local stack\n  npm test                   # validates the tools and calls each one`,
  );
  // npm's EBADENGINE warnings for the durable SDKs (their engines say Node 22) come before and after this: once, what they mean.
  const notice = nodeVersionNotice();
  if (notice) console.error(`${notice} npm's EBADENGINE warnings for @aws/durable-execution-sdk-js say the same; it runs on Node 20.19+ until then.`);
  return 0;
}

process.exitCode = main();
