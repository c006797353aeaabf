/**
 * Builds the per-request MCP server: `tools/list` shaped for the asking client and
 * `tools/call` routed through the decision table of DESIGN §5. The server holds no
 * state between requests; everything lives in the operations core.
 */
import { ProtocolError, Server, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { LOG_LEVELS } from '../operations/operation.ts';
import type { ToolSpec } from '../operations/tool-spec.ts';
import { isObject } from '../shared/json-values.ts';
import { validateArguments } from './calls/argument-validator.ts';
import type { AsyncDialect, McpDeps, ToolListing } from './dialects/dialect.ts';
import { ANY_RESULT } from './dialects/dialect-support.ts';
import { JSONRPC, toProtocolError } from './edge/json-rpc-errors.ts';
import { setHttpStatus } from './edge/request-scope.ts';
import { requestViewOf, type Era, type RequestView } from './edge/request-view.ts';
import { BUILT_IN_LISTINGS, BUILT_IN_TOOL_NAMES, callBuiltInTool, callWithHandle, handleListing } from './calls/handle-tools.ts';
import { registerResultResources, RESOURCES_CAPABILITY } from './results/result-resources.ts';
import { legacySyncCall } from './calls/legacy-sync-call.ts';
import { modernSyncCall } from './calls/modern-sync-call.ts';
import { operationCardHooks } from './apps/operation-card-hooks.ts';
import { eventsCapabilities, registerEventMethods } from './events/events-methods.ts';
import type { EventsRuntime } from './events/events-runtime.ts';
import { offerEventSources } from './events/event-source.ts';

/** Who serves a `tools/call`, with the tool and its validated arguments where it names one. */
type CallRoute =
  | { kind: 'card' | 'built-in'; name: string }
  | { kind: 'dialect'; dialect: AsyncDialect; tool: ToolSpec; arguments: Record<string, unknown> }
  | { kind: 'handle' | 'sync'; tool: ToolSpec; arguments: Record<string, unknown> };

export const SERVER_INFO = { name: 'async-mcp', version: '0.1.0' } as const;

// Schemas are built once per process: a server is built per request, and zod schemas are
// costly to construct. An explicit param schema makes a malformed cursor the client's
// mistake (-32602 naming the field), where the SDK's own would answer -32603.
const TOOLS_LIST_SCHEMAS = {
  params: z.looseObject({ cursor: z.string({ message: 'cursor must be a string' }).optional() }).optional(),
  result: ANY_RESULT,
};
const LogLevel = z.enum(LOG_LEVELS);

export interface ServerFactoryOptions {
  deps: McpDeps;
  /** Async dialects, asked in this order. */
  dialects: readonly AsyncDialect[];
  /** Extra server capabilities per era (dialects advertise theirs here). */
  capabilities?: (era: Era) => Record<string, unknown>;
  /**
   * Handle tools for clients that declare no async support: they see every tool plus the
   * built-in operation tools, and a long-running call answers with an operation id.
   * @default true
   */
  handleTools?: boolean;
  /**
   * The operation card (MCP Apps): tools link to it, and its app-only tools are listed, for
   * clients that declare `io.modelcontextprotocol/ui` only.
   * @default on, unless `ASYNC_MCP_OPERATION_CARD` is "0"
   */
  operationCard?: boolean;
  /** The Events extension (`events/*`, 2026-07-28 only); without it, or turned off, those methods are unknown. */
  events?: EventsRuntime;
}

/** Whether handle tools are served: on unless turned off, as in the Lambda and the local stack. */
export function handleToolsOn(options: { handleTools?: boolean }): boolean {
  return options.handleTools !== false;
}

export function createServerFactory(options: ServerFactoryOptions) {
  const { deps, dialects } = options;
  const handleTools = handleToolsOn(options);
  const card = operationCardHooks(options.operationCard, deps.catalog);
  if (handleTools) {
    const clash = deps.catalog.tools.find((tool) => BUILT_IN_TOOL_NAMES.includes(tool.name));
    if (clash) throw new Error(`Tool ${clash.name} has the name of a built-in handle tool: rename it, or leave handle tools off`);
  }
  // "This extension is defined for protocol revision 2026-07-28 and later" (SEP-3415).
  const events = options.events?.settings.enabled ? options.events : undefined;
  if (events) offerEventSources(deps);
  // The capabilities depend on the era alone: merged once per era, not per request (the server copies them).
  const capabilitiesByEra = new Map<Era, Record<string, unknown>>();
  const capabilitiesOf = (era: Era): Record<string, unknown> => {
    let merged = capabilitiesByEra.get(era);
    if (merged === undefined) {
      merged = mergeCapabilities([
        { tools: {} },
        // "Servers that emit log message notifications MUST declare the logging capability" (both revisions).
        { logging: {} },
        RESOURCES_CAPABILITY,
        options.capabilities?.(era),
        ...dialects.map((d) => d.capabilities?.(era)),
        events && era === 'modern' ? eventsCapabilities() : undefined,
      ]);
      capabilitiesByEra.set(era, merged);
    }
    return merged;
  };
  /** `authenticated`: a real identity stands behind `ownerId` (webhook subscriptions need one). */
  const build = (era: Era, ownerId: string, authenticated = false): Server => {
    const server = new PerRequestServer(SERVER_INFO, {
      capabilities: capabilitiesOf(era),
      instructions: 'Tools here may be long-running: clients that support long-running operations or tasks get a handle at once and poll for the result.',
    });

    server.setRequestHandler('tools/list', TOOLS_LIST_SCHEMAS, async (params, ctx) => {
      const view = requestViewOf(era, ownerId, params as never, ctx);
      // A dialect the request declares wins over one its protocol revision merely implies.
      const dialect = dialects.find((d) => d.claimsListing(view)) ?? dialects.find((d) => implies(d, view));
      if (!dialect && handleTools) {
        const { maxBlockingSeconds } = deps.operations.limits;
        return card.listTools(
          { tools: [...deps.catalog.tools.map((tool) => handleListing(tool, baseListing(tool), maxBlockingSeconds)), ...BUILT_IN_LISTINGS] },
          view,
        ) as never;
      }
      const tools = deps.catalog.tools.flatMap((tool) => {
        const base = baseListing(tool);
        const listed = dialect ? dialect.listTool(tool, base) : plainListing(tool, base);
        return listed ? [listed] : [];
      });
      return card.listTools({ tools }, view) as never;
    });

    // The SDK validates registered tools/call results as CallToolResult, which would reject
    // task-shaped answers; the fallback handler puts exactly what a dialect returns on the wire.
    server.removeRequestHandler('tools/call');
    server.fallbackRequestHandler = async (request, ctx) => {
      if (request.method !== 'tools/call') {
        // 2026-07-28 Streamable HTTP answers an unknown method with HTTP 404; the legacy era stays 200.
        if (era === 'modern') setHttpStatus(404);
        throw new ProtocolError(JSONRPC.METHOD_NOT_FOUND, `Method not found: ${request.method}`);
      }
      const params = (request.params ?? {}) as Record<string, unknown>;
      const view = requestViewOf(era, ownerId, params as never, ctx as ServerContext);
      try {
        return await callTool(params, view, ctx as ServerContext, server);
      } catch (error) {
        throw toProtocolError(error, view.requestId, deps.logger);
      }
    };

    registerResultResources(server, deps, ownerId, card.resources(era, ownerId));
    registerLogLevel(server, deps, ownerId);
    for (const dialect of dialects) dialect.register(server, deps, era, ownerId);
    if (events && era === 'modern') registerEventMethods(server, events, deps, { ownerId, authenticated });
    return server;
  };
  return Object.assign(build, { plainStart });

  async function callTool(params: Record<string, unknown>, view: RequestView, ctx: ServerContext, server: Server): Promise<Record<string, unknown>> {
    const route = routeCall(params, view);
    switch (route.kind) {
      case 'card':
        return card.callTool(route.name, params.arguments, view, deps);
      case 'built-in':
        return callBuiltInTool(route.name, params.arguments, view, deps, ctx, server);
      case 'dialect':
        return route.dialect.call({ tool: route.tool, arguments: route.arguments, params, view, ctx }, deps);
      case 'handle':
        return callWithHandle(route.tool, route.arguments, view, ctx, deps, server);
      case 'sync':
        // A waited-on call: a STANDARD run can be cancelled by its typed request id while it runs,
        // and either way this call supersedes an older call's alias for the same id.
        return view.era === 'modern'
          ? modernSyncCall(route.tool, route.arguments, view, ctx, deps)
          : legacySyncCall(route.tool, route.arguments, view, ctx, deps, server);
    }
  }

  /**
   * Who serves a `tools/call` (DESIGN §5), decided from the request alone: nothing is read or
   * written before a call is routed, and a refusal (unknown tool, invalid arguments, an
   * async-only tool for a client that cannot run it) throws here.
   */
  function routeCall(params: Record<string, unknown>, view: RequestView): CallRoute {
    const name = params.name;
    if (typeof name !== 'string' || name === '') {
      throw new ProtocolError(JSONRPC.INVALID_PARAMS, 'Invalid params: name must be a non-empty string');
    }
    // Only a request that declares, or whose revision implies, no async dialect gets handles.
    const handles = handleTools && !dialects.some((d) => d.claimsListing(view) || implies(d, view));
    if (card.serves(name)) return { kind: 'card', name };
    if (handles && BUILT_IN_TOOL_NAMES.includes(name)) return { kind: 'built-in', name };
    const tool = deps.catalog.get(name);
    if (!tool) throw new ProtocolError(JSONRPC.INVALID_PARAMS, `Unknown tool: ${name}`);
    const dialect = dialects.find((d) => d.claimsCall(params, view, tool));
    const withHandle = !dialect && handles && tool.invocation !== 'sync';
    if (!dialect && !withHandle && tool.invocation === 'async') {
      for (const d of refusalOrder(view)) {
        const refusal = d.refuseAsyncOnly?.(tool, view);
        if (refusal) throw refusal;
      }
      // Old clients never see async-only tools; calling one anyway is an invalid request.
      throw new ProtocolError(JSONRPC.INVALID_REQUEST, `Tool ${name} is long-running and needs a client that supports long-running operations or tasks`);
    }
    const validation = validateArguments(tool, params.arguments);
    if (!validation.ok) throw new ProtocolError(JSONRPC.INVALID_PARAMS, validation.message, { field: validation.field });
    if (dialect) return { kind: 'dialect', dialect, tool, arguments: validation.value };
    return { kind: withHandle ? 'handle' : 'sync', tool, arguments: validation.value };
  }

  /**
   * The start of a plain async `tools/call` (edge/direct-answer.ts): the route `callTool` takes
   * and the checks its dialect makes before starting, both without side effects. `undefined`
   * when the SDK is to serve the call: any other route, anything refused, anything the dialect
   * does besides starting. The function returned starts the operation, and throws what the SDK
   * path would answer; once called, the call is never served again.
   */
  function plainStart(params: Record<string, unknown>, view: RequestView): (() => Promise<Record<string, unknown>>) | undefined {
    let start: (() => Promise<Record<string, unknown>>) | undefined;
    try {
      const route = routeCall(params, view);
      if (route.kind !== 'dialect') return undefined;
      start = route.dialect.plainStart?.({ tool: route.tool, arguments: route.arguments, params, view }, deps);
    } catch {
      // A refusal: the SDK words it, as it would anyway.
      return undefined;
    }
    if (start === undefined) return undefined;
    const starting = start;
    return async () => {
      try {
        return await starting();
      } catch (error) {
        throw toProtocolError(error, view.requestId, deps.logger);
      }
    };
  }

  /** Whether `view`'s revision implies `dialect`, unless its client declined it and handle tools can serve it. */
  function implies(dialect: AsyncDialect, view: RequestView): boolean {
    return dialect.impliedBy?.(view) === true && !(handleTools && dialect.declinedBy?.(view) === true);
  }

  /** Declared dialects word the refusal first, then implied ones, then the rest. */
  function refusalOrder(view: RequestView): AsyncDialect[] {
    const declared = dialects.filter((d) => d.claimsListing(view));
    const implied = dialects.filter((d) => !declared.includes(d) && d.impliedBy?.(view));
    return [...declared, ...implied, ...dialects.filter((d) => !declared.includes(d) && !implied.includes(d))];
  }
}

/**
 * A server that serves one request. Once its exchange is over the transport closes it, and the
 * SDK then builds a "Connection closed" error for anything still waiting on it, which for a
 * request already answered is nothing; the error is built without a stack trace, which no log
 * line or client ever sees (logs carry an error's name and message) and which cost about 2% of a
 * 2026-07-28 poll's CPU to capture. Errors made by abort listeners while it closes (a client that
 * went away mid-call) have none either; the handler's own code runs later, with stacks.
 */
class PerRequestServer extends Server {
  protected override _onclose(): void {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super._onclose();
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}

/**
 * `logging/setLevel`, remembered per principal in the store: the server keeps no session,
 * and a later call on any instance filters its log lines by it. The SDK's own handler
 * would keep the level in this request's memory only.
 */
function registerLogLevel(server: Server, deps: McpDeps, ownerId: string): void {
  // The level is checked here, so a missing one and a wrong one get the same answer.
  server.setRequestHandler('logging/setLevel', { params: ANY_RESULT, result: ANY_RESULT }, async (params, ctx) => {
    const level = LogLevel.safeParse(params.level);
    // "Invalid log level: -32602 (Invalid params)"
    if (!level.success) throw new ProtocolError(JSONRPC.INVALID_PARAMS, `Invalid params: level must be one of ${LOG_LEVELS.join(', ')}`);
    try {
      await deps.operations.setLogLevel(ownerId, level.data);
    } catch (error) {
      throw toProtocolError(error, ctx.mcpReq.id, deps.logger);
    }
    return {};
  });
}

function baseListing(tool: ToolSpec): ToolListing {
  return {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    ...(tool.icons === undefined ? {} : { icons: tool.icons }),
    ...(tool.meta === undefined ? {} : { _meta: tool.meta }),
  };
}

/** Clients that speak no async dialect see sync and hybrid tools only, with no async fields. */
function plainListing(tool: ToolSpec, base: ToolListing): ToolListing | undefined {
  return tool.invocation === 'async' ? undefined : base;
}

/** Merges capability objects one level deep, so two dialects may each add to `extensions`. */
function mergeCapabilities(parts: ReadonlyArray<Record<string, unknown> | undefined>): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const part of parts) {
    for (const [key, value] of Object.entries(part ?? {})) {
      const existing = merged[key];
      merged[key] = isObject(existing) && isObject(value) ? { ...existing, ...value } : value;
    }
  }
  return merged;
}
