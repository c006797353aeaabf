/**
 * The ESM resolve hook of a local Lambda sandbox (registered with `module.register` in
 * lambda-sandbox.mjs). A deployed function sees two module roots: its asset (/var/task) and the
 * runtime's own node_modules (/var/runtime), which holds the AWS SDK v3. So, for an import made
 * by a file of the asset:
 * - `@aws-sdk/*` and `@smithy/*` that the asset does not ship resolve from this repository's
 *   node_modules, standing in for /var/runtime;
 * - any other package must be in the asset: one found only above it (for instance in the
 *   repository, when the assembly sits inside it) is "not found", as it is in Lambda, so a module
 *   the bundle forgot fails here too.
 */
import { builtinModules } from 'node:module';
import { pathToFileURL } from 'node:url';

let assetUrl = '';
let runtimeParentUrl = '';

/** @param {{ assetDir: string; repoRoot: string }} data */
export function initialize(data) {
  assetUrl = pathToFileURL(data.assetDir.endsWith('/') ? data.assetDir : `${data.assetDir}/`).href;
  runtimeParentUrl = pathToFileURL(`${data.repoRoot.replace(/\/$/, '')}/package.json`).href;
}

const RUNTIME_PACKAGES = /^@(aws-sdk|smithy)\//;

/**
 * @param {string} specifier
 * @param {{ parentURL?: string }} context
 * @param {(specifier: string, context?: object) => Promise<{ url: string }>} nextResolve
 */
export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL ?? '';
  if (!parent.startsWith(assetUrl) || !isBare(specifier)) return nextResolve(specifier, context);
  let resolved;
  try {
    resolved = await nextResolve(specifier, context);
  } catch (error) {
    if (RUNTIME_PACKAGES.test(specifier)) return nextResolve(specifier, { ...context, parentURL: runtimeParentUrl });
    throw error;
  }
  if (resolved.url.startsWith(assetUrl) || resolved.url.startsWith('node:')) return resolved;
  if (RUNTIME_PACKAGES.test(specifier)) return nextResolve(specifier, { ...context, parentURL: runtimeParentUrl });
  throw notFound(specifier, parent);
}

/** A package name, not a relative path, URL or Node built-in. */
function isBare(specifier) {
  if (/^(\.|\/|[a-z]+:)/i.test(specifier)) return false;
  return !builtinModules.includes(specifier);
}

function notFound(specifier, parent) {
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
  const error = new Error(`Cannot find package '${name}' imported from ${new URL(parent).pathname}`);
  error.code = 'ERR_MODULE_NOT_FOUND';
  return error;
}
