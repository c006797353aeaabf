/**
 * Rooms that hold one idea: no source file outside test/ grows past 400 lines, and the
 * operations core speaks no MCP wire names (DESIGN: a dialect file is the only place its wire
 * names appear; the core's questions are opaque, read through the InputProtocol port).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');
const SOURCE_DIRS = ['lambdas', 'local', 'client', 'cdk', 'bench', 'scripts', 'bin', 'examples', 'state-machines'];
const MAX_LINES = 400;
const WIRE_NAMES = /elicitation\/|sampling\/|roots\/|tasks\/|tools\/async|inputResponses/;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(?:ts|mts|mjs|js|cjs)$/.test(entry.name) && !entry.parentPath.includes('node_modules'))
    .map((entry) => join(entry.parentPath, entry.name));
}

function lineCount(file: string): number {
  return readFileSync(file, 'utf8').replace(/\n$/, '').split('\n').length;
}

describe('source layout', () => {
  it(`no source file outside test/ is over ${MAX_LINES} lines`, () => {
    const files = SOURCE_DIRS.flatMap(sourceFiles);
    expect(files.length, 'the source folders were read').toBeGreaterThan(200);
    const long = files.filter((file) => lineCount(file) > MAX_LINES).map((file) => `${relative(root, file)}: ${lineCount(file)} lines`);
    expect(long).toEqual([]);
  });

  it('the operations core names no MCP method or wire field, outside comments', () => {
    const files = sourceFiles('lambdas/operations');
    expect(files.length, 'the core was read').toBeGreaterThan(10);
    const found = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, index) => ({ line, index }))
        .filter(({ line }) => WIRE_NAMES.test(line) && !/^\s*(\/\/|\*|\/\*)/.test(line))
        .map(({ line, index }) => `${relative(root, file)}:${index + 1}: ${line.trim()}`),
    );
    expect(found).toEqual([]);
  });
});
