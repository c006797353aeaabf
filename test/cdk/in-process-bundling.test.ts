/**
 * How a synth bundles the functions: with esbuild's API inside the synth's own process, where
 * NodejsFunction's bundling started npx (and so npm), a shell and Node for each function. Without
 * esbuild the synth says how to install it; esbuild's own errors fail it, naming the file.
 */
import childProcess from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { BUNDLE_FILE } from '../../cdk/bundled-code.ts';
import { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { BundledFunction, projectRootOf } from '../../cdk/bundled-function.ts';
import { esbuildSource, INSTALL_ESBUILD } from '../../cdk/local-esbuild.ts';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import { NO_TRACING } from '../../cdk/server-tracing.ts';
import { BUNDLED_TOOLS_DIR } from '../../cdk/tool-asset-commands.ts';
import { workerBundling } from '../../cdk/worker-bundling.ts';
import { CARD_ASSET_FILE } from '../../lambdas/mcp/apps/card-resource.ts';
import { TRACING_SDK_PACKAGE } from '../../lambdas/observability/tracing-setup.ts';
import { buildStack, deployedTemplate, logicalIdOf, repoTools, resourcesOf, testApp } from './cdk-test-app.ts';

/** A state machine tool with a worker and a durable tool: every kind of function the stack has. */
async function someTools() {
  return (await repoTools()).filter((tool) => ['quick_calculation', 'count_primes_durable'].includes(tool.config.name));
}

type Launcher = 'spawnSync' | 'execFileSync' | 'execSync' | 'spawn' | 'execFile' | 'exec';
const LAUNCHERS: Launcher[] = ['spawnSync', 'execFileSync', 'execSync', 'spawn', 'execFile', 'exec'];

/**
 * Spies on child_process until the test ends; returns what reads the commands started so far.
 * The spies are on the module object that CommonJS callers (aws-cdk-lib) require, so their
 * calls are seen too.
 */
function recordCommands(): () => string[] {
  const spies = LAUNCHERS.map((name) => vi.spyOn(childProcess, name));
  return () => spies.flatMap((spy) => spy.mock.calls.map((args) => String(args[0])));
}

/** A command that is a package runner, a shell or Node itself. */
function isProcessPerFunction(command: string): boolean {
  const program = basename(command.trim().split(/\s+/)[0] ?? '');
  return command === process.execPath || ['npx', 'npm', 'bash', 'sh', 'node', 'cmd', 'powershell.exe'].includes(program);
}

const scratch: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe('a synth that bundles', () => {
  it('a synth bundles every function in its own process: no npx, shell or node is started per function', async () => {
    const tools = await someTools();
    const commands = recordCommands();
    const app = testApp({ bundle: true });
    // CDK stages (and so bundles) each function's asset as the function is defined.
    const stack = buildStack(app, tools);
    const assembly = app.synth().directory;

    expect(commands().filter(isProcessPerFunction)).toEqual([]);
    // And every function was bundled, with what it ships beside its bundle.
    const server = stack.server;
    const functions: IConstruct[] = [
      server.mcpFunction,
      server.statusSync!.function.function,
      server.events.deliveryFunction!.function,
      ...server.workerFunctions.values(),
      ...[...server.durableToolFunctions.values()].map((tool) => tool.function),
    ];
    expect(functions).toHaveLength(5);
    const resources = resourcesOf(deployedTemplate(stack), 'AWS::Lambda::Function');
    const assetDirOf = (fn: IConstruct) => join(assembly, `asset.${(resources[logicalIdOf(fn)]!.Properties.Code.S3Key as string).replace(/\.zip$/, '')}`);
    for (const fn of functions) {
      expect(existsSync(join(assetDirOf(fn), BUNDLE_FILE)), fn.node.path).toBe(true);
      expect(existsSync(join(assetDirOf(fn), `${BUNDLE_FILE}.map`)), fn.node.path).toBe(true);
      expect(existsSync(join(assetDirOf(fn), 'node_modules', TRACING_SDK_PACKAGE, 'index.js')), fn.node.path).toBe(true);
    }
    const mcp = assetDirOf(server.mcpFunction);
    expect(existsSync(join(mcp, 'node_modules', 'jose', 'index.js'))).toBe(true);
    expect(existsSync(join(mcp, CARD_ASSET_FILE))).toBe(true);
    for (const tool of tools) expect(existsSync(join(mcp, BUNDLED_TOOLS_DIR, tool.config.name, 'tool.json')), tool.config.name).toBe(true);
  });

  it('a synth without esbuild installed fails naming the package and how to install it, and tries no Docker', async () => {
    const tools = await someTools();
    vi.spyOn(esbuildSource, 'load').mockImplementation(() => {
      throw Object.assign(new Error("Cannot find module 'esbuild'\nRequire stack:\n- cdk/local-esbuild.ts"), { code: 'MODULE_NOT_FOUND' });
    });
    const commands = recordCommands();
    expect(() => buildStack(testApp({ bundle: true }), tools)).toThrow(
      new RegExp(`esbuild is not installed: .*optional peer dependency of async-mcp\\)\\. Install it in the project: ${INSTALL_ESBUILD}`),
    );
    expect(commands().filter((command) => /docker/.test(command))).toEqual([]);
  });

  it('gives two servers of one app, with other tools, each its own MCP asset: CDK caches assets by their bundling', async () => {
    const tools = await repoTools();
    const only = (name: string) => tools.filter((tool) => tool.config.name === name);
    // Bundling skipped: the cache decides which asset each function gets all the same.
    const app = testApp();
    const servers = [buildStack(app, only('quick_calculation')), new AsyncMcpStack(app, 'AsyncMcpOther', { tools: only('export_dataset') })];
    const [one, other] = servers.map((stack) => {
      const fn = resourcesOf(deployedTemplate(stack), 'AWS::Lambda::Function')[logicalIdOf(stack.server.mcpFunction)]!;
      return fn.Properties.Code.S3Key as string;
    });
    expect(one).not.toBe(other);
  });

  it("an esbuild error fails the synth with esbuild's message, which names the file", () => {
    mkdirSync(join(REPO_ROOT, '.scratch'), { recursive: true });
    // Under the repository (git-ignored .scratch/), where a worker module must be.
    const dir = mkdtempSync(join(REPO_ROOT, '.scratch', 'broken-worker-'));
    scratch.push(dir);
    const file = join(dir, 'broken.ts');
    writeFileSync(file, 'export const handler = async (event) => { return event. };\n');
    const stack = new Stack(testApp({ bundle: true }), 'BrokenWorker');
    const define = () =>
      new BundledFunction(stack, 'Broken', {
        ...workerBundling('broken', file),
        projectRoot: projectRootOf(file),
        description: 'a worker with a syntax error',
        logRetention: RetentionDays.ONE_DAY,
        tracing: NO_TRACING,
      });
    expect(define).toThrow(/broken\.ts:1:\d+: ERROR: /);
  });
});
