/**
 * `npm run validate-tools` (issue 28): a JSON error is named by line and column, and every
 * problem of a folder is printed in one run, an unknown worker beside the definition's ASL errors.
 * A durable tool's durable.ts (issue 38) is compiled, not run, and its problems named the same way.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonText } from '../../lambdas/tools/json-text.ts';

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} tool`,
  inputSchema: { type: 'object' },
  invocation: 'async',
  ...extra,
});
const getItem = {
  StartAt: 'GetItem',
  States: { GetItem: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:getItem', Parameters: { TableName: 't', Key: {} }, End: true } },
};

/** One folder per fault, checked by one run of the script (a Node process costs seconds here). */
const FOLDERS: Record<string, Record<string, string | object>> = {
  // Line 3 lacks the comma after "description": the error is where "inputSchema" starts.
  commas: {
    'tool.json': '{\n  "name": "commas",\n  "description": "Missing a comma"\n  "inputSchema": { "type": "object" },\n  "invocation": "async"\n}\n',
    'definition.asl.json': { StartAt: 'Done', States: { Done: { Type: 'Succeed' } } },
  },
  trailing: {
    'tool.json': tool('trailing'),
    'definition.asl.json': '{\n  "StartAt": "Done",\n  "States": { "Done": { "Type": "Succeed" } },\n}\n',
    'mocks.json': '{\n  "StateMachines": {\n',
  },
  two_faults: {
    'tool.json': tool('two_faults'),
    'definition.asl.json': { StartAt: 'Nowhere', States: { Work: { Type: 'Task', Resource: '${Worker_no_such_worker}', End: true } } },
  },
  reader: { 'tool.json': tool('reader', { invocation: 'sometimes' }), 'definition.asl.json': getItem },
  // A missing parenthesis on line 3; running the module would throw before anything is checked.
  durable_syntax: {
    'tool.json': tool('durable_syntax'),
    'durable.ts': "throw new Error('ran');\nexport const handler = async () => {\n  return Math.max(1, 2;\n};\n",
  },
  durable_and_definition: {
    'tool.json': tool('durable_and_definition', { stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:orders' }),
    'durable.ts': 'export const main = async () => ({});\n',
    'definition.asl.json': { StartAt: 'Done', States: { Done: { Type: 'Succeed' } } },
  },
};

let dir: string;
let run: { status: number | null; stderr: string };
/** The printed problems of one folder's file. */
const linesOf = (folder: string, file: string) => run.stderr.split('\n').filter((line) => line.includes(`${join(folder, file)}: `));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'validate-tools-'));
  const toolsDir = join(dir, 'tools');
  for (const [name, files] of Object.entries(FOLDERS)) {
    await mkdir(join(toolsDir, name), { recursive: true });
    for (const [file, content] of Object.entries(files)) {
      await writeFile(join(toolsDir, name, file), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    }
  }
  // As `npm run validate-tools -- <dir> --workers <dir>` runs it, in a fresh Node process.
  const spawned = spawnSync(process.execPath, ['--import', 'tsx', join('scripts', 'validate-tools.ts'), toolsDir, '--workers', join(dir, 'workers')], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  run = { status: spawned.status, stderr: spawned.stderr };
}, 150_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm run validate-tools', () => {
  it('exits 1, having found the problems', () => {
    expect(run.status).toBe(1);
  });

  it('names a JSON error in tool.json by line and column, not by character position', () => {
    const [line] = linesOf('commas', 'tool.json');
    expect(line).toMatch(/not valid JSON at line 4, column 3: /);
    expect(line).not.toMatch(/position/);
  });

  it('names a trailing comma in a definition, and a truncated mocks.json, by line and column', () => {
    expect(linesOf('trailing', 'definition.asl.json')[0]).toMatch(/not valid JSON at line 4, column 1: /);
    expect(linesOf('trailing', 'mocks.json')[0]).toMatch(/not valid JSON at line 3, column 1: .*end of the text/);
  });

  it("prints an unknown worker in the same run as the definition's ASL errors", () => {
    const problems = linesOf('two_faults', 'definition.asl.json');
    expect(problems.some((l) => l.includes('not valid Amazon States Language'))).toBe(true);
    expect(problems.some((l) => l.includes('${Worker_no_such_worker} has no module'))).toBe(true);
  });

  it("names a durable.ts that does not compile by esbuild's file, line and column", () => {
    const [line, ...rest] = linesOf('durable_syntax', 'durable.ts');
    expect(rest).toEqual([]);
    expect(line).toMatch(/durable_syntax\/durable\.ts: \S*durable_syntax\/durable\.ts:3:23: Expected "\)" but found ";"$/);
  });

  it("prints a durable folder's own problem (both files) beside its tool.json's and durable.ts's, together", () => {
    const lines = run.stderr.split('\n').filter((line) => line.includes('durable_and_definition'));
    expect(lines).toEqual([
      expect.stringMatching(/durable_and_definition\/tool\.json: stateMachineArn does not apply: /),
      expect.stringMatching(/durable_and_definition: holds both definition\.asl\.json and durable\.ts: keep one/),
      expect.stringMatching(/durable_and_definition\/durable\.ts: must export handler .*; it exports main$/),
    ]);
  });

  it('prints a Task that cannot run locally in the same run as an invalid tool.json', () => {
    expect(linesOf('reader', 'tool.json').some((l) => l.includes('invocation'))).toBe(true);
    expect(linesOf('reader', 'definition.asl.json').some((l) => l.includes('state "GetItem"') && l.includes('mocks.json'))).toBe(true);
  });
});

describe('parseJsonText', () => {
  it.each([
    ['{"a": 1 "b": 2}', 1, 9],
    ['{\n  "a": 1,\n}', 3, 1],
    ['[1, 2,,]', 1, 7],
    ['{"a": tru}', 1, 7],
    ['{"a": "x\ny"}', 1, 9],
    ['{"a": 01}', 1, 8],
    ['{"a": 1}}', 1, 9],
    ['\r\n\r\n  nope', 3, 3],
    ['', 1, 1],
    ['{"a": "\\q"}', 1, 8],
  ])('%j is invalid at line %i, column %i', (text, line, column) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(parseJsonText(text)).toMatchObject({ ok: false, line, column });
  });

  it.each(['{}', ' [1, -2.5e+3, "a\\u00e9\\n", true, false, null, {"x": []}] ', '"\u00e9"', '0'])('%j parses as JSON.parse does', (text) => {
    expect(parseJsonText(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });
});
