/** Where new-tool writes a new tool's test, and what it holds (scripts/new-tool-test-file.ts). */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testText, toolTestFile } from '../../scripts/new-tool-test-file.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'async-mcp-new-tool-test-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function project(name: string, testsDir: string): void {
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name }));
  mkdirSync(join(root, testsDir), { recursive: true });
}

const scaffold = (overrides: Partial<Parameters<typeof toolTestFile>[0]> = {}) =>
  toolTestFile({ name: 'ask_me', input: true, durable: false, toolsDir: join(root, 'state-machines'), workersDir: join(root, 'workers'), ...overrides });

describe('toolTestFile', () => {
  it("a project's test goes to test/<tool>.test.ts and imports async-mcp/testing, with the default folders left to the kit", () => {
    project('my-server', 'test');
    const [file, text] = scaffold() ?? [];
    expect(file).toBe(join(root, 'test', 'ask_me.test.ts'));
    expect(text).toContain("from 'async-mcp/testing'");
    expect(text).toContain('startTestServer()');
  });

  it("this repository's goes to test/e2e and imports the kit from source", () => {
    project('async-mcp', 'test/e2e');
    const [file, text] = scaffold({ workersDir: join(root, 'lambdas', 'handlers', 'workers') }) ?? [];
    expect(file).toBe(join(root, 'test', 'e2e', 'ask_me.test.ts'));
    expect(text).toContain("from '../../testing/index.ts'");
    expect(text).toContain('startTestServer()');
  });

  it('other folders than the defaults are passed to startTestServer, relative to the project', () => {
    project('my-server', 'test');
    const [, text] = scaffold({ toolsDir: join(root, 'tools'), workersDir: join(root, 'src', 'workers') }) ?? [];
    expect(text).toContain('startTestServer({ tools: "tools", workers: "src/workers" })');
  });

  it('no test when the tools folder is not in a project, or the project has no test folder', () => {
    expect(scaffold()).toBeUndefined();
    writeFileSync(join(root, 'package.json'), '{"name":"my-server"}');
    expect(scaffold()).toBeUndefined();
  });

  it('refuses to overwrite a test of that name', () => {
    project('my-server', 'test');
    writeFileSync(join(root, 'test', 'ask_me.test.ts'), '');
    expect(() => scaffold()).toThrow(/ask_me\.test\.ts already exists/);
  });
});

describe('testText', () => {
  it('for --input: one test accepts the confirm question by key and checks the echo, one declines and expects a tool error', () => {
    const text = testText({ name: 'ask_me', input: true, durable: true }, 'async-mcp/testing');
    expect(text).toContain('answers: { confirm: {} }');
    expect(text).toContain(`toEqual([['confirm', 'Echo "hello"?']])`);
    expect(text).toContain("answers: { confirm: 'decline' }");
    expect(text).toContain('a durable function');
  });

  it('without --input: one call, no answers', () => {
    const text = testText({ name: 'echo', input: false, durable: false }, 'async-mcp/testing');
    expect(text).not.toContain('answers');
    expect(text).toContain("server.call('echo', { text: 'hello' })");
  });
});
