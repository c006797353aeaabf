/**
 * Files an after-bundling command reads (copy manifests, the built operation card), kept out of
 * its command line: each command gets a folder of its own in the temp dir, which the command's
 * script removes once it has run (cdk/copy-tool-files.mjs). For a command meant for Docker
 * bundling (its output folder is the container's), nothing is written, as a container would not
 * see the host's temp dir anyway.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AssetStaging } from 'aws-cdk-lib';

/** The prefix of those folders; the scripts remove only a folder named so. */
export const SCRATCH_PREFIX = 'async-mcp-synth-';

export interface CommandScratch {
  /** Writes `text` to `name` in the command's folder (not for the Docker command); returns its path. */
  write(name: string, text: string): string;
}

/** The scratch folder of one command that bundles into `outputDir`. */
export function commandScratch(outputDir: string): CommandScratch {
  if (outputDir === AssetStaging.BUNDLING_OUTPUT_DIR) {
    const unused = join(tmpdir(), `${SCRATCH_PREFIX}docker`);
    return { write: (name) => join(unused, name) };
  }
  let dir: string | undefined;
  return {
    write(name, text) {
      dir ??= mkdtempSync(join(tmpdir(), SCRATCH_PREFIX));
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    },
  };
}
