// A module hook: client/cli.ts loads as the bundle of it the test run built; every other module as usual.
import { readFile } from 'node:fs/promises';

const ENTRY = new URL('../../../client/cli.ts', import.meta.url).href;
const BUNDLE = new URL('../../../.cache/test-cli/cli.mjs', import.meta.url);

export async function load(url, context, nextLoad) {
  if (url !== ENTRY) return nextLoad(url, context);
  return { format: 'module', source: await readFile(BUNDLE, 'utf8'), shortCircuit: true };
}
