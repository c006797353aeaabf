/**
 * `async-mcp init`: the project it writes into a temporary folder (removed after each test),
 * its refusal of a folder that is not empty, and the example tool answering, on the local
 * stack, the call the project's own test makes.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join as joinCall, MemoryRequestStateStore, startToolCall } from '../../client/index.ts';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { InitError, ourPackage, stackName, TEMPLATE_DIR, tarballSpec, writeProject } from '../../scripts/project-template.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const REPO = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

let scratch: string;
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'async-mcp-init-'));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

describe('init writes a project', () => {
  it('with the tools, the CDK app, the test, and a package.json on this version of async-mcp', async () => {
    const dir = join(scratch, 'my-server');
    const files = writeProject(dir);
    expect(files).toEqual(
      expect.arrayContaining([
        '.gitignore',
        'README.md',
        'bin/app.ts',
        'cdk.json',
        'package.json',
        'state-machines/count_words/definition.asl.json',
        'state-machines/count_words/tool.json',
        'test/tools.test.ts',
        'tsconfig.json',
      ]),
    );
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: 'my-server', type: 'module', scripts: { start: 'async-mcp start --watch', test: 'vitest run' } });
    // zod for the schemas a defineTool durable.ts defines, at the version this package uses.
    expect(pkg.dependencies).toEqual({ 'async-mcp': `^${ourPackage().version}`, zod: ourPackage().dependencies.zod });
    const ours = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    for (const name of ['aws-cdk-lib', 'constructs', 'aws-cdk', 'esbuild', 'vitest', 'typescript', 'tsx']) {
      expect(pkg.devDependencies[name], name).toBe(ours.devDependencies[name] ?? ours.dependencies[name]);
    }
    expect((await loadToolFolders(join(dir, 'state-machines'))).map((folder) => folder.config.name)).toEqual(['count_words']);
    expect(readFileSync(join(dir, 'bin', 'app.ts'), 'utf8')).toContain("?? 'MyServer'");
  });

  it('with a README whose heading comes first, then the two commands', () => {
    const dir = join(scratch, 'tools-server');
    writeProject(dir);
    const [heading, blank, fence, start, deploy] = readFileSync(join(dir, 'README.md'), 'utf8').split('\n');
    expect([heading, blank]).toEqual(['# tools-server', '']);
    expect(fence).toBe('```sh');
    expect(start).toMatch(/^npm install && npm start\s+#/);
    expect(deploy).toMatch(/^npx cdk deploy\s+#/);
  });

  it("with this repository's cdk.json context, so the construct synthesizes as it is tested here", () => {
    const template = JSON.parse(readFileSync(join(TEMPLATE_DIR, 'cdk.json'), 'utf8'));
    const ours = JSON.parse(readFileSync(join(REPO, 'cdk.json'), 'utf8'));
    expect(template.context).toEqual(ours.context);
    expect(template.app).toBe('npx tsx bin/app.ts');
  });

  it('depending on the tarball it ran from, by path, when run as npx --package ./async-mcp-<version>.tgz', () => {
    const tarball = join(scratch, `async-mcp-${ourPackage().version}.tgz`);
    writeFileSync(tarball, '');
    const env = { npm_command: 'exec', npm_config_package: `./async-mcp-${ourPackage().version}.tgz` };
    const dir = join(scratch, 'from-tarball');
    const spec = tarballSpec(dir, env, scratch);
    expect(spec).toBe(`file:../async-mcp-${ourPackage().version}.tgz`);
    writeProject(dir, ourPackage(), spec);
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies).toEqual({ 'async-mcp': spec, zod: ourPackage().dependencies.zod });
    // From the registry, or a tarball that is not there, the project depends on the version.
    expect(tarballSpec(dir, { npm_command: 'exec', npm_config_package: 'async-mcp' }, scratch)).toBeUndefined();
    expect(tarballSpec(dir, { npm_command: 'exec', npm_config_package: './async-mcp-9.9.9.tgz' }, scratch)).toBeUndefined();
    expect(tarballSpec(dir, { npm_config_package: './async-mcp-0.1.0.tgz' }, scratch)).toBeUndefined();
  });

  it('into an empty folder that exists', () => {
    const dir = join(scratch, 'empty');
    mkdirSync(dir);
    expect(writeProject(dir)).toContain('package.json');
  });

  it('named by its folder: an npm name, and a stack name CloudFormation takes', () => {
    writeProject(join(scratch, 'My Server!'));
    expect(JSON.parse(readFileSync(join(scratch, 'My Server!', 'package.json'), 'utf8')).name).toBe('my-server');
    expect(stackName('my-server')).toBe('MyServer');
    expect(stackName('2-tools')).toBe('Server2Tools');
  });
});

describe('init refuses a folder that is not empty', () => {
  it('naming the folder and what is in it, and writes nothing', () => {
    const dir = join(scratch, 'taken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    expect(() => writeProject(dir)).toThrow(InitError);
    expect(() => writeProject(dir)).toThrow(`${dir} is not empty (it has notes.txt)`);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('from the bin, with exit code 1 and the folder on stderr', async () => {
    const dir = join(scratch, 'taken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), '{}');
    const failed = await run(process.execPath, [join(REPO, 'bin', 'async-mcp.js'), 'init', dir]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`async-mcp init: ${dir} is not empty (it has package.json)`);
  }, 30_000);
});

describe("the example tool, on the local stack, answers its project's test", () => {
  it.each([
    { text: 'the quick brown fox', expected: { words: 4, longest: 'quick' } },
    { text: '  one\n', expected: { words: 1, longest: 'one' } },
    { text: '', expected: { words: 0, longest: '' } },
  ])(
    'count_words of $text',
    async ({ text, expected }) => {
      const stack = await startTestStack({ toolsDir: join(TEMPLATE_DIR, 'state-machines') });
      try {
        const store = new MemoryRequestStateStore();
        const handle = await startToolCall(stack.url.href, 'count_words', { text }, { store });
        expect((await joinCall(handle, { store }))?.structuredContent).toEqual(expected);
      } finally {
        await stack.close();
      }
    },
    30_000,
  );
});
