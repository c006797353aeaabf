// Module hooks of the installed package's commands. Our compiled modules still name a few of
// their neighbours by source file, as a clone has them (the local stack imports its built-in
// workers as lambdas/handlers/workers/<name>.ts): inside dist/, such a name resolves to the
// compiled module beside it. Everything else resolves as it would without the hooks.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIST = new URL('../dist/', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith(DIST) && specifier.endsWith('.ts')) {
    const compiled = `${specifier.slice(0, -'.ts'.length)}.js`;
    if (existsSync(fileURLToPath(compiled))) return nextResolve(compiled, context);
  }
  return nextResolve(specifier, context);
}
