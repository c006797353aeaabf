/**
 * What starting an operation takes: the caller, the tool and its arguments, the client's
 * token and dialect. OperationsService.start owns the lifecycle; synchronous runs start
 * through it too (sync-runs.ts).
 */
import type { Dialect } from './operation.ts';
import type { ToolSpec } from './tool-spec.ts';

/** The arguments of OperationsService.start. */
export interface StartOperationInput {
  ownerId: string;
  tool: ToolSpec;
  arguments: Record<string, unknown>;
  token: string;
  dialect: Dialect;
  /** Requested keepAlive in seconds; `null` asks for unlimited; absent takes the tool's default. */
  keepAliveSeconds?: number | null;
  /** Typed JSON-RPC id of the `tools/call` (the edge encodes its type: 7 and "7" differ). */
  requestId?: string;
  /** The capabilities the calling client declared: which questions the execution may ask it. */
  clientCapabilities?: Record<string, unknown>;
}
