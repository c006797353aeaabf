/**
 * A function's code, bundled when CDK stages its asset, inside the synth's own process: esbuild's
 * synchronous API (CDK's local bundling is synchronous), then the lazy modules beside the
 * bundle, then whatever else the function ships (the MCP function's tool files and card).
 * NodejsFunction's own bundling started npx (and so npm), a shell and Node for each function:
 * over a second of each synth per function, most of it npm's start.
 */
import { join, resolve } from 'node:path';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { type AssetCode, Code } from 'aws-cdk-lib/aws-lambda';
import { lazyModuleBuildOptions } from './durable-tracing-bundling.ts';
import { esbuildOptions, type OwnBundling } from './lambda-bundling.ts';
import { localEsbuild } from './local-esbuild.ts';
import { REPO_ROOT } from './repo-paths.ts';

/** The bundle's file in the asset: `index.handler` is its `handler` export. */
export const BUNDLE_FILE = 'index.mjs';

export interface FunctionBundle extends OwnBundling {
  /** The TypeScript module exporting `handler`. */
  readonly entry: string;
  /** The folder esbuild resolves the entry's imports from. */
  readonly projectRoot: string;
  /** Packages left out of the bundle and built beside it (lambda-bundling.ts `lazyModuleOptions`). */
  readonly lazyModules: readonly string[];
  /** @default - nothing more */
  readonly afterBundling?: AfterBundling;
}

/** More files a function ships, written into its asset's folder once the bundle is there. */
export interface AfterBundling {
  /**
   * What `write` writes, as JSON (the tools whose files it copies, say): CDK's asset cache keys
   * on it, so a function that ships other files never gets another's asset.
   */
  readonly key: unknown;
  write(outputDir: string): void;
}

/**
 * The asset of `bundle`, named by the hash of what bundling wrote, as NodejsFunction names its
 * assets; staged from the project root, which only locates the asset (nothing is copied from it).
 */
export function bundledCode(bundle: FunctionBundle): AssetCode {
  return Code.fromAsset(bundle.projectRoot, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never run: the local bundling either bundles or throws, so CDK never falls back to Docker.
      image: DockerImage.fromRegistry('dummy'),
      local: new InProcessBundling(bundle),
    },
  });
}

/**
 * CDK's local bundling of one function. Its public fields are what CDK's asset cache keys on
 * (the bundling options as JSON), so two functions share an asset only if they are built alike:
 * the entry, the project root, the function's own lazy modules, aliases and defines, and what
 * else it ships.
 */
class InProcessBundling implements ILocalBundling {
  public readonly entry: string;
  public readonly projectRoot: string;
  public readonly lazyModules: readonly string[];
  public readonly own: OwnBundling;
  public readonly ships: string | undefined;
  readonly #afterBundling: AfterBundling | undefined;

  constructor(bundle: FunctionBundle) {
    this.entry = resolve(bundle.entry);
    this.projectRoot = bundle.projectRoot;
    this.lazyModules = bundle.lazyModules;
    this.own = { ...(bundle.aliases ? { aliases: bundle.aliases } : {}), ...(bundle.define ? { define: bundle.define } : {}) };
    // As a string: CDK's cache key sorts the object's keys, and a null in it would throw.
    this.ships = bundle.afterBundling && JSON.stringify(bundle.afterBundling.key);
    this.#afterBundling = bundle.afterBundling;
  }

  tryBundle(outputDir: string): boolean {
    const esbuild = localEsbuild();
    // A failure (a syntax error in a user's worker) throws esbuild's message, which names the
    // file (and esbuild logs it); CDK fails the synth with it.
    esbuild.buildSync(esbuildOptions(this.entry, join(outputDir, BUNDLE_FILE), this.projectRoot, this.lazyModules, this.own));
    for (const name of this.lazyModules) esbuild.buildSync(lazyModuleBuildOptions(name, outputDir, REPO_ROOT));
    this.#afterBundling?.write(outputDir);
    return true;
  }
}
