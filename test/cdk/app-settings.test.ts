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
      handleTools: false,
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
      handleTools: false,
    });
  });

  it('turns on handle tools with handleTools=true, as a CLI string or a cdk.json boolean', () => {
    expect(settingsFrom({ handleTools: 'true' }).handleTools).toBe(true);
    expect(settingsFrom({ handleTools: true }).handleTools).toBe(true);
    expect(() => settingsFrom({ handleTools: 'yes' })).toThrow(/Invalid context "handleTools"/);
  });

  it('takes the active-operation limit and the reserved concurrencies, as CLI strings or cdk.json numbers', () => {
    const limits = { maxActiveOperations: 25, mcpReservedConcurrency: 50, statusSyncReservedConcurrency: 5, workerReservedConcurrency: 20 };
    const asStrings = Object.fromEntries(Object.entries(limits).map(([key, value]) => [key, String(value)]));
    expect(settingsFrom(asStrings)).toMatchObject(limits);
    expect(settingsFrom(limits)).toMatchObject(limits);
  });

  it('names the context key it cannot use', () => {
    expect(() => settingsFrom({ functionUrlAuthType: 'none' })).toThrow(/Invalid context "functionUrlAuthType"/);
    expect(() => settingsFrom({ tracing: 'yes' })).toThrow(/Invalid context "tracing"/);
    expect(() => settingsFrom({ stackName: 'no spaces' })).toThrow(/Invalid context "stackName"/);
    for (const bad of ['0', '-1', '2.5', 'lots', 0]) {
      expect(() => settingsFrom({ maxActiveOperations: bad }), String(bad)).toThrow(/Invalid context "maxActiveOperations"/);
      expect(() => settingsFrom({ mcpReservedConcurrency: bad }), String(bad)).toThrow(/Invalid context "mcpReservedConcurrency"/);
    }
  });
});
