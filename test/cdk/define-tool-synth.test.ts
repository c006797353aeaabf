/**
 * `cdk synth -c toolsDir=DIR` for a folder holding only a defineTool durable.ts (issue 49): the
 * app reads the definition as the local stack does, deploys a durable function bundled from
 * the durable.ts, and gives the MCP function the tool.json derived from it, so the MCP
 * function lists the tool without loading the tool's code. One bundled synth for the file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import { BUNDLED_TOOLS_DIR } from '../../cdk/tool-asset-commands.ts';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { bundledSynthFixture } from './bundled-synth-fixture.ts';
import { logicalIdOf, resourcesOf } from './cdk-test-app.ts';

const DEFINED_TOOLS_DIR = join(REPO_ROOT, 'test', 'fixtures', 'defined-tools');

const synth = bundledSynthFixture(() => loadToolFolders(DEFINED_TOOLS_DIR));

describe('a defineTool durable.ts, synthesized', () => {
  it('deploys a durable function bundled from its durable.ts', () => {
    const sum = synth.stack.server.durableToolFunctions.get('sum_slowly');
    expect(sum).toBeDefined();
    const resource = resourcesOf(synth.template, 'AWS::Lambda::Function')[logicalIdOf(sum!.function)];
    expect(resource?.Properties.DurableConfig).toBeDefined();
    const sources = (JSON.parse(readFileSync(join(synth.assetDirOf(sum!.function), 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources;
    expect(sources.some((source) => source.endsWith('test/fixtures/defined-tools/sum_slowly/durable.ts'))).toBe(true);
    // zod comes with the tool: the function validates its arguments and result with it.
    expect(sources.some((source) => source.includes('node_modules/zod/'))).toBe(true);
  });

  it("gives the MCP function's asset the tool.json derived from the definition, beside the durable.ts", () => {
    const bundled = join(synth.assetDirOf(synth.stack.server.mcpFunction), BUNDLED_TOOLS_DIR, 'sum_slowly');
    const derived = JSON.parse(readFileSync(join(bundled, 'tool.json'), 'utf8')) as Record<string, unknown>;
    expect(derived).toEqual(synth.tools.find((tool) => tool.config.name === 'sum_slowly')?.config);
    expect(derived.inputSchema).toMatchObject({ properties: { numbers: { type: 'array', items: { type: 'number' }, minItems: 1 } } });
    expect(existsSync(join(bundled, 'durable.ts'))).toBe(true);
  });
});
