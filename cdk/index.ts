/**
 * `async-mcp/cdk`: what a project's own CDK app builds the server with. AsyncMcpServer is the
 * whole server as one construct, given the project's tool folders (loadToolFolders);
 * AsyncMcpStack is the stack this repository deploys, the construct with its outputs.
 */
export { type ToolFolder, ToolFolderError, loadToolFolders } from '../lambdas/tools/tool-folder.ts';
export { AlarmTopic } from './alarm-topic.ts';
export { AsyncMcpServer, type AsyncMcpServerProps } from './async-mcp-server.ts';
export { AsyncMcpStack, type AsyncMcpStackProps } from './async-mcp-stack.ts';
export type { EventsOptions } from './events-delivery.ts';
export type { IamAuth, McpAuth, NoAuth, OAuthAuth } from './mcp-auth.ts';
export type { AdotLayerTracing, OtlpCollectorTracing, ServerTracing, XRayTracing } from './server-tracing.ts';
