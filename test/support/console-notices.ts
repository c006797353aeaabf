/**
 * What a library prints with console.info, warn or error on purpose (CDK's synth-time
 * annotations and template validation, oidc-provider's notices): the calls whose text matches `expected` are kept off
 * the output until the test ends, for the test to assert; any other call prints as before.
 */
import { format } from 'node:util';
import { onTestFinished, vi } from 'vitest';

/** CDK's synth report of the open Function URL's warning annotation. */
export const FUNCTION_URL_NONE_NOTICE = /Annotation::async-mcp:function-url-auth-none/;

/** Takes the matching console[method] calls until the test ends; returns a reader of their texts. */
export function consoleNotices(method: 'info' | 'warn' | 'error', expected: RegExp): () => string[] {
  const original = console[method];
  const taken: string[] = [];
  const spy = vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
    const text = format(...args);
    if (expected.test(text)) taken.push(text);
    else original.apply(console, args);
  });
  onTestFinished(() => spy.mockRestore());
  return () => [...taken];
}
