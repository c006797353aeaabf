/**
 * What the installed package needs to run a project's tools in the test's own process, as the
 * bin's `start` sets it up: tsx for the project's TypeScript (durable.ts, workers), and the
 * bin's hooks that answer our compiled modules' imports of a neighbour by its source name
 * (the local stack imports its built-in workers as `….ts`) with the compiled one. From the
 * sources (a clone, under a runner that compiles TypeScript) there is nothing to set up.
 */
import { register } from 'node:module';

/** Set once per process, whichever copy of this module sets it. */
const REGISTERED = Symbol.for('async-mcp/testing/module-hooks');

/** Registers tsx and the compiled-module hooks once, when this module runs compiled (from dist/). */
export async function useModuleHooks(): Promise<void> {
  if (!import.meta.url.endsWith('.js')) return;
  const scope = globalThis as { [REGISTERED]?: Promise<void> };
  scope[REGISTERED] ??= (async () => {
    const tsx = await import('tsx/esm/api');
    tsx.register();
    // Registered last, so it resolves first: a compiled module's `….ts` neighbour before tsx looks for it.
    register('../../bin/compiled-modules-hooks.mjs', import.meta.url);
  })();
  await scope[REGISTERED];
}
