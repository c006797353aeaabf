/**
 * `npm run new-tool -- <name> --durable` (issues 38 and 49): a tool folder written in
 * TypeScript, a durable.ts alone whose handler defineTool makes (settings, zod schemas, the
 * async-mcp/durable helpers from its context), that passes validate-tools as it is.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';

/** Runs one of the authoring scripts as `npm run` would, in a fresh Node process. */
function script(name: 'new-tool' | 'validate-tools', args: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join('scripts', `${name}.ts`), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const SCAFFOLDS = [
  ['report_async', []],
  ['confirm_both', ['--input', '--both']],
  ['quick_sync', ['--sync']],
] as const;

let dir: string;
let toolsDir: string;
let created: ReturnType<typeof script>[];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'new-tool-durable-'));
  // With the repository's node_modules beside it, so durable.ts finds zod as a project's tool does.
  await symlink(resolve('node_modules'), join(dir, 'node_modules'), 'dir');
  toolsDir = join(dir, 'tools');
  created = SCAFFOLDS.map(([name, flags]) => script('new-tool', [name, '--durable', ...flags, '--tools-dir', toolsDir]));
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const read = (tool: string, file: string) => readFile(join(toolsDir, tool, file), 'utf8');

describe('npm run new-tool -- <name> --durable', () => {
  it('writes durable.ts alone: no tool.json, no definition', async () => {
    for (const run of created) expect(run.status, run.stderr).toBe(0);
    for (const [name] of SCAFFOLDS) expect(await readdir(join(toolsDir, name))).toEqual(['durable.ts']);
    expect(created[0]?.stdout).toContain('durable.ts');
  });

  it('passes validate-tools as it is: it compiles and exports handler', () => {
    const validated = script('validate-tools', [toolsDir]);
    expect(validated.status, validated.stderr).toBe(0);
    expect(validated.stdout).toContain('3 tools valid: confirm_both, quick_sync, report_async');
  });

  it('loads as durable tools, STANDARD whatever the invocation, with the execution timeout defineTool gives', async () => {
    const folders = await loadToolFolders(toolsDir);
    expect(folders.map((folder) => [folder.config.name, folder.config.invocation, folder.config.workflowType, folder.durable?.file])).toEqual([
      ['confirm_both', 'both', 'STANDARD', join(toolsDir, 'confirm_both', 'durable.ts')],
      ['quick_sync', 'sync', 'STANDARD', join(toolsDir, 'quick_sync', 'durable.ts')],
      ['report_async', 'async', 'STANDARD', join(toolsDir, 'report_async', 'durable.ts')],
    ]);
    const config = folders.find((folder) => folder.config.name === 'quick_sync')?.config;
    expect(config?.durable).toEqual({ executionTimeoutSeconds: 86_400 });
    expect(config?.inputSchema).toEqual({
      type: 'object',
      properties: { text: { type: 'string', description: 'The text to echo.' } },
      required: ['text'],
      additionalProperties: false,
    });
  });

  it('uses defineTool with zod schemas, reportProgress from its context, and askClient only with --input', async () => {
    const plain = await read('report_async', 'durable.ts');
    expect(plain).toContain("import { defineTool } from 'async-mcp/durable';");
    expect(plain).toContain("import { z } from 'zod';");
    expect(plain).toContain('export const handler = defineTool(');
    expect(plain).toContain('await context.reportProgress(');
    expect(plain).not.toContain('askClient');

    const asking = await read('confirm_both', 'durable.ts');
    expect(asking).toContain("import { defineTool, DurableToolError, INPUT_ERRORS } from 'async-mcp/durable';");
    // The question a request_input state asks in the state machine scaffold, under the same key.
    expect(asking).toContain("{ method: 'elicitation/create', params: { message: `Echo \"${text}\"?`, requestedSchema: { type: 'object', properties: {} } } }");
    expect(asking).toContain("{ key: 'confirm', timeout: { hours: 1 } }");
  });

  it('refuses --jsonata and --worker with --durable, which are for a state machine', () => {
    for (const flag of ['--jsonata', '--worker']) {
      const refused = script('new-tool', ['other_tool', '--durable', flag, '--tools-dir', toolsDir]);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain('a durable tool (--durable) is its own code');
    }
  });
});
