/**
 * W3C trace context (https://www.w3.org/TR/trace-context/) as a request brings it and as an
 * operation keeps it: from a request's `params._meta` (SEP-414: `traceparent`, `tracestate`,
 * `baggage`) or, without one there, from its HTTP headers.
 */
import { isObject } from '../shared/json-values.ts';

/** A span context as stored with an operation and propagated: the W3C `traceparent` and `tracestate` values. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

// version-traceId-spanId-flags; an all-zero trace or span id is invalid (W3C trace context §3.2.2).
const TRACEPARENT = /^[\da-f]{2}-(?!0{32})[\da-f]{32}-(?!0{16})[\da-f]{16}-[\da-f]{2}(-.*)?$/;
// tracestate: at most 32 list members, so at most 512 characters as the W3C recommends propagating.
const MAX_TRACESTATE_CHARS = 512;

/** Whether a value is a well-formed `traceparent` (version `ff` is invalid). */
export function isTraceparent(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 512 && TRACEPARENT.test(value) && !value.startsWith('ff');
}

/** The carrier of two propagated values, or `undefined` when `traceparent` is absent or malformed. */
export function traceCarrierOf(traceparent: unknown, tracestate?: unknown): TraceCarrier | undefined {
  if (!isTraceparent(traceparent)) return undefined;
  const state = typeof tracestate === 'string' && tracestate.length > 0 && tracestate.length <= MAX_TRACESTATE_CHARS ? tracestate : undefined;
  return state === undefined ? { traceparent } : { traceparent, tracestate: state };
}

/** The trace context a request's `params._meta` carries (SEP-414). */
export function traceCarrierFromMeta(params: unknown): TraceCarrier | undefined {
  const meta = isObject(params) && isObject(params._meta) ? params._meta : undefined;
  return meta && traceCarrierOf(meta.traceparent, meta.tracestate);
}

/** The W3C `baggage` a request's `params._meta` carries (SEP-414), for the propagator to read. */
export function baggageFromMeta(params: unknown): string | undefined {
  const meta = isObject(params) && isObject(params._meta) ? params._meta : undefined;
  return meta && typeof meta.baggage === 'string' && meta.baggage.length <= 8192 ? meta.baggage : undefined;
}

/** The trace context of an HTTP request's `traceparent` and `tracestate` headers. */
export function traceCarrierFromHeaders(headers: Headers): TraceCarrier | undefined {
  return traceCarrierOf(headers.get('traceparent'), headers.get('tracestate'));
}

/** The trace id (32 hex digits) a carrier names. */
export function traceIdOf(carrier: TraceCarrier): string {
  return carrier.traceparent.slice(3, 35);
}

/** A carrier for a stored record: `undefined` unless it holds a well-formed `traceparent`. */
export function parseTraceCarrier(value: unknown): TraceCarrier | undefined {
  return isObject(value) ? traceCarrierOf(value.traceparent, value.tracestate) : undefined;
}
