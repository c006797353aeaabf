/**
 * OpenTelemetry's SDK, started from its standard environment: the OTLP exporter the
 * protocol names (`http/protobuf` by default, or `http/json`), `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`(`_ARG`) and the batch processor's
 * `OTEL_BSP_*`. Loaded only where tracing is on (tracing-setup.ts), never at a function's init.
 */
import { context, diag, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, getNumberFromEnv, getStringFromEnv, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { markTracingOn } from './tracing.ts';

/** What the running SDK offers its host: flush before a process or an invocation ends, and stop. */
export interface TracingSdk {
  forceFlush(): Promise<void>;
  /**
   * Exports what is buffered, waiting at most `boundMs`, and never throws: the failure's name
   * (`TimeoutError` past the bound), or `undefined` once exported. An export still under way
   * at the bound goes on. Here rather than in its caller: only a process with tracing on loads it.
   */
  flushWithin(boundMs: number): Promise<string | undefined>;
  shutdown(): Promise<void>;
}

export interface TracingSdkOptions {
  /** The service name when `OTEL_SERVICE_NAME` gives none. */
  serviceName: string;
  /** Processors beside the exporter's (the local `--trace` waterfall). */
  processors?: SpanProcessor[];
  /** Whether to export over OTLP; `false` when only `processors` should see spans. @default true */
  export?: boolean;
}

/** Starts the SDK in this thread and registers it with the API; a second call returns the first's SDK. */
export function startTracingSdk(options: TracingSdkOptions): TracingSdk {
  const running = (globalThis as Started)[STARTED];
  if (running) return running;
  const processors = [
    ...(options.export === false ? [] : [new BatchSpanProcessor({ exporter: exporterFromEnv(), ...batchSettingsFromEnv() })]),
    ...(options.processors ?? []),
  ];
  const provider = new TracerProvider({
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': options.serviceName }))
      .merge(detectResources({ detectors: [envDetector] })),
    sampler: samplerFromEnv(),
    spanProcessors: processors,
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(provider);
  markTracingOn(true);
  const sdk: TracingSdk = {
    forceFlush: () => provider.forceFlush(),
    flushWithin: (boundMs) => flushWithin(provider, boundMs),
    shutdown: async () => {
      markTracingOn(false);
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
      (globalThis as Started)[STARTED] = undefined;
    },
  };
  (globalThis as Started)[STARTED] = sdk;
  return sdk;
}

async function flushWithin(provider: TracerProvider, boundMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<string>((expired) => {
    timer = setTimeout(() => expired('TimeoutError'), boundMs);
  });
  try {
    return await Promise.race([provider.forceFlush().then(() => undefined, errorName), bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** The provider rejects with every processor's error: the first one's name. */
function errorName(error: unknown): string {
  const first: unknown = Array.isArray(error) ? error[0] : error;
  return first instanceof Error ? first.name : typeof first;
}

const STARTED = Symbol.for('async-mcp.tracing-sdk');
type Started = { [STARTED]?: TracingSdk | undefined };

/** OTLP over HTTP as `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL` says; the exporters read endpoint, headers and timeout themselves. */
function exporterFromEnv(): SpanExporter {
  const protocol = getStringFromEnv('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? getStringFromEnv('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (protocol === 'http/json') return new OtlpJsonExporter();
  if (protocol !== 'http/protobuf') diag.warn(`OTLP protocol ${protocol} is not served here: exporting http/protobuf`);
  return new OtlpProtoExporter();
}

/** The sampler `OTEL_TRACES_SAMPLER` names, as the SDK specification lists them; parent-based always-on by default. */
function samplerFromEnv(): Sampler {
  const ratio = getNumberFromEnv('OTEL_TRACES_SAMPLER_ARG');
  const byRatio = () => new TraceIdRatioBasedSampler(ratio === undefined || ratio < 0 || ratio > 1 ? 1 : ratio);
  switch (getStringFromEnv('OTEL_TRACES_SAMPLER')) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return byRatio();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: byRatio() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function batchSettingsFromEnv() {
  const settings = {
    scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}
