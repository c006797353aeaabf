/**
 * The spans of an operation's life after its request: the execution, and each worker
 * invocation in it. A worker's span is the child of the span active where it is invoked
 * (the execution's, locally), else of the operation's trace its event carries.
 */
import { isObject } from '../shared/json-values.ts';
import { OPERATION_SPANS, TOOL_ATTRIBUTE } from './span-names.ts';
import { parseTraceCarrier, type TraceCarrier } from './trace-context.ts';
import { hasActiveSpan, SpanKind, type Span, tracingOn, withSpan } from './tracing.ts';

/** The operation's trace an execution input (`operation.trace`) or a worker's event carries, if any. */
export function operationTraceOf(input: unknown): TraceCarrier | undefined {
  if (!isObject(input)) return undefined;
  if (isObject(input.operation)) return parseTraceCarrier(input.operation.trace);
  // A Lambda task's payload usually passes the execution input along under a key of the state's choosing.
  for (const value of Object.values(input)) if (isObject(value) && isObject(value.operation)) return parseTraceCarrier(value.operation.trace);
  return undefined;
}

/** The tool an execution input names (`operation.tool`), for the execution span's name. */
export function operationToolOf(input: unknown): string | undefined {
  return isObject(input) && isObject(input.operation) && typeof input.operation.tool === 'string' ? input.operation.tool : undefined;
}

/**
 * Runs `run` in the execution's span, the child of the start's span context the input carries;
 * the span ends when `ended` settles, with the execution's status.
 */
export function withExecutionSpan<T>(tool: string, input: unknown, run: () => T, ended: (result: T) => Promise<string>): T {
  if (!tracingOn()) return run();
  const parent = operationTraceOf(input);
  let result!: T;
  void withSpan(
    OPERATION_SPANS.execution(tool),
    { kind: SpanKind.INTERNAL, attributes: { [TOOL_ATTRIBUTE]: tool }, ...(parent ? { parent } : {}) },
    (span: Span) => {
      result = run();
      return ended(result).then(
        (status) => span.setAttribute('async_mcp.execution.status', status),
        () => span.setAttribute('async_mcp.execution.status', 'unknown'),
      );
    },
  );
  return result;
}

/** A worker handler whose every invocation is a span named for the worker. */
export function tracedWorker<E, R>(worker: string, handler: (event: E, ...rest: unknown[]) => Promise<R>): (event: E, ...rest: unknown[]) => Promise<R> {
  return (event, ...rest) => {
    if (!tracingOn()) return handler(event, ...rest);
    // Inside an execution's span (the local stack) its child; invoked on its own (a Lambda), the operation's.
    const parent = hasActiveSpan() ? undefined : operationTraceOf(event);
    // The tool too, when the event names it: in AWS nothing else on the worker's span does.
    const tool = operationToolOf(event);
    const attributes = { 'faas.invoked_name': worker, ...(tool ? { [TOOL_ATTRIBUTE]: tool } : {}) };
    return withSpan(OPERATION_SPANS.worker(worker), { kind: SpanKind.SERVER, attributes, ...(parent ? { parent } : {}) }, () => handler(event, ...rest));
  };
}
