import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildToolCatalog } from '../../lambdas/tools/tool-catalog.ts';
import { loadToolFolders, ToolFolderError } from '../../lambdas/tools/tool-folder.ts';

const validTool = {
  name: 'echo',
  description: 'Echoes its input',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  invocation: 'async',
};
const validDefinition = { StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } };

describe('tool folder loader', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tools-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function writeTool(folder: string, tool: unknown, definition: unknown = validDefinition) {
    await mkdir(join(dir, folder), { recursive: true });
    if (tool !== undefined) await writeFile(join(dir, folder, 'tool.json'), typeof tool === 'string' ? tool : JSON.stringify(tool));
    if (definition !== null) {
      await writeFile(join(dir, folder, 'definition.asl.json'), typeof definition === 'string' ? definition : JSON.stringify(definition));
    }
  }

  async function loadError(): Promise<ToolFolderError> {
    const error = await loadToolFolders(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFolderError);
    return error as ToolFolderError;
  }

  it('loads the repository tools, sorted by name, with their workers', async () => {
    const folders = await loadToolFolders('state-machines');
    const names = folders.map((f) => f.config.name);
    expect(names).toEqual(expect.arrayContaining(['analyze_dataset', 'quick_calculation', 'run_test_suite']));
    expect(names).toEqual([...names].sort());
    expect(folders.find((f) => f.config.name === 'quick_calculation')!.workers).toEqual(['calculate']);
  });

  it('applies defaults: STANDARD workflow and the server timing defaults', async () => {
    await writeTool('echo', validTool);
    const catalog = buildToolCatalog(await loadToolFolders(dir), (name) => `arn:${name}`);
    expect(catalog.get('echo')).toMatchObject({ workflowType: 'STANDARD', stateMachineArn: 'arn:echo', timing: { pollIntervalSeconds: 5 } });
  });

  it('names the file and the field for an invalid tool.json', async () => {
    await writeTool('echo', { ...validTool, invocation: 'sometimes' });
    const error = await loadError();
    expect(error.file).toBe(join(dir, 'echo', 'tool.json'));
    expect(error.message).toMatch(/invocation/);
  });

  it('rejects misspelt keys instead of ignoring them', async () => {
    await writeTool('echo', { ...validTool, pollIntervalSecs: 3 });
    expect((await loadError()).message).toMatch(/pollIntervalSecs/);
  });

  it('rejects a tool whose name differs from its folder', async () => {
    await writeTool('other', validTool);
    expect((await loadError()).message).toMatch(/must match its folder name/);
  });

  it('rejects malformed JSON with the file name', async () => {
    await writeTool('echo', '{ "name": ');
    const error = await loadError();
    expect(error.file).toMatch(/tool\.json$/);
    expect(error.reason).toMatch(/not valid JSON/);
  });

  it('rejects a missing definition file', async () => {
    await writeTool('echo', validTool, null);
    const error = await loadError();
    expect(error.file).toMatch(/definition\.asl\.json$/);
    expect(error.reason).toBe('file is missing');
  });

  it('rejects invalid Amazon States Language', async () => {
    await writeTool('echo', validTool, { StartAt: 'Nowhere', States: { Done: { Type: 'Pass', End: true } } });
    expect((await loadError()).reason).toMatch(/not valid Amazon States Language/);
  });

  it('loads JSONata definitions, at the top or per state, and Assign', async () => {
    await writeTool('echo', validTool, {
      QueryLanguage: 'JSONata',
      StartAt: 'Done',
      States: { Done: { Type: 'Pass', Output: '{% $states.input %}', End: true } },
    });
    await writeTool(
      'mixed',
      { ...validTool, name: 'mixed' },
      {
        StartAt: 'Keep',
        States: {
          Keep: { Type: 'Pass', Assign: { x: 1 }, Next: 'Done' },
          Done: { Type: 'Pass', QueryLanguage: 'JSONata', Output: '{% $x %}', End: true },
        },
      },
    );
    const folders = await loadToolFolders(dir);
    expect(folders.map((folder) => folder.config.name)).toEqual(['echo', 'mixed']);
  });

  it('rejects EXPRESS for tools that must run asynchronously', async () => {
    await writeTool('echo', { ...validTool, workflowType: 'EXPRESS' });
    expect((await loadError()).reason).toMatch(/EXPRESS is only for sync tools/);
  });

  it('rejects an input schema that is not an object schema or not valid JSON Schema', async () => {
    await writeTool('echo', { ...validTool, inputSchema: { type: 'string' } });
    expect((await loadError()).reason).toMatch(/inputSchema/);
    await writeTool('echo', { ...validTool, inputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } });
    expect((await loadError()).reason).toMatch(/not a valid JSON Schema/);
  });

  it("makes duplicate names impossible: a folder declaring another folder's tool fails the folder-name rule", async () => {
    await writeTool('echo', validTool);
    await writeTool('echo_copy', validTool);
    const error = await loadError();
    expect(error.file).toBe(join(dir, 'echo_copy', 'tool.json'));
    expect(error.reason).toBe('name "echo" must match its folder name "echo_copy"');
  });

  it('fails on an empty tools directory and on a missing one', async () => {
    expect((await loadError()).reason).toBe('no tool folders found');
    const missing = await loadToolFolders(join(dir, 'nope')).catch((e: unknown) => e);
    expect((missing as ToolFolderError).reason).toMatch(/cannot read the tools directory/);
  });
});
