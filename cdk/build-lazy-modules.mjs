// Builds the lazily loaded packages of a Lambda asset: `node build-lazy-modules.mjs <options.json>`,
// where the file holds an array of esbuild build options (cdk/lambda-bundling.ts `lazyModuleOptions`).
// Plain Node, so CDK's after-bundling hook runs it the same way under sh and under cmd.
import { readFileSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { build } from 'esbuild';

const [optionsFile] = process.argv.slice(2);
if (!optionsFile) {
  console.error('usage: node build-lazy-modules.mjs <options.json>');
  process.exit(2);
}
for (const options of JSON.parse(readFileSync(optionsFile, 'utf8'))) await build(options);
// The options file's folder is this command's scratch (cdk/synth-scratch.ts): done with it.
if (basename(dirname(optionsFile)).startsWith('async-mcp-synth-')) rmSync(dirname(optionsFile), { recursive: true, force: true });
