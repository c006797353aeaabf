/**
 * Loads a user's modules afresh after a reload (`npm start -- --watch`). ES modules are cached
 * by URL for the life of the process, so each reload starts a new generation and a resolve hook
 * (fresh-modules-hook.mjs) gives every module under the watched folders a URL of that
 * generation: the next import of a worker or a durable.ts reads it, and what it imports from
 * those folders, as saved. Modules of earlier generations stay loaded for the runs that started
 * with them. CommonJS modules are cached by file name instead, so theirs are forgotten.
 */
import { realpathSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/** A generation counter for the modules under some folders. */
export interface FreshModules {
  /** From now on, an import of a module under the folders loads it anew (once per generation). */
  renew(): void;
}

const require = createRequire(import.meta.url);

/** Registers the hook for `folders` (registered once, on the first renew: a run that never reloads pays nothing). */
export function freshModulesUnder(folders: readonly string[]): FreshModules {
  const dirs = folders.map((folder) => {
    const absolute = resolve(folder);
    let real = absolute;
    try {
      real = realpathSync(absolute);
    } catch {
      // A folder that does not exist yet holds nothing to reload.
    }
    return real.endsWith(sep) ? real : `${real}${sep}`;
  });
  const buffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const generation = new Int32Array(buffer);
  let registered = false;
  return {
    renew() {
      if (!registered) {
        register('./fresh-modules-hook.mjs', import.meta.url, { data: { roots: dirs.map((dir) => pathToFileURL(dir).href), generation: buffer } });
        registered = true;
      }
      Atomics.add(generation, 0, 1);
      for (const file of Object.keys(require.cache)) {
        if (dirs.some((dir) => file.startsWith(dir)) && !file.includes(`${sep}node_modules${sep}`)) delete require.cache[file];
      }
    },
  };
}
