/** async-mcp/client: start MCP tool calls now, join them later from any process. */
export { cancel, join, list, listTools, loadHandle, startToolCall, status } from './async-client.ts';
export type { ClientOptions, JoinOptions, StartToolCallOptions } from './async-client.ts';
export { ASYNC_DIALECTS, CallCancelledError, CallFailedError, isTerminal } from './call-handle.ts';
export type { CallHandle, CallProgress, CallState, CallStatus, CallToolResult, Dialect, StoredCall } from './call-handle.ts';
export { authenticate, TOKEN_ENV } from './auth.ts';
export type { AuthOptions } from './auth.ts';
export { regionOfFunctionUrl, signRequest, sigV4Fetch } from './sigv4-signer.ts';
export type { AwsCredentials, SigV4Options } from './sigv4-signer.ts';
export type { ListedTool } from './dialect-detection.ts';
export { McpRpcError } from './mcp-connection.ts';
export type { FetchLike } from './mcp-connection.ts';
export type { RequestStateStore } from './stores/request-state-store.ts';
export { MemoryRequestStateStore } from './stores/memory-request-state-store.ts';
export { defaultStateDir, FileRequestStateStore, STATE_DIR_ENV } from './stores/file-request-state-store.ts';
export { DynamoDbRequestStateStore } from './stores/dynamodb-request-state-store.ts';
export type { DynamoDbRequestStateStoreOptions } from './stores/dynamodb-request-state-store.ts';
