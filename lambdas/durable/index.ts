/**
 * `async-mcp/durable`: what a tool written as a Lambda durable function (`state-machines/<tool>/durable.ts`)
 * imports to do what a state machine tool's built-in workers do: ask the client a question
 * mid-run, report progress and log lines, read who called, and return a result too large to
 * inline. Each helper checkpoints, so a replay repeats none of its writes.
 *
 * A tool defined in its `durable.ts` alone, its tool.json settings and zod schemas in `defineTool`:
 *
 * ```ts
 * import { z } from 'zod';
 * import { defineTool } from 'async-mcp/durable';
 * export const handler = defineTool(
 *   { name: 'sum_slowly', description: 'Adds numbers.', inputSchema: z.object({ numbers: z.array(z.number()).min(1) }), outputSchema: z.object({ sum: z.number() }), invocation: 'both' },
 *   async ({ numbers }, context) => {
 *     await context.reportProgress({ progress: 1, total: 1 });
 *     return { sum: numbers.reduce((a, b) => a + b, 0) };
 *   },
 * );
 * ```
 *
 * Or a handler of its own beside a tool.json:
 *
 * ```ts
 * import { withDurableExecution, type DurableContext } from '@aws/durable-execution-sdk-js';
 * import { askClient, reportProgress, type ToolEvent } from 'async-mcp/durable';
 * export const handler = withDurableExecution(async (event: ToolEvent<{ rows: number }>, context: DurableContext) => {
 *   await reportProgress(context, event, { progress: 1, total: 2, message: 'Planned' });
 *   const answer = await askClient(context, event, { method: 'elicitation/create', params: { message: 'Go?', requestedSchema: { type: 'object', properties: {} } } });
 *   return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
 * });
 * ```
 *
 * The helpers find the operations core in scope (the local stack runs each handler inside
 * `withOperations`), else build the deployed one from the environment on first use.
 */
export { askClient, INPUT_ERRORS, type AskClientOptions, type ClientRequest } from './ask-client.ts';
export {
  type DefinedTool,
  type DefinedToolReturn,
  defineTool,
  type InputOf,
  isDefinedTool,
  type OutputOf,
  type StructuredOf,
  type ToolContext,
  type ToolDefinition,
  type ToolSchema,
  type ToolSettings,
} from './define-tool.ts';
export { DurableToolError } from './durable-tool-error.ts';
export { linkResult, type LinkResultOptions, type ResourceLinkResult } from './link-result.ts';
export { reportLog, reportProgress, type LogReport, type ProgressReport, type ReportOptions } from './report-progress.ts';
export { callerOf, executionNameOf, type Caller, type ToolEvent, type ToolOperation, type ToolResult } from './tool-event.ts';
