/**
 * The operation card: an MCP App (SEP-1865, extension `io.modelcontextprotocol/ui`,
 * specification 2026-01-26) that a host renders in the conversation for a long-running
 * tool call, showing its status, progress, question and result. This module decides who
 * sees it: only requests whose client declared MCP Apps get `_meta.ui` on their tools and
 * the card's app-only tools; every other client's `tools/list` is left exactly as it was.
 *
 * "Servers SHOULD check client capabilities before registering UI-enabled tools", and
 * "Clients advertise MCP Apps support ... using the extension identifier
 * `io.modelcontextprotocol/ui`" with `mimeTypes` (REQUIRED). The request view merges what
 * an initialize-era client declared with the 2026-07-28 per-request capabilities.
 */
import { EXTENSION_ID, getUiCapability, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import type { ToolCatalog } from '../../operations/tool-spec.ts';
import { isObject } from '../../shared/json-values.ts';
import { OPERATION_CANCEL, OPERATION_RESULT, OPERATION_STATUS } from '../calls/handle-tool-schemas.ts';
import type { ToolListing } from '../dialects/dialect.ts';
import type { RequestView } from '../edge/request-view.ts';
import { CARD_TOOL_LISTINGS, CARD_TOOL_NAMES } from './card-tool-schemas.ts';

/** The card's resource: one view for every operation, whichever tool and dialect started it. */
export const OPERATION_CARD_URI = 'ui://async-mcp/operation';

/** The MCP Apps HTML profile: "`mimeType` MUST be `text/html;profile=mcp-app`". */
export const OPERATION_CARD_MIME_TYPE = RESOURCE_MIME_TYPE;

/** The environment variable that turns the card off ("0" or "false"); on when unset. */
export const OPERATION_CARD_ENV = 'ASYNC_MCP_OPERATION_CARD';

/**
 * Handle tools whose answers name one operation: the card opens on them too.
 * `operation_list` names many, so it gets no card.
 */
const HANDLE_TOOLS_WITH_CARD: readonly string[] = [OPERATION_STATUS, OPERATION_RESULT, OPERATION_CANCEL];

/** Whether the card is served: an explicit option wins, else the environment (on unless "0" or "false"). */
export function operationCardOn(option: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (option !== undefined) return option;
  const raw = env[OPERATION_CARD_ENV];
  if (raw === undefined || raw === '' || raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`Environment variable ${OPERATION_CARD_ENV} must be 1 or 0`);
}

/** Whether the request's client declared MCP Apps with the HTML profile the card is written in. */
export function declaresMcpApps(view: Pick<RequestView, 'clientCapabilities'>): boolean {
  const ui: unknown = getUiCapability(view.clientCapabilities as Parameters<typeof getUiCapability>[0]);
  return isObject(ui) && Array.isArray(ui.mimeTypes) && ui.mimeTypes.includes(OPERATION_CARD_MIME_TYPE);
}

/**
 * What an initialize-era session must remember for the card: the MCP Apps declaration,
 * cut down to the one profile the card needs (so it fits the session id whatever else the
 * client declared); `{}` when `capabilities` does not declare it.
 */
export function mcpAppsCapabilityOf(capabilities: Record<string, unknown>): Record<string, unknown> {
  return declaresMcpApps({ clientCapabilities: capabilities }) ? { extensions: { [EXTENSION_ID]: { mimeTypes: [OPERATION_CARD_MIME_TYPE] } } } : {};
}

/** Throws when a tool of the catalog has the name of one of the card's own tools. */
export function assertNoCardToolClash(catalog: ToolCatalog): void {
  const clash = catalog.tools.find((tool) => CARD_TOOL_NAMES.includes(tool.name));
  if (clash) throw new Error(`Tool ${clash.name} has the name of one of the operation card's tools: rename it, or turn the card off (${OPERATION_CARD_ENV}=0)`);
}

/**
 * The `tools/list` answer for `view`: unchanged (the very same object) unless its client
 * declared MCP Apps. Then every long-running tool and the handle tools that name one
 * operation link to the card, and the card's app-only tools are added.
 */
export function withOperationCard(
  listed: { tools: ToolListing[] },
  view: Pick<RequestView, 'clientCapabilities'>,
  catalog: ToolCatalog,
): { tools: ToolListing[] } {
  if (!declaresMcpApps(view)) return listed;
  const tools = listed.tools.map((tool) => (showsCard(tool.name, catalog) ? linkToCard(tool) : tool));
  return { ...listed, tools: [...tools, ...CARD_TOOL_LISTINGS] };
}

function showsCard(name: string, catalog: ToolCatalog): boolean {
  const tool = catalog.get(name);
  return tool ? tool.invocation !== 'sync' : HANDLE_TOOLS_WITH_CARD.includes(name);
}

/**
 * `_meta.ui.resourceUri`, and the flat `ui/resourceUri` older hosts read, as the SDK's
 * `registerAppTool` writes both. A tool folder's own `_meta.ui.resourceUri` is kept.
 */
function linkToCard(tool: ToolListing): ToolListing {
  const meta = isObject(tool._meta) ? tool._meta : {};
  const ui = isObject(meta.ui) ? meta.ui : {};
  const own = [ui.resourceUri, meta[RESOURCE_URI_META_KEY]].find((uri): uri is string => typeof uri === 'string');
  const resourceUri = own ?? OPERATION_CARD_URI;
  return { ...tool, _meta: { ...meta, ui: { ...ui, resourceUri }, [RESOURCE_URI_META_KEY]: resourceUri } };
}
