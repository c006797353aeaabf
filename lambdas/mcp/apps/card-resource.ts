/**
 * The card's `ui://` resource as `resources/read` serves it. The HTML is built once, ahead
 * of time, into the MCP Lambda's asset (cdk/operation-card-asset.ts) and read from beside
 * the bundle on the first read, never at module init. Run from source (`npm start`), there
 * is no prebuilt file: it is built on demand, once per process.
 */
import { readFile } from 'node:fs/promises';
import { requestViewOf, type Era } from '../edge/request-view.ts';
import type { ExtraResources } from '../results/result-resources.ts';
import { declaresMcpApps, OPERATION_CARD_MIME_TYPE, OPERATION_CARD_URI } from './operation-card.ts';

/** The built card's file name in the Lambda asset, beside the bundle. */
export const CARD_ASSET_FILE = 'operation-card.html';

/**
 * The CSP the card asks for: none of its own. Every domain list is empty, so the host
 * applies the spec's restrictive default ("connect-src 'none'", inline script and style
 * only): the card makes no request but through the host bridge. No border preference:
 * the card draws its own.
 */
const CARD_UI_META = { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: false } as const;

/** The resource as `resources/list` shows it, to hosts that declared MCP Apps. */
export const CARD_RESOURCE_LISTING = {
  uri: OPERATION_CARD_URI,
  name: 'operation_card',
  title: 'Operation card',
  description: 'A live view of one long-running tool call: status, progress, its question, Cancel, and the result.',
  mimeType: OPERATION_CARD_MIME_TYPE,
} as const;

let cached: Promise<string> | undefined;

/** The card's HTML: the asset's file, else built from source; one load per process. */
export function operationCardHtml(): Promise<string> {
  cached ??= loadHtml().catch((error: unknown) => {
    cached = undefined; // A failed load is retried by the next read.
    throw error;
  });
  return cached;
}

async function loadHtml(): Promise<string> {
  try {
    return await readFile(new URL(`./${CARD_ASSET_FILE}`, import.meta.url), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // A computed specifier: a bundler leaves it alone, so esbuild never enters a Lambda bundle.
  const builder = new URL('./build-operation-card.ts', import.meta.url).href;
  const { buildOperationCardHtml } = (await import(builder)) as typeof import('./build-operation-card.ts');
  return buildOperationCardHtml();
}

/** `resources/read`'s answer for the card. */
export async function readOperationCard(): Promise<{ contents: Array<Record<string, unknown>> }> {
  const text = await operationCardHtml();
  return { contents: [{ uri: OPERATION_CARD_URI, mimeType: OPERATION_CARD_MIME_TYPE, text, _meta: { ui: CARD_UI_META } }] };
}

/** The card's resource beside the stored results: listed to hosts that declared MCP Apps, readable by all. */
export function operationCardResources(era: Era, ownerId: string): ExtraResources {
  return {
    list: (params, ctx) => (declaresMcpApps(requestViewOf(era, ownerId, params, ctx)) ? [{ ...CARD_RESOURCE_LISTING }] : []),
    read: (uri) => (uri === OPERATION_CARD_URI ? readOperationCard() : Promise.resolve(undefined)),
  };
}
