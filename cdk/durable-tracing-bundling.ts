/**
 * What a durable tool's function gets so that its spans reach the operation's trace in AWS: the
 * durable SDK's plugin of lambdas/durable/durable-tracing-plugin.ts, shipped beside the bundle as
 * a module of its own, and `DURABLE_EXECUTION_PLUGINS` naming it where the functions export
 * spans. The tool's durable.ts is bundled unchanged. Free of aws-cdk-lib, so tests build it as
 * the stack does.
 */
import { join } from 'node:path';
import type { BuildOptions } from 'esbuild';
import { TRACING_SDK_PACKAGE, tracingRequested } from '../lambdas/observability/tracing-setup.ts';
import { LAMBDA_BUNDLING, lazyModuleOptions } from './lambda-bundling.ts';
import { REPO_ROOT } from './repo-paths.ts';

/** The name the durable SDK imports the plugin by, from beside the bundle. */
export const DURABLE_TRACING_PLUGIN = 'async-mcp-durable-tracing';

/** The durable SDK's setting: the plugin modules it loads when the handler is wrapped. */
export const DURABLE_PLUGINS_ENV = 'DURABLE_EXECUTION_PLUGINS';

const PLUGIN_ENTRY = join(REPO_ROOT, 'lambdas', 'durable', 'durable-tracing-plugin.ts');

/** The modules a durable tool's bundle loads lazily: the tracing SDK, and the plugin that starts it. */
export const DURABLE_LAZY_MODULES: readonly string[] = [TRACING_SDK_PACKAGE, DURABLE_TRACING_PLUGIN];

/**
 * The environment that turns the plugin on, given the functions' OpenTelemetry environment:
 * none where they export no spans, so a function without tracing loads nothing.
 */
export function durableTracingEnvironment(otelEnvironment: Readonly<Record<string, string>>): Record<string, string> {
  return tracingRequested({ ...otelEnvironment }) ? { [DURABLE_PLUGINS_ENV]: DURABLE_TRACING_PLUGIN } : {};
}

/**
 * How a lazy module of `name` is built into `assetDir`: the plugin from our module, loading the
 * tracing SDK from beside it as the bundles do; any other as lambda-bundling.ts builds it.
 */
export function lazyModuleBuildOptions(name: string, assetDir: string, root: string): BuildOptions {
  const options = lazyModuleOptions(name, assetDir, root);
  if (name !== DURABLE_TRACING_PLUGIN) return options;
  return {
    ...options,
    entryPoints: [PLUGIN_ENTRY],
    external: [...(options.external ?? []), TRACING_SDK_PACKAGE],
    define: { ...LAMBDA_BUNDLING.define },
  };
}
