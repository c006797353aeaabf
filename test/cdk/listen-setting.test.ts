/** The `listen` prop and context value: whether the MCP Lambda serves `subscriptions/listen`. */
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambdas/handlers/environment.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { readAppSettings } from '../../cdk/app-settings.ts';
import { bareApp, logicalIdOf, repoTools, resourcesOf, synthTemplate } from './cdk-test-app.ts';

let tools: ToolFolder[];
beforeAll(async () => {
  tools = await repoTools();
});

describe('listen', () => {
  it('is on unless the context says listen=false, as a CLI string or a cdk.json boolean', () => {
    const listenFrom = (context: Record<string, unknown>) => readAppSettings(bareApp({ context }).node).listen;
    expect(listenFrom({})).toBe(true);
    expect(listenFrom({ listen: 'true' })).toBe(true);
    expect(listenFrom({ listen: 'false' })).toBe(false);
    expect(listenFrom({ listen: false })).toBe(false);
    expect(() => listenFrom({ listen: 'off' })).toThrow(/Invalid context "listen"/);
  });

  it('sets ASYNC_MCP_LISTEN on the MCP Lambda alone: 1 by default, 0 with listen false', () => {
    const on = synthTemplate(tools);
    const onFunctions = resourcesOf(on.template, 'AWS::Lambda::Function');
    expect(onFunctions[logicalIdOf(on.stack.server.mcpFunction)]!.Properties.Environment.Variables[ENV.listen]).toBe('1');
    for (const [id, fn] of Object.entries(onFunctions)) {
      if (id !== logicalIdOf(on.stack.server.mcpFunction)) expect(fn.Properties.Environment?.Variables?.[ENV.listen], id).toBeUndefined();
    }
    const off = synthTemplate(tools, { listen: false });
    const offFunctions = resourcesOf(off.template, 'AWS::Lambda::Function');
    expect(offFunctions[logicalIdOf(off.stack.server.mcpFunction)]!.Properties.Environment.Variables[ENV.listen]).toBe('0');
  });
});
