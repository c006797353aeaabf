/** The shape every client-side dialect file has: start, status, result and cancel, over one connection. */
import * as z from 'zod';
import type { CallProgress, CallState, CallToolResult } from '../call-handle.ts';
import type { McpConnection, NotificationListener } from '../mcp-connection.ts';

/** A dialect's view of a running call, in the shared vocabulary. */
export interface RemoteStatus {
  state: CallState;
  statusMessage?: string;
  pollIntervalMs?: number;
  progress?: CallProgress;
  error?: string;
  /** A result or error the status answer already carried (the Tasks extension inlines it). */
  inline?: { result: CallToolResult } | { error: { code: number; message: string; data?: unknown } };
}

export type StartOutcome = { kind: 'async'; remoteId: string; status: RemoteStatus } | { kind: 'sync'; result: CallToolResult };

export interface StartOptions {
  keepAliveSeconds?: number;
  /** Asks the server for `notifications/progress` on the call's stream. */
  progressToken?: string;
  signal?: AbortSignal;
  onNotification?: NotificationListener;
}

export interface DialectAdapter {
  start(connection: McpConnection, tool: string, args: Record<string, unknown>, options: StartOptions): Promise<StartOutcome>;
  status(connection: McpConnection, remoteId: string, signal?: AbortSignal): Promise<RemoteStatus>;
  /** The final result of a terminal call; throws `CallFailedError` or `CallCancelledError` when there is none. */
  result(connection: McpConnection, remoteId: string, status: RemoteStatus, signal?: AbortSignal): Promise<CallToolResult>;
  cancel(connection: McpConnection, remoteId: string, signal?: AbortSignal): Promise<void>;
}

/** A wire `CallToolResult`; extra fields (`_meta`, `resultType`) pass. */
export const CallToolResultSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string() })),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});

export const JsonRpcErrorSchema = z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() });

/** Parses a wire answer, naming the method when a server sends something else. */
export function parseAnswer<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new Error(`Unexpected ${what} answer: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** `notifications/progress` params as the shared progress shape. */
export function progressOf(params: Record<string, unknown>): CallProgress | undefined {
  if (typeof params.progress !== 'number') return undefined;
  return {
    progress: params.progress,
    ...(typeof params.total === 'number' ? { total: params.total } : {}),
    ...(typeof params.message === 'string' ? { message: params.message } : {}),
  };
}

/** The `_meta.progressToken` of a `tools/call`, when the caller listens for progress. */
export function progressMeta(options: StartOptions): { _meta?: { progressToken: string } } {
  return options.progressToken === undefined ? {} : { _meta: { progressToken: options.progressToken } };
}
