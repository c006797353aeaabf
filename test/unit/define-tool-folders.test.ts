/**
 * A folder holding only a durable.ts whose handler `defineTool` makes (issue 49): the loader
 * reads its settings and derives its JSON Schema from it, validate-tools accepts it, a
 * tool.json beside it is refused naming both files, and a handler that does not match its
 * outputSchema is left for the server to refuse.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import { toolFileManifest } from '../../cdk/tool-asset-commands.ts';
import { toolJsonOf } from '../../lambdas/tools/defined-tool-config.ts';
import { inspectToolFolders, loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { handler as sumSlowly } from '../fixtures/defined-tools/sum_slowly/durable.ts';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'defined-tools');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'defined-tools-'));
  // A project's tools resolve zod from the project's node_modules: the copy gets the repository's.
  await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a folder holding only a defineTool durable.ts', () => {
  it('loads as a durable tool whose tool.json settings and JSON Schema come from its definition', async () => {
    const [folder] = await loadToolFolders(FIXTURES);
    expect(folder?.durable).toEqual({ file: join(FIXTURES, 'sum_slowly', 'durable.ts'), defined: true });
    expect(folder?.config).toEqual({
      name: 'sum_slowly',
      description: 'Adds numbers, one checkpointed step each.',
      invocation: 'both',
      workflowType: 'STANDARD',
      inputSchema: {
        type: 'object',
        properties: { numbers: { type: 'array', items: { type: 'number' }, minItems: 1, description: 'The numbers to add.' } },
        required: ['numbers'],
      },
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'], additionalProperties: false },
    });
  });

  it('is accepted by validate-tools', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', join('scripts', 'validate-tools.ts'), FIXTURES], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.stderr).not.toMatch(/problem/);
    expect(run.stdout.trim()).toBe('2 tools valid: sum_slowly, sum_wrongly');
    expect(run.status).toBe(0);
  });

  it('refuses a tool.json beside it, naming both files', async () => {
    await cp(join(FIXTURES, 'sum_slowly'), join(dir, 'sum_slowly'), { recursive: true });
    await writeFile(
      join(dir, 'sum_slowly', 'tool.json'),
      JSON.stringify({ name: 'sum_slowly', description: 'd', inputSchema: { type: 'object' }, invocation: 'both' }),
    );
    const { folders, problems } = await inspectToolFolders(dir);
    expect(folders).toEqual([]);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.file).toBe(join(dir, 'sum_slowly', 'tool.json'));
    expect(problems[0]?.message).toContain(join(dir, 'sum_slowly', 'durable.ts'));
  });

  it('names its file and the setting when the definition breaks tool.json rules', async () => {
    await writeFile(
      join(await mkdirIn(dir, 'misnamed'), 'durable.ts'),
      `import { z } from 'zod';\nimport { defineTool } from 'async-mcp/durable';\nexport const handler = defineTool({ name: 'other', description: 'd', inputSchema: z.object({}), invocation: 'sometimes' as 'sync' }, async () => ({}));\n`,
    );
    const { problems } = await inspectToolFolders(dir);
    const reasons = problems.map((problem) => `${problem.file}: ${problem.reason}`);
    expect(reasons).toContainEqual(expect.stringMatching(/misnamed\/durable\.ts: defineTool: invocation: /));
  });

  it('without defineTool and without tool.json, says to use one or the other', async () => {
    const plain = `import { withDurableExecution } from '@aws/durable-execution-sdk-js';\nexport const handler = withDurableExecution(async () => ({ content: [] }));\n`;
    await writeFile(join(await mkdirIn(dir, 'plain'), 'durable.ts'), plain);
    const { problems } = await inspectToolFolders(dir);
    expect(problems.map((problem) => [problem.file, problem.reason])).toEqual([
      [join(dir, 'plain', 'tool.json'), 'file is missing: define the tool in durable.ts with defineTool (from async-mcp/durable), or give it a tool.json'],
    ]);
  });

  it('gives the synthesized MCP asset the derived tool.json in place of one to copy', async () => {
    const [folder] = await loadToolFolders(FIXTURES);
    const [entry] = toolFileManifest([folder!]);
    expect(entry?.files).toEqual([join(FIXTURES, 'sum_slowly', 'durable.ts')]);
    expect(JSON.parse(entry?.write?.['tool.json'] ?? '{}')).toEqual(folder?.config);
  });
});

describe('defineTool', () => {
  it('carries its definition on the handler, for the loader', () => {
    expect(typeof sumSlowly).toBe('function');
    expect(sumSlowly.definition.name).toBe('sum_slowly');
  });

  it('lists input as a client sends it and output as the handler produces it, transforms and defaults included', () => {
    const listed = toolJsonOf({
      name: 'padded',
      description: 'd',
      invocation: 'sync',
      inputSchema: z.object({ count: z.number().int().min(0).default(1), label: z.string().transform((label) => label.length) }),
      outputSchema: z.object({ total: z.number().int().min(0) }),
    });
    expect(listed.inputSchema).toEqual({
      type: 'object',
      properties: { count: { type: 'integer', minimum: 0, default: 1 }, label: { type: 'string' } },
      required: ['label'],
    });
    expect(listed.outputSchema).toEqual({
      type: 'object',
      properties: { total: { type: 'integer', minimum: 0 } },
      required: ['total'],
      additionalProperties: false,
    });
  });
});

async function mkdirIn(parent: string, name: string): Promise<string> {
  const path = join(parent, name);
  await mkdir(path);
  return path;
}
