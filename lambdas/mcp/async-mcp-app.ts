/**
 * The composition root shared by the Lambda handlers and the local runtime: given a
 * record store, a workflow engine and the catalog, it builds the MCP fetch handler
 * and the status-sync handler. Both environments run exactly this wiring.
 */
import { OperationsService, type OperationsLimits } from '../operations/operations-service.ts';
import type { RecordStore, WorkflowEngine } from '../operations/ports.ts';
import type { ToolCatalog } from '../operations/tool-spec.ts';
import { createStatusSyncHandler, type StatusSyncHandler } from '../aws/status-sync.ts';
import type { AsyncDialect } from './dialects/dialect.ts';
import { sep1391Dialect } from './dialects/sep-1391.ts';
import { createHttpHandler, type McpFetch } from './http-handler.ts';
import { consoleLogger, type ErrorLogger } from './json-rpc-errors.ts';

export interface AsyncMcpAppOptions {
  store: RecordStore;
  engine: WorkflowEngine;
  catalog: ToolCatalog;
  limits?: OperationsLimits;
  logger?: ErrorLogger;
  /** Host/Origin allowlist; set for the local server only. */
  allowedHostnames?: string[];
}

export interface AsyncMcpApp {
  fetch: McpFetch;
  statusSync: StatusSyncHandler;
  operations: OperationsService;
}

/** The async dialects, in the order the router asks them. */
const DIALECTS: readonly AsyncDialect[] = [sep1391Dialect];

export function createAsyncMcpApp(options: AsyncMcpAppOptions): AsyncMcpApp {
  const logger = options.logger ?? consoleLogger;
  const operations = new OperationsService(options.store, options.engine, options.limits);
  const deps = { catalog: options.catalog, operations, logger };
  const fetch = createHttpHandler({
    deps,
    dialects: DIALECTS,
    ...(options.allowedHostnames ? { allowedHostnames: options.allowedHostnames } : {}),
  });
  return { fetch, statusSync: createStatusSyncHandler(operations, options.engine, logger), operations };
}
