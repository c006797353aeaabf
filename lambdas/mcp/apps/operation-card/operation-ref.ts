/**
 * What a tool result handed to the card says about its operation, in whichever dialect
 * started it: a handle (`structuredContent.operationId`), a Tasks extension or 2025-11-25
 * task (`taskId`, `task.taskId`), a SEP-1391 call (`_operation.token`), or a finished
 * result. Hosts pass the card the result their own client got, so every wire is read here.
 */

/** A CallToolResult as the card reads it: loosely, since hosts relay what they received. */
export interface ToolResult {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The operation a result names, and whether the result itself is the final one. */
export interface OperationRef {
  operationId?: string;
  /** The result is the tool's own answer (the operation ended, or never was one). */
  final: boolean;
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const RUNNING = ['submitted', 'working', 'input_required'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Reads the operation out of `result`. */
export function operationRefOf(result: ToolResult): OperationRef {
  const structured = isRecord(result.structuredContent) ? result.structuredContent : {};
  // A handle, or the card's own snapshot: an id with a status (the card reads the rest itself).
  const handleId = text(structured.operationId);
  if (handleId && text(structured.status)) return { operationId: handleId, final: false };
  // 2026-07-28 CreateTaskResult (`resultType: "task"`) and 2025-11-25 CreateTaskResult (`task`).
  const task = isRecord(result.task) ? result.task : result.resultType === 'task' ? result : undefined;
  const taskId = text(task?.taskId);
  if (taskId) return { operationId: taskId, final: false };
  // SEP-1391: `_operation.token`, with `operation.status` saying whether the content is final.
  const token = isRecord(result._operation) ? text(result._operation.token) : undefined;
  if (token) {
    const status = isRecord(result.operation) ? text(result.operation.status) : undefined;
    return { operationId: token, final: status === undefined || !RUNNING.includes(status) };
  }
  // A task's final result carries its id in the related-task metadata.
  const related = isRecord(result._meta) && isRecord(result._meta[RELATED_TASK]) ? text(result._meta[RELATED_TASK].taskId) : undefined;
  return related ? { operationId: related, final: true } : { final: true };
}
