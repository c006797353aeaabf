/** ASYNC_MCP_LISTEN, as the MCP function reads it (lambdas/handlers/environment.ts). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listenFromEnv } from '../../lambdas/handlers/environment.ts';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('ASYNC_MCP_LISTEN', () => {
  it.each([[undefined], [''], ['1'], ['true']])('%s leaves subscriptions/listen on', (value) => {
    if (value === undefined) vi.stubEnv('ASYNC_MCP_LISTEN', undefined as unknown as string);
    else vi.stubEnv('ASYNC_MCP_LISTEN', value);
    expect(listenFromEnv()).toBe(true);
  });

  it.each([['0'], ['false']])('%s turns it off', (value) => {
    vi.stubEnv('ASYNC_MCP_LISTEN', value);
    expect(listenFromEnv()).toBe(false);
  });

  it('anything else fails the cold start, naming the variable', () => {
    vi.stubEnv('ASYNC_MCP_LISTEN', 'yes');
    expect(() => listenFromEnv()).toThrow('Environment variable ASYNC_MCP_LISTEN must be 1 or 0');
  });
});
