/**
 * How every Lambda of this repository is bundled: one definition of esbuild's options that the
 * CDK construct (bundled-code.ts), the bench and the tests all pass to esbuild's API, so what is
 * measured is what is deployed. Free of aws-cdk-lib, so that importing it is cheap.
 */
import { join, resolve } from 'node:path';
import type { BuildOptions } from 'esbuild';
import { SHIPPED_TRACING_SDK_FLAG, TRACING_SDK_PACKAGE } from '../lambdas/observability/tracing-setup.ts';
import { MCP_HTTP_ENTRY, REPO_ROOT } from './repo-paths.ts';

// ESM bundles of CommonJS dependencies call `require` for Node built-ins; give them one.
const REQUIRE_BANNER = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/** The AWS SDK packages the handlers import statically, each loaded through a require shim. */
export const REQUIRED_SDK_PACKAGES: readonly string[] = [
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/client-lambda',
  '@aws-sdk/client-sfn',
  '@aws-sdk/client-sqs',
  '@aws-sdk/util-dynamodb',
];

/**
 * Module substitutions, as esbuild's alias takes them, by absolute path: a function bundled from a
 * user's project (its workers, its durable.ts) resolves them in the package all the same.
 * - The MCP SDK's Node shims carry an Ajv-backed default validator that this server never
 *   calls; ours replaces it, keeping one JSON Schema engine in the bundle.
 * - The AWS SDK stays external, but is loaded with `require` (cdk/aws-sdk-require/), which
 *   costs a cold start about half of what an ESM import of the same CommonJS costs.
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  '@modelcontextprotocol/server/_shims': join(REPO_ROOT, 'lambdas/tools/default-json-schema-validator.ts'),
  ...Object.fromEntries(REQUIRED_SDK_PACKAGES.map((name) => [name, join(REPO_ROOT, `cdk/aws-sdk-require/${name.replace('@aws-sdk/', '')}.cjs`)])),
};

/**
 * Lazy modules built from one of our modules rather than a package, by the name the bundles
 * import them by: OpenTelemetry's SDK, which a function loads only where its environment asks
 * for tracing (lambdas/observability/tracing-setup.ts).
 */
export const LAZY_MODULE_ENTRIES: Readonly<Record<string, string>> = {
  [TRACING_SDK_PACKAGE]: join(REPO_ROOT, 'lambdas/observability/tracing-sdk.ts'),
};

/**
 * Packages the MCP Lambda needs for some requests only: jose verifies OAuth tokens, and a
 * server without OAuth never loads it; the tracing SDK, which a function without tracing never
 * loads. Left out of the bundle (parsed at every cold start) and shipped beside it, where Node
 * finds the bundle's `import()`. (A poll's GetItem is signed with node:crypto alone,
 * lambdas/aws/hot-read-signer.ts.)
 */
export const MCP_LAZY_MODULES: readonly string[] = ['jose', TRACING_SDK_PACKAGE];

/** The packages the bundle of `entry` (absolute, or relative to the repository root) leaves out, to ship beside it. */
export function lazyModulesOf(entry: string): readonly string[] {
  return resolve(REPO_ROOT, entry) === MCP_HTTP_ENTRY ? MCP_LAZY_MODULES : [TRACING_SDK_PACKAGE];
}

/** The esbuild settings every function shares. */
export const LAMBDA_BUNDLING = {
  /** The Node version the bundle targets, matching FUNCTION_RUNTIME in bundled-function.ts. */
  target: 'node24',
  format: 'esm',
  mainFields: ['module', 'main'],
  /** Provided by the Lambda runtime. */
  externalModules: ['@aws-sdk/*'],
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  banner: REQUIRE_BANNER,
  /** The tracing SDK is imported by name, from beside the bundle (LAZY_MODULE_ENTRIES), never bundled. */
  define: { [`process.env.${SHIPPED_TRACING_SDK_FLAG}`]: '"1"' },
} as const;

/**
 * `NODE_OPTIONS` of every function: stack traces in logs name source lines. It costs the
 * cold start the parse of the bundle's source map (the bench measures with it).
 */
export const FUNCTION_NODE_OPTIONS = '--enable-source-maps';

/** What one function's bundle adds to the shared settings (a worker's, worker-bundling.ts). */
export interface OwnBundling {
  /** Module substitutions, as esbuild's alias takes them, beside BUNDLE_ALIASES. */
  readonly aliases?: Readonly<Record<string, string>>;
  /** Expressions replaced at bundling, as esbuild's define takes them, beside LAMBDA_BUNDLING's. */
  readonly define?: Readonly<Record<string, string>>;
}

/**
 * The options of esbuild's `build` API for the bundle of `entry`, resolved from the project root
 * `root`; `lazyModules` are left out, as BundledFunction's `lazyModules` prop leaves them.
 */
export function esbuildOptions(entry: string, outfile: string, root: string, lazyModules: readonly string[] = [], own: OwnBundling = {}): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: LAMBDA_BUNDLING.target,
    format: LAMBDA_BUNDLING.format,
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    external: [...LAMBDA_BUNDLING.externalModules, ...lazyModules],
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: LAMBDA_BUNDLING.sourceMap,
    sourcesContent: LAMBDA_BUNDLING.sourcesContent,
    banner: { js: LAMBDA_BUNDLING.banner },
    define: { ...LAMBDA_BUNDLING.define, ...own.define },
    alias: { ...BUNDLE_ALIASES, ...own.aliases },
    logLevel: 'warning',
  };
}

/**
 * How a lazily loaded package is built into an asset: `node_modules/<name>/index.js`, which
 * Node resolves for `import('<name>')` from the bundle beside it. CommonJS, so it needs no
 * package.json; esbuild annotates its export names for ESM importers. One of our modules
 * (LAZY_MODULE_ENTRIES) carries its own copy of `@opentelemetry/api`: the API keeps what is
 * registered on a global that every copy of the same version shares.
 */
export function lazyModuleOptions(name: string, assetDir: string, root: string): BuildOptions {
  return {
    entryPoints: [LAZY_MODULE_ENTRIES[name] ?? name],
    outfile: join(assetDir, 'node_modules', name, 'index.js'),
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: LAMBDA_BUNDLING.target,
    format: 'cjs',
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    external: [...LAMBDA_BUNDLING.externalModules],
    minify: LAMBDA_BUNDLING.minify,
    logLevel: 'warning',
  };
}
