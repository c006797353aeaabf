/**
 * Builds the operation card (lambdas/mcp/apps/) into the MCP Lambda's asset, beside the
 * bundle, where the function reads it on the first `resources/read` of the card. The build
 * runs when CDK bundles the function; the file is put in place by the copy script the tool
 * files use, so the after-bundling command stays plain Node under sh and cmd alike.
 */
import { resolve } from 'node:path';
import { buildOperationCardHtml } from '../lambdas/mcp/apps/build-operation-card.ts';
import { CARD_ASSET_FILE } from '../lambdas/mcp/apps/card-resource.ts';
import { OPERATION_CARD_ENV } from '../lambdas/mcp/apps/operation-card.ts';
import { MCP_HTTP_ENTRY, REPO_ROOT } from './repo-paths.ts';
import { commandScratch } from './synth-scratch.ts';
import { COPY_SCRIPT } from './tool-asset-commands.ts';

/** The CDK context key that turns the card off: `-c operationCard=false` (or `false` in cdk.json). */
export const OPERATION_CARD_CONTEXT = 'operationCard';

/** Whether the function of `entry` serves the card: the MCP handler does. */
export function servesOperationCard(entry: string): boolean {
  return resolve(REPO_ROOT, entry) === MCP_HTTP_ENTRY;
}

/** The card's setting from its context value: on unless `false`; anything but a boolean fails the synth, naming the key. */
export function operationCardFromContext(value: unknown): boolean {
  if (value === undefined || value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`CDK context ${OPERATION_CARD_CONTEXT} must be true or false, got ${JSON.stringify(value)}`);
}

/** The environment the function of `entry` gets for the card: `ASYNC_MCP_OPERATION_CARD=0` when it is off, else nothing. */
export function operationCardEnvironment(entry: string, on: boolean): Record<string, string> {
  return servesOperationCard(entry) && !on ? { [OPERATION_CARD_ENV]: '0' } : {};
}

/**
 * The after-bundling commands that put the built card into `outputDir`; none for functions
 * that do not serve it. The HTML goes to a scratch folder first, which the command removes.
 */
export function operationCardCommands(entry: string, outputDir: string, platform: NodeJS.Platform = process.platform, on = true): string[] {
  if (!servesOperationCard(entry) || !on) return [];
  const html = buildOperationCardHtml();
  const scratch = commandScratch(outputDir);
  const file = scratch.write(CARD_ASSET_FILE, html);
  const manifest = scratch.write('manifest.json', JSON.stringify([{ target: '.', files: [file] }]));
  const win = platform === 'win32';
  // `node` from PATH on Windows: cmd /c strips the outer quotes of a command line that starts with one.
  const quote = (path: string) => (win ? `"${path}"` : `'${path.replaceAll("'", `'\\''`)}'`);
  return [[win ? 'node' : quote(process.execPath), ...[COPY_SCRIPT, manifest, outputDir].map(quote)].join(' ')];
}
