/**
 * What an execution receives, and the bounds the core checks before anything is written:
 * ids that reach DynamoDB keys, and StartExecution's input size.
 */
import { OperationError } from './operation-error.ts';
import { MAX_ID_BYTES } from './ports.ts';
import type { TraceCarrier } from '../observability/trace-context.ts';
import type { ToolSpec } from './tool-spec.ts';

/** StartExecution and StartSyncExecution accept at most 256 KB of input (UTF-8 bytes). */
export const MAX_EXECUTION_INPUT_BYTES = 256 * 1024;

/**
 * Execution input (DESIGN §3): the arguments, and what status-sync needs to find the
 * record; a machine with its own input contract gets the arguments alone (status sync
 * then finds the record by the execution's name).
 */
export function executionInputOf(
  ownerId: string,
  token: string | null,
  tool: ToolSpec,
  args: Record<string, unknown>,
  clientCapabilities?: Record<string, unknown>,
): unknown {
  if (tool.executionInput === 'arguments') return args;
  // What the client can answer (elicitation, sampling, roots), so a machine can ask only what it may.
  const capabilities = clientCapabilities && Object.keys(clientCapabilities).length > 0 ? { clientCapabilities } : {};
  return { arguments: args, operation: { token, tool: tool.name, ownerId, ...capabilities } };
}

/**
 * The execution input with the start's span context as `operation.trace` (DESIGN §5b), so the
 * execution and its workers join the operation's trace; the record's own is given again on a
 * retried start, as StartExecution of the same name must get the same input.
 */
export function withExecutionTrace(executionInput: unknown, trace: TraceCarrier | undefined): unknown {
  if (typeof executionInput !== 'object' || executionInput === null || !('operation' in executionInput)) return executionInput;
  const { operation, ...rest } = executionInput as { operation: Record<string, unknown> };
  const { trace: _previous, ...untraced } = operation;
  return { ...rest, operation: trace ? { ...untraced, trace } : untraced };
}

/** Ids reach DynamoDB keys (2,048 bytes at most): longer ones are refused before any write. */
export function checkId(what: string, id: string): void {
  const bytes = Buffer.byteLength(id);
  if (bytes > MAX_ID_BYTES) {
    throw new OperationError('INVALID_INPUT', `The ${what} is ${bytes} bytes long; at most ${MAX_ID_BYTES} bytes are accepted`);
  }
}

export function checkExecutionInput(executionInput: unknown): void {
  const bytes = Buffer.byteLength(JSON.stringify(executionInput));
  if (bytes > MAX_EXECUTION_INPUT_BYTES) {
    throw new OperationError(
      'INVALID_INPUT',
      `The arguments are too large: the execution input would be ${bytes} bytes, and Step Functions accepts at most ${MAX_EXECUTION_INPUT_BYTES} bytes (256 KB)`,
      { data: { limitBytes: MAX_EXECUTION_INPUT_BYTES, bytes } },
    );
  }
}
