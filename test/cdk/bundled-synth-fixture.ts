/**
 * One bundled synth for a whole test file: the stack over the tools it is given, really bundled
 * with the local esbuild, its deployed template and the cloud assembly, which is removed after
 * the file's last test.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll } from 'vitest';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { buildStack, deployedTemplate, logicalIdOf, resourcesOf, testApp } from './cdk-test-app.ts';

export interface BundledSynth {
  tools: ToolFolder[];
  stack: AsyncMcpStack;
  /** The deployed template: the workers' functions in nested stacks too. */
  template: Template;
  assemblyDir: string;
  /** The asset directory of a function's code (`asset.<hash>` beside the templates). */
  assetDirOf(fn: IConstruct): string;
}

/** Registers the file's hooks; the fields are set from its `beforeAll` on. */
export function bundledSynthFixture(loadTools: () => Promise<ToolFolder[]>): BundledSynth {
  const synth = {
    assetDirOf(fn: IConstruct): string {
      const resource = resourcesOf(synth.template, 'AWS::Lambda::Function')[logicalIdOf(fn)];
      if (!resource) throw new Error(`${fn.node.path} is no function of the template`);
      const code = resource.Properties.Code as { S3Key: string };
      return join(synth.assemblyDir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    },
  } as BundledSynth;
  // Bundling every function with esbuild takes minutes on a busy machine.
  beforeAll(async () => {
    synth.tools = await loadTools();
    const app = testApp({ bundle: true });
    synth.stack = buildStack(app, synth.tools);
    synth.assemblyDir = app.synth().directory;
    synth.template = deployedTemplate(synth.stack);
  }, 180_000);
  afterAll(() => {
    if (synth.assemblyDir) rmSync(synth.assemblyDir, { recursive: true, force: true });
  });
  return synth;
}
