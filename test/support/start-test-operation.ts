/**
 * The core over the ports a test gives (the test limits, a manual clock, the MCP input
 * protocol), with one operation started in it as a 2026-07-28 tasks call of owner o1 starts it.
 */
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { createOperations, type OperationsService } from '../../lambdas/operations/operations-service.ts';
import type { Logger, RecordStore, WorkflowEngine } from '../../lambdas/operations/ports.ts';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { ManualClock, TEST_LIMITS } from './core-harness.ts';

export interface TestOperationStart {
  tool: ToolSpec;
  arguments?: Record<string, unknown>;
  clientCapabilities?: Record<string, unknown>;
}

export async function startTestOperation(
  ports: { store: RecordStore; engine: WorkflowEngine; logger: Logger },
  start: TestOperationStart,
): Promise<{ service: OperationsService; record: OperationRecord }> {
  const service = createOperations({ ...ports, limits: TEST_LIMITS, clock: new ManualClock(), input: mcpInputProtocol });
  const record = await service.start({
    ownerId: 'o1',
    tool: start.tool,
    arguments: start.arguments ?? {},
    token: 't1',
    dialect: 'tasks-2026-07-28',
    clientCapabilities: start.clientCapabilities ?? {},
  });
  return { service, record };
}
