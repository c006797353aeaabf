/**
 * Test support: tiny bundled assets written to a temp folder, and the DeployedFunction that
 * names them, as the assembly reader would give it.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { DeployedFunction } from '../../../local/assembly/deployed-stack.ts';

/** A folder of assets, removed by `remove()`. */
export async function assetRoot(): Promise<{ root: string; remove(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'local-lambda-'));
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Writes `files` (relative path → content) into `<root>/<name>` and returns the function running it. */
export async function writeAsset(
  root: string,
  name: string,
  files: Record<string, string>,
  overrides: Partial<DeployedFunction> = {},
): Promise<DeployedFunction> {
  const assetDir = join(root, name);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(assetDir, path)), { recursive: true });
    await writeFile(join(assetDir, path), content);
  }
  return {
    logicalId: `${name}Function`,
    name: `AsyncMcp-${name}-ABCDEF123456`,
    arn: `arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-${name}-ABCDEF123456`,
    assetDir,
    handler: 'index.handler',
    runtime: 'nodejs24.x',
    timeoutSeconds: 5,
    memorySize: 256,
    environment: {},
    roleArn: `arn:aws:iam::000000000000:role/AsyncMcp-${name}Role-ABCDEF123456`,
    ...overrides,
  };
}
