/**
 * The worker module a deployed worker's bundle is built around: cdk/worker-bundling.ts aliases
 * this name to the worker's file, which exports `handler` (lambdas/handlers/worker-entry.ts).
 */
declare module 'async-mcp-worker-module' {
  export function handler(event: unknown, ...rest: unknown[]): unknown;
}
