/**
 * Where the operation card meets the per-request server: its links in `tools/list`, its
 * app-only tools in `tools/call`, its resource in `resources/list` and `resources/read`.
 * Turned off, every hook leaves the server exactly as it is without the card.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type { ToolCatalog } from '../../operations/tool-spec.ts';
import type { McpDeps, ToolListing } from '../dialects/dialect.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import type { Era, RequestView } from '../edge/request-view.ts';
import type { ExtraResources } from '../results/result-resources.ts';
import type { CallToolResultShape } from '../results/tool-result.ts';
import { operationCardResources } from './card-resource.ts';
import { callCardTool, isCardTool } from './card-tools.ts';
import { assertNoCardToolClash, declaresMcpApps, operationCardOn, withOperationCard } from './operation-card.ts';

export interface OperationCardHooks {
  readonly enabled: boolean;
  /** The `tools/list` answer for `view`: the same object unless its client declared MCP Apps. */
  listTools(listed: { tools: ToolListing[] }, view: RequestView): { tools: ToolListing[] };
  /** Whether `name` is one of the card's tools (never, when the card is off). */
  serves(name: string): boolean;
  /** Calls one of the card's tools; to a client that did not declare MCP Apps it is unknown, as it is unlisted. */
  callTool(name: string, args: unknown, view: RequestView, deps: McpDeps): Promise<CallToolResultShape>;
  /** The card's resource for a server of `era` serving `ownerId`; none when off. */
  resources(era: Era, ownerId: string): ExtraResources | undefined;
}

/**
 * The card's hooks: on unless `option` is false (or, without the option, unless
 * `ASYNC_MCP_OPERATION_CARD` is "0"). A catalog tool named like one of the card's tools
 * fails the start, as a clash with the handle tools does.
 */
export function operationCardHooks(option: boolean | undefined, catalog: ToolCatalog): OperationCardHooks {
  const enabled = operationCardOn(option);
  if (enabled) assertNoCardToolClash(catalog);
  return {
    enabled,
    listTools: (listed, view) => (enabled ? withOperationCard(listed, view, catalog) : listed),
    serves: (name) => enabled && isCardTool(name),
    callTool: async (name, args, view, deps) => {
      // The same answer as for any name the catalog lacks.
      if (!declaresMcpApps(view)) throw new ProtocolError(JSONRPC.INVALID_PARAMS, `Unknown tool: ${name}`);
      return callCardTool(name, args, view, deps);
    },
    resources: (era, ownerId) => (enabled ? operationCardResources(era, ownerId) : undefined),
  };
}
