/**
 * ASYNC_MCP_EVENTS_LOOPBACK_CALLBACKS: the local as-deployed runner's switch to loopback webhook
 * callbacks. Unset (as the CDK template leaves it) is AWS mode, public https only; "1" is local
 * mode, where a loopback http callback passes and every other host is still refused before any
 * connection (an injected resolver that fails the test if asked).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkCallbackUrl } from '../../lambdas/events/webhooks/callback-url-guard.ts';
import { eventsCallbackModeFromEnv } from '../../lambdas/handlers/environment.ts';

const NEVER_RESOLVE = async (): Promise<never> => {
  throw new Error('the guard must refuse before looking the host up');
};

describe('eventsCallbackModeFromEnv', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('is AWS mode when unset, so a deployed function refuses a loopback http callback', async () => {
    vi.stubEnv('ASYNC_MCP_EVENTS_LOOPBACK_CALLBACKS', undefined);
    expect(eventsCallbackModeFromEnv()).toBe('aws');
    const check = await checkCallbackUrl('http://127.0.0.1:8080/hook', { mode: eventsCallbackModeFromEnv(), resolve: NEVER_RESOLVE });
    expect(check.ok).toBe(false);
  });

  it('"1" is local mode: a loopback http callback passes, any other host is refused before a lookup', async () => {
    vi.stubEnv('ASYNC_MCP_EVENTS_LOOPBACK_CALLBACKS', '1');
    expect(eventsCallbackModeFromEnv()).toBe('local');
    expect((await checkCallbackUrl('http://127.0.0.1:8080/hook', { mode: 'local', resolve: NEVER_RESOLVE })).ok).toBe(true);
    expect((await checkCallbackUrl('https://hooks.example.com/hook', { mode: 'local', resolve: NEVER_RESOLVE })).ok).toBe(false);
  });

  it('refuses a value it cannot read, naming the variable', () => {
    vi.stubEnv('ASYNC_MCP_EVENTS_LOOPBACK_CALLBACKS', 'yes');
    expect(() => eventsCallbackModeFromEnv()).toThrow(/ASYNC_MCP_EVENTS_LOOPBACK_CALLBACKS must be 1 or 0/);
  });
});
