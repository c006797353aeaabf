/**
 * Builds the operation card (lambdas/mcp/apps/) into the MCP Lambda's asset, beside the
 * bundle, where the function reads it on the first `resources/read` of the card. The build
 * runs when CDK bundles the function, in the synth's process (writeOperationCard).
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CARD_ASSET_FILE } from '../lambdas/mcp/apps/card-resource.ts';
import { OPERATION_CARD_ENV } from '../lambdas/mcp/apps/operation-card.ts';
import { EsbuildMissingError, esbuildInstalled } from './local-esbuild.ts';
import { MCP_HTTP_ENTRY, REPO_ROOT } from './repo-paths.ts';

// The card is built with esbuild, which the package leaves to the project (an optional peer): its
// builder is imported only where esbuild resolves, so that without it this module still loads and
// a synth that bundles fails with local-esbuild.ts's instructions, not with an import error here.
const cardBuilder = esbuildInstalled() ? await import('../lambdas/mcp/apps/build-operation-card.ts') : undefined;

function buildOperationCardHtml(): string {
  if (!cardBuilder) throw new EsbuildMissingError();
  return cardBuilder.buildOperationCardHtml();
}

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

/** Builds the card into the asset folder `outputDir` of the function of `entry`, if it serves the card and the card is `on`. */
export function writeOperationCard(entry: string, outputDir: string, on = true): void {
  if (!servesOperationCard(entry) || !on) return;
  writeFileSync(join(outputDir, CARD_ASSET_FILE), buildOperationCardHtml());
}
