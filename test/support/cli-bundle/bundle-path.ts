/** Where the run's bundle of the CLI is written (build.ts) and run from (cli-process.ts): the project's cache. */
import { resolve } from 'node:path';

export const CLI_BUNDLE = resolve(import.meta.dirname, '../../../.cache/test-cli/cli.mjs');
/** The CLI's source entry, which the bundle names as its own (`process.argv[1]`). */
export const CLI_SOURCE = resolve(import.meta.dirname, '../../../client/cli.ts');
