/**
 * docs/tools.md "Test a tool (`async-mcp/testing`)", run as a reader copies it: the page's test
 * file, with the package's name pointing at the kit's source, is this file's tests. It sits in
 * the repository's scratch directory, so `npm test`'s working directory (the repository, whose
 * state-machines/ hold approve_deployment) is the project it tests.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll } from 'vitest';
import { codeBlocks, page } from '../support/markdown-blocks.ts';

const SCRATCH = resolve(import.meta.dirname, '../../.scratch');
const example = codeBlocks(page('docs/tools.md')).find((block) => block.lang === 'ts' && block.text.includes("from 'async-mcp/testing'"));
if (!example) throw new Error("docs/tools.md shows no test that imports 'async-mcp/testing'");

mkdirSync(SCRATCH, { recursive: true });
const dir = mkdtempSync(join(SCRATCH, 'doc-kit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'doc-example.ts');
writeFileSync(file, example.text.replace("from 'async-mcp/testing'", `from ${JSON.stringify(resolve(import.meta.dirname, '../../testing/index.ts'))}`));
// Its beforeAll, afterAll and tests register here, as this file's.
await import(pathToFileURL(file).href);
