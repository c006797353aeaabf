/**
 * Durable function tool folders (issue 38): `durable.ts` in place of `definition.asl.json`.
 * The loader compiles it without running it and refuses what does not apply to it; the
 * catalog takes its run bound from tool.json; the deployed asset's folder (tool.json and
 * durable.ts, as the copy script writes it) loads without a definition or esbuild.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyToolFiles } from '../../cdk/tool-asset-commands.ts';
import { checkEsbuild } from '../../lambdas/tools/durable-handler-check.ts';
import { loadDeployedToolFolders } from '../../lambdas/tools/deployed-tool-folders.ts';
import { deployedToolArns } from '../../lambdas/tools/durable-function-names.ts';
import { buildToolCatalog, MAX_RUN_SECONDS } from '../../lambdas/tools/tool-catalog.ts';
import { inspectToolFolders, loadToolFolders, type ToolFolderError } from '../../lambdas/tools/tool-folder.ts';

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} tool`,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  invocation: 'async',
  ...extra,
});
const DURABLE_TS = `import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { reportProgress } from 'async-mcp/durable';
export const handler = withDurableExecution(async (event: { arguments: { text: string } }, context: never) => {
  await reportProgress(context, event as never, { progress: 1 });
  return { content: [{ type: 'text', text: event.arguments.text }] };
});
`;
const DEFINITION = { StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-tools-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeFolder(name: string, files: Record<string, string | object>): Promise<void> {
  await mkdir(join(dir, name), { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    await writeFile(join(dir, name, file), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
}

/** Every problem of the inspection, as `<file relative to the tools dir>: <reason>`. */
async function problems(): Promise<string[]> {
  const inspection = await inspectToolFolders(dir);
  return inspection.problems.map((problem: ToolFolderError) => `${relative(dir, problem.file) || '.'}: ${problem.reason}`);
}

describe('a durable function tool folder', () => {
  it('loads as a durable tool: durable.ts, no definition, no workers, nothing for the local state machine runtime', async () => {
    await writeFolder('echo', { 'tool.json': tool('echo'), 'durable.ts': DURABLE_TS });
    const [folder] = await loadToolFolders(dir);
    expect(folder).toEqual({
      dir: join(dir, 'echo'),
      config: expect.objectContaining({ name: 'echo', workflowType: 'STANDARD' }),
      durable: { file: join(dir, 'echo', 'durable.ts') },
      workers: [],
      localDefinitionText: '',
      localProblems: [],
    });
    expect(folder).not.toHaveProperty('definitionText');
  });

  it('refuses a folder that holds both durable.ts and definition.asl.json, naming the folder', async () => {
    await writeFolder('echo', { 'tool.json': tool('echo'), 'durable.ts': DURABLE_TS, 'definition.asl.json': DEFINITION });
    const error = await loadToolFolders(dir).catch((e: unknown) => e as ToolFolderError);
    expect(error).toMatchObject({ name: 'ToolFolderError', file: join(dir, 'echo') });
    expect((error as ToolFolderError).reason).toMatch(/^holds both definition\.asl\.json and durable\.ts: keep one/);
  });

  it('refuses stateMachineArn, input, workflowType EXPRESS and mocks.json in a durable folder, each naming its file', async () => {
    await writeFolder('existing', {
      'tool.json': tool('existing', { stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:orders' }),
      'durable.ts': DURABLE_TS,
    });
    await writeFolder('arguments', { 'tool.json': tool('arguments', { input: 'arguments' }), 'durable.ts': DURABLE_TS });
    await writeFolder('express', { 'tool.json': tool('express', { invocation: 'sync', workflowType: 'EXPRESS' }), 'durable.ts': DURABLE_TS });
    await writeFolder('mocked', { 'tool.json': tool('mocked'), 'durable.ts': DURABLE_TS, 'mocks.json': { StateMachines: {} } });
    expect(await problems()).toEqual([
      'arguments/tool.json: input does not apply: a durable function tool (durable.ts) runs no state machine, and its event is always { arguments, operation }; remove input',
      'existing/tool.json: stateMachineArn does not apply: a durable function tool (durable.ts) runs no state machine; remove stateMachineArn or durable.ts',
      'express/tool.json: workflowType EXPRESS does not apply: a durable function tool (durable.ts) runs no state machine; remove workflowType (durable tools are STANDARD)',
      'mocked/mocks.json: does not apply to a durable function tool (durable.ts), whose code runs as it is locally; remove mocks.json',
    ]);
  });

  it('refuses a durable block in a state machine folder, naming tool.json', async () => {
    await writeFolder('machine', { 'tool.json': tool('machine', { durable: { executionTimeoutSeconds: 60 } }), 'definition.asl.json': DEFINITION });
    expect(await problems()).toEqual([
      'machine/tool.json: durable applies only to a durable function tool (durable.ts in place of definition.asl.json); remove durable',
    ]);
  });

  it('checks the durable block against what Lambda allows', async () => {
    await writeFolder('bounds', {
      'tool.json': tool('bounds', { durable: { executionTimeoutSeconds: 31_622_401, retentionDays: 0, memorySize: 64, invocationTimeoutSeconds: 901 } }),
      'durable.ts': DURABLE_TS,
    });
    await writeFolder('typo', { 'tool.json': tool('typo', { durable: { timeoutSeconds: 60 } }), 'durable.ts': DURABLE_TS });
    const found = await problems();
    for (const field of ['executionTimeoutSeconds', 'retentionDays', 'memorySize', 'invocationTimeoutSeconds']) {
      expect(found.some((line) => line.startsWith(`bounds/tool.json: durable.${field}: `))).toBe(true);
    }
    expect(found.some((line) => line.startsWith('typo/tool.json: durable: ') && line.includes('timeoutSeconds'))).toBe(true);
  });

  it('names a durable.ts that does not compile by file, line and column, without running it', async () => {
    // Running it would throw at load time; compiling it must not.
    const code = `throw new Error('ran');\nexport const handler = async (event) => {\n  return event.\n};\n`;
    await writeFolder('broken', { 'tool.json': tool('broken'), 'durable.ts': code });
    const [line, ...rest] = await problems();
    expect(rest).toEqual([]);
    expect(line).toMatch(/^broken\/durable\.ts: \S*broken\/durable\.ts:4:1: Expected identifier but found "}"$/);
  });

  it('names a durable.ts that compiles but exports no handler, and lists what it exports', async () => {
    await writeFolder('unexported', { 'tool.json': tool('unexported'), 'durable.ts': 'export const main = async () => ({});\nexport default main;\n' });
    expect(await problems()).toEqual([
      'unexported/durable.ts: must export handler (export const handler = withDurableExecution(...)); it exports default, main',
    ]);
  });

  it('says to install esbuild, naming durable.ts, when the project has not got it (the check compiles with it)', async () => {
    await writeFolder('echo', { 'tool.json': tool('echo'), 'durable.ts': DURABLE_TS });
    const { load } = checkEsbuild;
    checkEsbuild.load = () => {
      throw Object.assign(new Error("Cannot find module 'esbuild'"), { code: 'MODULE_NOT_FOUND' });
    };
    try {
      expect(await problems()).toEqual([
        'echo/durable.ts: cannot be checked: esbuild is not installed (the check compiles durable.ts with it); install it in the project: npm install --save-dev esbuild',
      ]);
    } finally {
      checkEsbuild.load = load;
    }
  });

  it('reports a bad durable.ts beside an invalid tool.json in one inspection', async () => {
    await writeFolder('both_bad', { 'tool.json': tool('both_bad', { invocation: 'sometimes' }), 'durable.ts': 'export const other = 1;\n' });
    const found = await problems();
    expect(found.some((line) => line.startsWith('both_bad/tool.json: invocation: '))).toBe(true);
    expect(found.some((line) => line.startsWith('both_bad/durable.ts: must export handler'))).toBe(true);
  });

  it('skips the compile with checkDefinitions off, as the other deep checks are skipped', async () => {
    await writeFolder('unchecked', { 'tool.json': tool('unchecked'), 'durable.ts': 'export const other = (;\n' });
    const [folder] = await loadToolFolders(dir, { checkDefinitions: false });
    expect(folder?.durable).toEqual({ file: join(dir, 'unchecked', 'durable.ts') });
  });
});

describe("a durable tool's catalog entry", () => {
  it('runs for at most durable.executionTimeoutSeconds, else the durable execution bound of a year', async () => {
    await writeFolder('bounded', { 'tool.json': tool('bounded', { durable: { executionTimeoutSeconds: 7200 } }), 'durable.ts': DURABLE_TS });
    await writeFolder('unbounded', { 'tool.json': tool('unbounded'), 'durable.ts': DURABLE_TS });
    const catalog = buildToolCatalog(await loadToolFolders(dir), () => 'arn');
    expect(catalog.get('bounded')?.timing.maxRunSeconds).toBe(7200);
    expect(catalog.get('unbounded')?.timing.maxRunSeconds).toBe(MAX_RUN_SECONDS.DURABLE);
    expect(MAX_RUN_SECONDS.DURABLE).toBe(31_622_400);
  });

  it("holds the function's alias ARN where a state machine tool holds its machine's", async () => {
    await writeFolder('durable_echo', { 'tool.json': tool('durable_echo'), 'durable.ts': DURABLE_TS });
    await writeFolder('machine_echo', { 'tool.json': tool('machine_echo'), 'definition.asl.json': DEFINITION });
    const arns = deployedToolArns('arn:aws:states:us-east-1:123456789012:stateMachine:Stack-', 'arn:aws:lambda:us-east-1:123456789012:function:Stack-');
    const catalog = buildToolCatalog(await loadToolFolders(dir), arns);
    expect(catalog.get('durable_echo')?.stateMachineArn).toBe('arn:aws:lambda:us-east-1:123456789012:function:Stack-durable_echo:live');
    expect(catalog.get('machine_echo')?.stateMachineArn).toBe('arn:aws:states:us-east-1:123456789012:stateMachine:Stack-machine_echo');
  });
});

describe("the deployed asset's durable tool folder", () => {
  it('is copied as tool.json and durable.ts, and loads as the checked folder does, without a definition', async () => {
    const source = join(dir, 'source');
    const asset = join(dir, 'asset');
    await writeFolder('source/durable_echo', { 'tool.json': tool('durable_echo', { durable: { executionTimeoutSeconds: 600 } }), 'durable.ts': DURABLE_TS });
    await writeFolder('source/machine_echo', { 'tool.json': tool('machine_echo'), 'definition.asl.json': DEFINITION });
    const checked = await loadToolFolders(source);
    // What the synth copies into the MCP asset: each folder's tool.json and the one file it runs.
    copyToolFiles(checked, asset);
    expect((await readdir(join(asset, 'state-machines', 'durable_echo'))).sort()).toEqual(['durable.ts', 'tool.json']);

    const deployed = await loadDeployedToolFolders(join(asset, 'state-machines'));
    expect(deployed.find((folder) => folder.config.name === 'durable_echo')).toEqual({
      dir: join(asset, 'state-machines', 'durable_echo'),
      config: checked[0]?.config,
      durable: { file: join(asset, 'state-machines', 'durable_echo', 'durable.ts') },
      workers: [],
      localDefinitionText: '',
      localProblems: [],
    });
    const arnOf = () => 'arn';
    expect(buildToolCatalog(deployed, arnOf).tools).toEqual(buildToolCatalog(checked, arnOf).tools);
  });

  it('fails the cold start naming tool.json for a setting a durable tool cannot have, and naming the definition when neither file is there', async () => {
    await writeFolder('express', { 'tool.json': tool('express', { invocation: 'sync', workflowType: 'EXPRESS' }), 'durable.ts': DURABLE_TS });
    await expect(loadDeployedToolFolders(dir)).rejects.toThrow(`${join(dir, 'express', 'tool.json')}: workflowType EXPRESS does not apply`);
    await rm(join(dir, 'express', 'durable.ts'));
    await expect(loadDeployedToolFolders(dir)).rejects.toThrow(join(dir, 'express', 'definition.asl.json'));
  });
});
