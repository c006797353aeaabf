/**
 * The paths a command's help shows, as the user can type them where they ran it: a project's
 * folders relative to it (`./workers`), and the docs where the package is installed
 * (`node_modules/async-mcp/docs/tools.md` in a project, `docs/tools.md` in a clone).
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** The package's root: the nearest folder above this module with a package.json (dist/ has none). */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

const DOCS_DIR = join(packageRoot(import.meta.dirname), 'docs');

/** `path` relative to `cwd` when it is inside it (`./workers`, or without `./` when `dot` is false), else absolute. */
export function shownPath(path: string, { cwd = process.cwd(), dot = true }: { cwd?: string; dot?: boolean } = {}): string {
  const absolute = resolve(cwd, path);
  const inside = relative(cwd, absolute);
  if (inside === '') return '.';
  if (inside.startsWith('..') || isAbsolute(inside)) return absolute;
  return dot ? `./${inside}` : inside;
}

/** A page of the docs the package ships (`tools.md`, `local.md#tracing`), as a path from `cwd`. */
export function docsPath(page: string, cwd: string = process.cwd()): string {
  return shownPath(join(DOCS_DIR, page), { cwd, dot: false });
}
