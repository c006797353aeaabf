import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyToolFiles } from '../../cdk/tool-asset-commands.ts';
import { loadDeployedToolFolders } from '../../lambdas/tools/deployed-tool-folders.ts';
import { buildToolCatalog } from '../../lambdas/tools/tool-catalog.ts';
import { ToolConfigSchema } from '../../lambdas/tools/tool-config.ts';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';

const arnOf = (name: string) => `arn:aws:states:us-east-1:000000000000:stateMachine:${name}`;

describe('the deployed tool folders loader', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'deployed-tools-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('builds, from the files an MCP asset carries, the very catalog loadToolFolders builds from the tool folders', async () => {
    const tools = await loadToolFolders('state-machines', { checkDefinitions: false });
    // The synth's copy, into a stand-in asset directory.
    copyToolFiles(tools, dir);
    const deployed = await loadDeployedToolFolders(join(dir, 'state-machines'));
    // The source folders themselves: a defineTool tool's asset folder holds the tool.json synth derived, which the source does not.
    expect(buildToolCatalog(deployed, arnOf).tools).toEqual(buildToolCatalog(tools, arnOf).tools);
    expect(deployed.map((folder) => folder.config.name)).toEqual(tools.map((tool) => tool.config.name).sort((a, b) => a.localeCompare(b)));
  });

  it('orders the folders by code unit, as the catalog orders its tools, whatever their case', async () => {
    for (const name of ['b_tool', 'B_tool', 'a-tool', 'a_tool']) {
      await mkdir(join(dir, name));
      await writeFile(
        join(dir, name, 'tool.json'),
        JSON.stringify({ name, description: 'd', inputSchema: { type: 'object' }, invocation: 'sync', workflowType: 'EXPRESS' }),
      );
      await writeFile(join(dir, name, 'definition.asl.json'), '{"StartAt":"Done","States":{"Done":{"Type":"Pass","End":true}}}');
    }
    const deployed = await loadDeployedToolFolders(dir);
    expect(deployed.map((folder) => folder.config.name)).toEqual(['B_tool', 'a-tool', 'a_tool', 'b_tool']);
    expect(buildToolCatalog(deployed, arnOf).tools.map((tool) => tool.name)).toEqual(['B_tool', 'a-tool', 'a_tool', 'b_tool']);
  });

  it('fails the cold start naming the file of a tool.json that is not valid', async () => {
    await mkdir(join(dir, 'echo'));
    await writeFile(join(dir, 'echo', 'tool.json'), JSON.stringify({ name: 'echo', description: 'd', inputSchema: { type: 'object' }, invocation: 'never' }));
    await expect(loadDeployedToolFolders(dir)).rejects.toThrow(join(dir, 'echo', 'tool.json'));
  });

  it("refuses a tool.json with the very messages of the checked schema, in their order (the cold start parses it without zod's JIT)", async () => {
    const config = {
      name: 'echo',
      description: '',
      inputSchema: { type: 'array' },
      invocation: 'never',
      keepAliveSeconds: -1,
      extra: 1,
      icons: [{ src: 'http://x' }],
    };
    await mkdir(join(dir, 'echo'));
    await writeFile(join(dir, 'echo', 'tool.json'), JSON.stringify(config));
    const checked = ToolConfigSchema.safeParse(config);
    expect(checked.success).toBe(false);
    const messages = checked.error?.issues.map((issue) => issue.message) ?? [];
    expect(messages.length).toBeGreaterThan(4);
    await expect(loadDeployedToolFolders(dir)).rejects.toThrow(`${join(dir, 'echo', 'tool.json')}: ${messages.join('; ')}`);
  });

  it('fails the cold start when a name differs from its folder, or there is no folder at all', async () => {
    await expect(loadDeployedToolFolders(dir)).rejects.toThrow('no tool folders found');
    await mkdir(join(dir, 'echo'));
    await writeFile(join(dir, 'echo', 'tool.json'), JSON.stringify({ name: 'other', description: 'd', inputSchema: { type: 'object' }, invocation: 'sync' }));
    await writeFile(join(dir, 'echo', 'definition.asl.json'), '{"StartAt":"Done","States":{"Done":{"Type":"Pass","End":true}}}');
    await expect(loadDeployedToolFolders(dir)).rejects.toThrow('must match its folder name "echo"');
  });
});
