/**
 * The operation card in the MCP Lambda's asset: the after-bundling command puts the built
 * HTML beside the bundle (where the function reads it lazily), only for the MCP handler,
 * and the handler's bundle leaves the builder (and esbuild with it) out.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { esbuildOptions, MCP_LAZY_MODULES } from '../../cdk/lambda-bundling.ts';
import { operationCardCommands } from '../../cdk/operation-card-asset.ts';
import { MCP_HTTP_ENTRY, REPO_ROOT, STATUS_SYNC_ENTRY } from '../../cdk/repo-paths.ts';
import { buildOperationCardHtml } from '../../lambdas/mcp/apps/build-operation-card.ts';
import { CARD_ASSET_FILE } from '../../lambdas/mcp/apps/card-resource.ts';

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'async-mcp-card-asset-'));
  scratch.push(dir);
  return dir;
}

describe('the card in the MCP asset', () => {
  it('the MCP handler gets operation-card.html beside its bundle; other functions get nothing', () => {
    const outputDir = tempDir();
    const commands = operationCardCommands(MCP_HTTP_ENTRY, outputDir);
    expect(commands).toHaveLength(1);
    for (const command of commands) execSync(command, { stdio: 'pipe' });
    expect(readFileSync(join(outputDir, CARD_ASSET_FILE), 'utf8')).toBe(buildOperationCardHtml());
    expect(operationCardCommands(STATUS_SYNC_ENTRY, outputDir)).toEqual([]);
  });

  it('the MCP bundle reads the prebuilt file and leaves the builder and esbuild out', async () => {
    const outfile = join(tempDir(), 'index.mjs');
    const result = await build({ ...esbuildOptions(MCP_HTTP_ENTRY, outfile, REPO_ROOT, MCP_LAZY_MODULES), metafile: true, sourcemap: false });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((input) => input.includes('lambdas/mcp/apps/card-resource.ts'))).toBe(true);
    expect(inputs.filter((input) => input.includes('build-operation-card') || input.includes('node_modules/esbuild/'))).toEqual([]);
    expect(inputs.filter((input) => input.includes('lambdas/mcp/apps/operation-card/'))).toEqual([]);
  });
});
