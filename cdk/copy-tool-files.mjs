// Copies tool files into a Lambda asset: `node copy-tool-files.mjs <manifest.json> <outputDir>`.
// The manifest is `[{ "target": "<dir under outputDir>", "files": ["<absolute source>", ...], "write"?: { "<name>": "<text>" } }]`
// (`write`: files derived at synth, such as a defineTool tool's tool.json).
// The command form of cdk/tool-asset-commands.ts `copyToolFiles` (the synth copies in its own process):
// plain Node with no dependencies, so it runs the same way under sh on Linux and macOS and under cmd on Windows.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const [manifestFile, outputDir] = process.argv.slice(2);
if (!manifestFile || !outputDir) {
  console.error('usage: node copy-tool-files.mjs <manifest.json> <outputDir>');
  process.exit(2);
}
for (const { target, files, write = {} } of JSON.parse(readFileSync(manifestFile, 'utf8'))) {
  const dir = join(outputDir, target);
  mkdirSync(dir, { recursive: true });
  for (const file of files) copyFileSync(file, join(dir, basename(file)));
  for (const [name, text] of Object.entries(write)) writeFileSync(join(dir, basename(name)), text);
}
// The manifest's folder is this command's scratch (cdk/synth-scratch.ts): done with it.
if (basename(dirname(manifestFile)).startsWith('async-mcp-synth-')) rmSync(dirname(manifestFile), { recursive: true, force: true });
