/**
 * The operation card in the MCP Lambda's asset: the synth writes the built HTML beside the
 * bundle (where the function reads it lazily), only for the MCP handler,
 * and the handler's bundle leaves the builder (and esbuild with it) out. And its setting:
 * the CDK context, the function's environment.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { esbuildOptions, MCP_LAZY_MODULES } from '../../cdk/lambda-bundling.ts';
import { OPERATION_CARD_CONTEXT, writeOperationCard } from '../../cdk/operation-card-asset.ts';
import { MCP_HTTP_ENTRY, REPO_ROOT, STATUS_SYNC_ENTRY } from '../../cdk/repo-paths.ts';
import { buildOperationCardHtml } from '../../lambdas/mcp/apps/build-operation-card.ts';
import { CARD_ASSET_FILE } from '../../lambdas/mcp/apps/card-resource.ts';
import { OPERATION_CARD_ENV, operationCardOn } from '../../lambdas/mcp/apps/operation-card.ts';

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
    writeOperationCard(MCP_HTTP_ENTRY, outputDir);
    expect(readdirSync(outputDir)).toEqual([CARD_ASSET_FILE]);
    expect(readFileSync(join(outputDir, CARD_ASSET_FILE), 'utf8')).toBe(buildOperationCardHtml());
    const other = tempDir();
    writeOperationCard(STATUS_SYNC_ENTRY, other);
    expect(readdirSync(other)).toEqual([]);
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

describe('turning the card off in the CDK app', () => {
  it('-c operationCard=false gives the MCP function ASYNC_MCP_OPERATION_CARD=0 and no card in its asset; by default it has neither', async () => {
    const { testApp, buildStack, repoTools, logicalIdOf, resourcesOf } = await import('../cdk/cdk-test-app.ts');
    const { readAppSettings } = await import('../../cdk/app-settings.ts');
    const { Template } = await import('aws-cdk-lib/assertions');
    const tools = await repoTools();
    // As the app does: the context key read with the other settings, then passed as the `operationCard` prop.
    const environmentOf = (context?: string) => {
      const app = testApp();
      if (context !== undefined) app.node.setContext(OPERATION_CARD_CONTEXT, context);
      const { operationCard } = readAppSettings(app.node);
      const stack = buildStack(app, tools, operationCard === undefined ? {} : { operationCard });
      const fn = resourcesOf(Template.fromStack(stack), 'AWS::Lambda::Function')[logicalIdOf(stack.server.mcpFunction)];
      return (fn?.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    };
    expect(environmentOf('false')).toMatchObject({ [OPERATION_CARD_ENV]: '0' });
    expect(environmentOf()).not.toHaveProperty(OPERATION_CARD_ENV);
    expect(environmentOf('true')).not.toHaveProperty(OPERATION_CARD_ENV);
    expect(() => environmentOf('maybe')).toThrow(/CDK context operationCard must be true or false/);
    const off = tempDir();
    writeOperationCard(MCP_HTTP_ENTRY, off, false);
    expect(existsSync(join(off, CARD_ASSET_FILE))).toBe(false);
  });

  it('ASYNC_MCP_OPERATION_CARD: unset, "", "1" or "true" is on; "0" or "false" is off; anything else fails the start', () => {
    for (const value of [undefined, '', '1', 'true']) expect(operationCardOn(undefined, { [OPERATION_CARD_ENV]: value })).toBe(true);
    for (const value of ['0', 'false']) expect(operationCardOn(undefined, { [OPERATION_CARD_ENV]: value })).toBe(false);
    expect(() => operationCardOn(undefined, { [OPERATION_CARD_ENV]: 'off' })).toThrow(`Environment variable ${OPERATION_CARD_ENV} must be 1 or 0`);
    // The option wins over the environment.
    expect(operationCardOn(true, { [OPERATION_CARD_ENV]: '0' })).toBe(true);
  });
});
