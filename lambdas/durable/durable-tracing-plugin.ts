/**
 * A durable tool's spans in AWS, through the durable execution SDK's instrumentation plugins:
 * the function loads this module when `DURABLE_EXECUTION_PLUGINS` names it (the stack sets it
 * with tracing on, cdk/durable-tracing-bundling.ts), so every durable.ts, defineTool's or a
 * plain `withDurableExecution` handler, is traced unchanged. OpenTelemetry's SDK starts at the
 * function's init; each invocation is a span in the operation's trace its execution input
 * carries (`operation.trace`), each step that runs in it a child span, and the spans are flushed
 * before the invocation returns. The local stack traces its durable runs itself
 * (local/durable/step-spans.ts) and never loads this.
 */
import type {
  AttemptInfo,
  DurableExecutionInvocationOutput,
  DurableInstrumentationPlugin,
  DurableInstrumentationPluginProvider,
  InvocationInfo,
  OperationInfo,
} from '@aws/durable-execution-sdk-js';
import { OPERATION_SPANS, TOOL_ATTRIBUTE } from '../observability/span-names.ts';
import { operationToolOf, operationTraceOf } from '../observability/traced-invocation.ts';
import { type InvocationTracing, lambdaInvocationTracing } from '../observability/traced-lambda-handler.ts';
import { SpanKind, withSpan } from '../observability/tracing.ts';

/** The durable SDK's plugin contract this module implements (its DURABLE_INSTRUMENTATION_PLUGIN_API_VERSION). */
const PLUGIN_API_VERSION = 1;
/** The steps' operation type: a step and a wait-for-condition check run a function of the tool's. */
const STEP = 'STEP';
const ENDED: readonly (string | undefined)[] = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'STOPPED', 'CANCELLED'];

/** Spans of one durable function's invocations and of the steps they run. */
export class DurableTracingPlugin implements DurableInstrumentationPlugin {
  private readonly traced: InvocationTracing;
  private readonly functionName: string;
  /** Steps numbered so far in this execution: those that ended before this invocation, then each one it runs. */
  private steps = 0;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.functionName = env.AWS_LAMBDA_FUNCTION_NAME ?? 'durable-tool';
    // Here, at the function's init: withDurableExecution creates its plugins when durable.ts is loaded.
    this.traced = lambdaInvocationTracing('async-mcp-durable-tool');
  }

  wrapInvocation(info: InvocationInfo, fn: () => Promise<DurableExecutionInvocationOutput>): Promise<DurableExecutionInvocationOutput> {
    this.steps = Object.values(info.operations).filter(endedStep).length;
    const parent = operationTraceOf(info.executionInput);
    const tool = operationToolOf(info.executionInput);
    const attributes = { 'faas.invoked_name': this.functionName, ...(tool ? { [TOOL_ATTRIBUTE]: tool } : {}) };
    return this.traced(() => withSpan(OPERATION_SPANS.worker(this.functionName), { kind: SpanKind.SERVER, attributes, ...(parent ? { parent } : {}) }, fn));
  }

  wrapOperationAttemptFn(info: AttemptInfo, fn: () => unknown): unknown {
    if (info.type !== STEP) return fn();
    this.steps += 1;
    // Numbered, not named: a tool may name its steps after its arguments, which stay out of traces.
    return withSpan(OPERATION_SPANS.step(this.steps), { attributes: { 'async_mcp.step.attempt': info.attempt } }, fn);
  }
}

function endedStep(operation: OperationInfo): boolean {
  return operation.type === STEP && ENDED.includes(operation.status);
}

/** What the durable SDK looks for in a module `DURABLE_EXECUTION_PLUGINS` names. */
export const durableExecutionPluginProvider: DurableInstrumentationPluginProvider<DurableTracingPlugin> = {
  pluginApiVersion: PLUGIN_API_VERSION,
  pluginType: DurableTracingPlugin,
  createPlugin: () => new DurableTracingPlugin(),
};
