/** `cdk deploy -c key=value` settings: defaults, string values from the CLI, clear errors. */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { readAppSettings } from '../../cdk/app-settings.ts';
import { DEFAULT_TOOLS_DIR } from '../../cdk/repo-paths.ts';

const elsewhere = resolve('elsewhere');
const settingsFrom = (context: Record<string, unknown>, cwd = elsewhere) => readAppSettings(new App({ context }).node, cwd);

describe('readAppSettings', () => {
  it('defaults to the repository tools, an IAM-authenticated URL and no tracing', () => {
    expect(settingsFrom({})).toEqual({
      stackName: 'AsyncMcp',
      toolsDir: DEFAULT_TOOLS_DIR,
      functionUrlAuthType: FunctionUrlAuthType.AWS_IAM,
      tracing: false,
    });
  });

  it('takes the strings the CLI passes', () => {
    expect(
      settingsFrom({ stackName: 'AsyncMcpDev', toolsDir: 'my-tools', workersDir: 'my-workers', functionUrlAuthType: 'NONE', tracing: 'true' }, elsewhere),
    ).toEqual({
      stackName: 'AsyncMcpDev',
      toolsDir: resolve(elsewhere, 'my-tools'),
      workersDir: resolve(elsewhere, 'my-workers'),
      functionUrlAuthType: FunctionUrlAuthType.NONE,
      tracing: true,
    });
  });

  it('names the context key it cannot use', () => {
    expect(() => settingsFrom({ functionUrlAuthType: 'none' })).toThrow(/Invalid context "functionUrlAuthType"/);
    expect(() => settingsFrom({ tracing: 'yes' })).toThrow(/Invalid context "tracing"/);
    expect(() => settingsFrom({ stackName: 'no spaces' })).toThrow(/Invalid context "stackName"/);
  });
});
