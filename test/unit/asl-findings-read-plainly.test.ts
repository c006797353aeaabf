/**
 * A definition asl-validator refuses is reported in the author's terms: a machine missing a
 * terminal state is named by where its States are (asl-validator calls them fsm1, fsm2, … in
 * its own walk order), and a value outside an enum is shown with the values allowed there.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadToolFolders, ToolFolderError } from '../../lambdas/tools/tool-folder.ts';

const tool = { name: 'echo', description: 'Echoes its input', inputSchema: { type: 'object' }, invocation: 'async' };

describe('asl-validator findings, as the loader reports them', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'async-mcp-asl-findings-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function problemsOf(definition: unknown): Promise<string> {
    await mkdir(join(dir, 'echo'), { recursive: true });
    await writeFile(join(dir, 'echo', 'tool.json'), JSON.stringify(tool));
    await writeFile(join(dir, 'echo', 'definition.asl.json'), JSON.stringify(definition));
    const error = await loadToolFolders(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFolderError);
    return (error as ToolFolderError).message;
  }

  it('a machine without a terminal state is named by its States, not fsm1', async () => {
    const message = await problemsOf({ StartAt: 'A', States: { A: { Type: 'Pass', Next: 'B' }, B: { Type: 'Pass', Next: 'A' } } });
    expect(message).not.toMatch(/fsm\d/);
    expect(message).toContain('/States has no terminal state');
  });

  it('a branch without a terminal state is named by its path', async () => {
    const message = await problemsOf({
      StartAt: 'P',
      States: {
        P: {
          Type: 'Parallel',
          End: true,
          Branches: [
            { StartAt: 'X', States: { X: { Type: 'Succeed' } } },
            { StartAt: 'Y', States: { Y: { Type: 'Pass', Next: 'Y' } } },
          ],
        },
      },
    });
    expect(message).not.toMatch(/fsm\d/);
    expect(message).toContain('/States/P/Branches/1/States has no terminal state');
    expect(message).not.toContain('/States/P/Branches/0/States has');
  });

  it('a state Type outside the language lists the types it may be', async () => {
    const message = await problemsOf({ StartAt: 'A', States: { A: { Type: 'Tsak', Resource: 'arn:aws:states:::lambda:invoke', End: true } } });
    expect(message).not.toContain('must be equal to one of the allowed values');
    expect(message).toContain('/States/A/Type is "Tsak": must be one of Task, Pass, Choice, Wait, Succeed, Fail, Parallel, Map');
  });

  it('a QueryLanguage outside the language lists JSONPath and JSONata', async () => {
    const message = await problemsOf({ QueryLanguage: 'JSONPat', StartAt: 'A', States: { A: { Type: 'Pass', End: true } } });
    expect(message).not.toContain('must be equal to one of the allowed values');
    expect(message).toContain('/QueryLanguage is "JSONPat": must be one of JSONPath, JSONata');
  });
});
