/** ASYNC_MCP_HANDLE_TOOLS: how the Lambda reads whether handle tools are on. */
import { afterEach, describe, expect, it } from 'vitest';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { handleToolsFromEnv } from '../../lambdas/handlers/environment.ts';

const saved = process.env[ENV.handleTools];
afterEach(() => {
  if (saved === undefined) delete process.env[ENV.handleTools];
  else process.env[ENV.handleTools] = saved;
});

describe('handleToolsFromEnv', () => {
  it('reads ASYNC_MCP_HANDLE_TOOLS', () => {
    expect(ENV.handleTools).toBe('ASYNC_MCP_HANDLE_TOOLS');
  });

  it('is off when set to "0" or "false"', () => {
    for (const value of ['0', 'false']) {
      process.env[ENV.handleTools] = value;
      expect(handleToolsFromEnv()).toBe(false);
    }
  });

  it('is on by default, and when set to "", "1" or "true"', () => {
    delete process.env[ENV.handleTools];
    expect(handleToolsFromEnv()).toBe(true);
    for (const value of ['', '1', 'true']) {
      process.env[ENV.handleTools] = value;
      expect(handleToolsFromEnv()).toBe(true);
    }
  });

  it('fails the cold start on anything else, naming the variable', () => {
    process.env[ENV.handleTools] = 'yes';
    expect(() => handleToolsFromEnv()).toThrow('Environment variable ASYNC_MCP_HANDLE_TOOLS must be 1 or 0');
  });
});
