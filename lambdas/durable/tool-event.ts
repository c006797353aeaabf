/**
 * What a durable tool's handler receives and returns: the execution input a state machine
 * gets (DESIGN §3, lambdas/operations/execution-input.ts), and a result shaped as a state
 * machine's output is.
 */
import type { DurableContext } from '@aws/durable-execution-sdk-js';
import type { ContentBlock } from '@modelcontextprotocol/server';
import { durableExecutionNameOf } from '../aws/durable-status-events.ts';
import type { OperationKey } from '../operations/operation.ts';

/** The `operation` part of a tool's execution input. */
export interface ToolOperation {
  /** The operation's token; null for a synchronous call, which has none. */
  token: string | null;
  /** The tool's name. */
  tool: string;
  /** Who called, as the core keys their operations (a hash of the caller's principal, not the principal). */
  ownerId: string;
  /** What the calling client can answer (elicitation, sampling, roots), when it declared anything. */
  clientCapabilities?: Record<string, unknown>;
}

/** A durable tool's event: the tool's arguments (already checked against its inputSchema) and its operation. */
export interface ToolEvent<Args = Record<string, unknown>> {
  arguments: Args;
  operation: ToolOperation;
}

/**
 * What a durable tool returns: a CallToolResult, as a state machine's output may be. An
 * object without `content` becomes a text block holding its JSON plus `structuredContent`;
 * with an outputSchema, `structuredContent` must match it.
 */
export interface ToolResult<Structured = Record<string, unknown>> {
  /** MCP content blocks: text, image, audio, resource_link or an embedded resource. */
  content: ContentBlock[];
  structuredContent?: Structured;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** Who called the tool. */
export interface Caller {
  /** The caller's owner id: the core's key for their operations, a hash of their principal. */
  ownerId: string;
  /** The operation's token; null for a synchronous call. */
  token: string | null;
  /** What the calling client declared it can answer; empty when it declared nothing. */
  clientCapabilities: Record<string, unknown>;
}

/** Who called: the owner id and the client's capabilities (the principal itself is not in the execution input). */
export function callerOf(event: ToolEvent<unknown>): Caller {
  const { ownerId, token, clientCapabilities } = event.operation;
  return { ownerId, token, clientCapabilities: clientCapabilities ?? {} };
}

/**
 * The execution's name, the part after `/durable-execution/` of its ARN: the core finds the
 * operation by it and refuses writes from any other execution. An ARN of another shape (the
 * testing SDK's runner passes a bare id) is its own name.
 */
export function executionNameOf(context: Pick<DurableContext, 'executionContext'>): string {
  const arn = context.executionContext.durableExecutionArn;
  return durableExecutionNameOf(arn) ?? arn;
}

/** The operation's key, when the event names one (a synchronous call has no token). */
export function operationKeyOf(event: ToolEvent<unknown>): OperationKey | undefined {
  const { ownerId, token } = event.operation ?? {};
  return typeof ownerId === 'string' && typeof token === 'string' ? { ownerId, token } : undefined;
}
