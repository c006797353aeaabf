/**
 * The ESM resolve hook behind `npm start -- --watch` (registered by fresh-modules.ts). A module
 * under one of the watched folders resolves to its URL plus the current reload generation, so
 * an import after a reload loads the files as they are now, the modules they import from those
 * folders included, while the modules already loaded stay for the runs that use them. Packages
 * and the server's own modules resolve as always: one copy, shared by every generation.
 */

/** @type {string[]} */
let roots = [];
/** @type {Int32Array} */
let generation = new Int32Array(1);

/** @param {{ roots: string[]; generation: SharedArrayBuffer }} data */
export function initialize(data) {
  roots = data.roots;
  // Shared memory: a reload's new generation is seen by the very next import, with no message to wait for.
  generation = new Int32Array(data.generation);
}

/**
 * @param {string} specifier
 * @param {object} context
 * @param {(specifier: string, context?: object) => Promise<{ url: string }>} nextResolve
 */
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const current = Atomics.load(generation, 0);
  if (current === 0 || !roots.some((root) => resolved.url.startsWith(root)) || resolved.url.includes('/node_modules/')) return resolved;
  const url = new URL(resolved.url);
  url.searchParams.set('async-mcp-reload', String(current));
  return { ...resolved, url: url.href };
}
