/**
 * Spans over OpenTelemetry's API alone: the SDK is loaded only where tracing is on
 * (tracing-setup.ts), and until then every call here is a flag check. Parents and links
 * are read from W3C carriers by the propagator the SDK registers, never parsed here.
 */
import {
  type Attributes,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { type TraceCarrier, traceCarrierOf } from './trace-context.ts';

export { SpanKind };
export type { Span };

// On globalThis, as the API keeps its own globals: every copy of this module in a thread
// (the local stack reloads tool modules fresh) sees the one SDK that thread started.
const TRACING_ON = Symbol.for('async-mcp.tracing-on');

const TRACER_NAME = 'async-mcp';
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

// Where the API keeps what is registered (its global-utils): a provider registered by other
// code, such as the ADOT Lambda layer's wrapper, turns tracing on without our SDK in the bundle.
const API_GLOBALS = Symbol.for('opentelemetry.js.api.1');
type Flagged = { [TRACING_ON]?: boolean; [API_GLOBALS]?: { trace?: unknown } };

/** Whether spans are recorded in this thread: our SDK started, or a tracer provider registered by its host. */
export function tracingOn(): boolean {
  const globals = globalThis as Flagged;
  return globals[TRACING_ON] === true || globals[API_GLOBALS]?.trace !== undefined;
}

/** Marks this thread's tracing on or off; only the SDK setup calls this. */
export function markTracingOn(on: boolean): void {
  (globalThis as Flagged)[TRACING_ON] = on;
}

/** How a span is placed: its kind, attributes, parent (the active span otherwise) and links. */
export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The remote parent; `baggage` (W3C) travels beside it when a request brought one. */
  parent?: TraceCarrier & { baggage?: string };
  /** Traces this span continues or refers to without being their child. */
  links?: readonly (TraceCarrier | undefined)[];
}

/**
 * Runs `fn` in a span that ends when it returns or its promise settles; a throw or
 * rejection marks the span an error (its type only: messages may quote arguments).
 * With tracing off, `fn` gets a non-recording span and nothing else happens.
 */
export function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => T): T {
  if (!tracingOn()) return fn(NO_SPAN);
  const parent = options.parent ? contextOf(options.parent) : context.active();
  const links = linksOf(options.links);
  return trace
    .getTracer(TRACER_NAME)
    .startActiveSpan(
      name,
      { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}), ...(links.length > 0 ? { links } : {}) },
      parent,
      (span) => {
        let result: T;
        try {
          result = fn(span);
        } catch (error) {
          endFailed(span, error);
          throw error;
        }
        if (result instanceof Promise) {
          return result.then(
            (value) => {
              span.end();
              return value;
            },
            (error: unknown) => {
              endFailed(span, error);
              throw error;
            },
          ) as T;
        }
        span.end();
        return result;
      },
    );
}

/** The active span's context as a carrier to store or send, or `undefined` with tracing off or no span active. */
export function currentCarrier(): TraceCarrier | undefined {
  if (!tracingOn()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return traceCarrierOf(carrier.traceparent, carrier.tracestate);
}

/**
 * `fn` bound to the context active now: called later from anywhere (a timer, another
 * request), its spans are still children of the span active here. `fn` itself with tracing off.
 */
export function bindToActiveContext<F extends (...args: never[]) => unknown>(fn: F): F {
  return tracingOn() ? context.bind(context.active(), fn) : fn;
}

/**
 * A span that already happened, from `startTime` to now (epoch ms): what a service sees of
 * work it only hears about, such as a durable step's checkpoints.
 */
export function recordSpan(name: string, options: SpanOptions & { startTime: number; failed?: boolean }): void {
  if (!tracingOn()) return;
  const parent = options.parent ? contextOf(options.parent) : context.active();
  const span = trace
    .getTracer(TRACER_NAME)
    .startSpan(
      name,
      { kind: options.kind ?? SpanKind.INTERNAL, startTime: options.startTime, ...(options.attributes ? { attributes: options.attributes } : {}) },
      parent,
    );
  if (options.failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Whether a span is active here (a parent for the next one). */
export function hasActiveSpan(): boolean {
  const active = tracingOn() ? trace.getActiveSpan() : undefined;
  return active !== undefined && isSpanContextValid(active.spanContext());
}

/**
 * Links the active span to a trace it reads but does not belong to: a poll of an operation
 * started elsewhere links to the operation's trace. Nothing with tracing off.
 */
export function linkActiveSpan(carrier: TraceCarrier | undefined): void {
  if (!carrier || !tracingOn()) return;
  const linked = spanContextOf(carrier);
  const active = trace.getActiveSpan();
  if (linked && active) active.addLink({ context: linked });
}

/** The span context a carrier names, as a remote one; `undefined` if the propagator finds none. */
export function spanContextOf(carrier: TraceCarrier): SpanContext | undefined {
  const spanContext = trace.getSpanContext(contextOf(carrier));
  return spanContext && isSpanContextValid(spanContext) ? spanContext : undefined;
}

function contextOf(carrier: TraceCarrier & { baggage?: string }): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

function linksOf(carriers: SpanOptions['links']): Link[] {
  const links: Link[] = [];
  for (const carrier of carriers ?? []) {
    const linked = carrier && spanContextOf(carrier);
    if (linked) links.push({ context: linked });
  }
  return links;
}

function endFailed(span: Span, error: unknown): void {
  const type = error instanceof Error ? error.name : typeof error;
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
