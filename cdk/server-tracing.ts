/**
 * The tracing setting of AsyncMcpServer resolved into what each part needs: whether X-Ray
 * is on (the functions' and the state machines' own segments, and the IAM that writes them),
 * the OpenTelemetry environment every function gets, and the layers it runs with.
 */
import { Token } from 'aws-cdk-lib';

/** Spans exported by each function's OpenTelemetry SDK, and the traces AWS records itself. */
export type ServerTracing = XRayTracing | AdotLayerTracing | OtlpCollectorTracing;

interface TracingOptions {
  /**
   * `OTEL_SERVICE_NAME` of every function.
   * @default 'async-mcp'
   */
  readonly serviceName?: string;
  /**
   * `OTEL_TRACES_SAMPLER`, e.g. `parentbased_traceidratio`.
   * @default - OpenTelemetry's default, `parentbased_always_on`
   */
  readonly sampler?: string;
  /**
   * `OTEL_TRACES_SAMPLER_ARG`, e.g. `0.1`.
   * @default - none
   */
  readonly samplerArg?: string;
}

/** X-Ray active tracing only: Lambda's and Step Functions' own segments, no OpenTelemetry spans (`tracing: true`). */
export interface XRayTracing extends TracingOptions {
  readonly exporter: 'x-ray';
}

/**
 * The AWS Distro for OpenTelemetry Lambda layer: its collector extension receives each
 * function's OTLP on loopback and writes X-Ray, beside X-Ray active tracing on the functions
 * and the state machines.
 */
export interface AdotLayerTracing extends TracingOptions {
  readonly exporter: 'adot-layer';
  /**
   * The ADOT Node.js layer's ARN for the stack's region and arm64 (AWS publishes one per region
   * and version; the functions run on arm64).
   */
  readonly layerArn: string;
}

/** OTLP straight to a collector the functions reach: no X-Ray, and so no X-Ray IAM. */
export interface OtlpCollectorTracing extends TracingOptions {
  readonly exporter: 'otlp';
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`, e.g. `http://collector.internal:4318`. */
  readonly endpoint: string;
  /**
   * `OTEL_EXPORTER_OTLP_PROTOCOL`.
   * @default 'http/protobuf'
   */
  readonly protocol?: 'http/protobuf' | 'http/json';
}

/** What one function and one state machine get from the setting. */
export interface FunctionTracing {
  /** X-Ray active tracing (Lambda) and tracingEnabled (Step Functions), with their xray:Put* grants. */
  readonly xray: boolean;
  /** The OpenTelemetry environment; empty when the functions export no spans. */
  readonly environment: Readonly<Record<string, string>>;
  /** Layers every function runs with. */
  readonly layerArns: readonly string[];
}

/** Tracing off: no X-Ray, no environment, no layer. */
export const NO_TRACING: FunctionTracing = { xray: false, environment: {}, layerArns: [] };

/** Where the ADOT layer's collector extension takes OTLP over HTTP (its default configuration). */
export const ADOT_COLLECTOR_ENDPOINT = 'http://localhost:4318';

const DEFAULT_SERVICE_NAME = 'async-mcp';

/**
 * The tracing prop resolved; throws naming the field that is wrong. `stackRegion` checks a
 * layer's region when both are known at synth (a layer is usable in its own region only).
 */
export function resolveServerTracing(prop: boolean | ServerTracing | undefined, stackRegion?: string): FunctionTracing {
  if (prop === undefined || prop === false) return NO_TRACING;
  const setting: ServerTracing = prop === true ? { exporter: 'x-ray' } : prop;
  switch (setting.exporter) {
    case 'x-ray':
      return { xray: true, environment: {}, layerArns: [] };
    case 'adot-layer':
      checkLayerArn(setting.layerArn, stackRegion);
      return {
        xray: true,
        environment: { ...otelEnvironment(setting), OTEL_EXPORTER_OTLP_ENDPOINT: ADOT_COLLECTOR_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' },
        layerArns: [setting.layerArn],
      };
    case 'otlp':
      checkEndpoint(setting.endpoint);
      return {
        xray: false,
        environment: {
          ...otelEnvironment(setting),
          OTEL_EXPORTER_OTLP_ENDPOINT: setting.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: setting.protocol ?? 'http/protobuf',
        },
        layerArns: [],
      };
    default:
      throw new Error(`tracing.exporter must be 'x-ray', 'adot-layer' or 'otlp', got ${JSON.stringify((setting as { exporter: unknown }).exporter)}`);
  }
}

function otelEnvironment(setting: TracingOptions): Record<string, string> {
  return {
    OTEL_SERVICE_NAME: setting.serviceName ?? DEFAULT_SERVICE_NAME,
    ...(setting.sampler ? { OTEL_TRACES_SAMPLER: setting.sampler } : {}),
    ...(setting.samplerArg ? { OTEL_TRACES_SAMPLER_ARG: setting.samplerArg } : {}),
  };
}

function checkLayerArn(layerArn: string, stackRegion: string | undefined): void {
  if (Token.isUnresolved(layerArn)) return;
  const parts = layerArn.split(':');
  if (parts.length !== 8 || parts[0] !== 'arn' || parts[2] !== 'lambda' || parts[5] !== 'layer' || !/^\d+$/.test(parts[7] ?? '')) {
    throw new Error(`tracing.layerArn must be a layer version's ARN (arn:aws:lambda:<region>:<account>:layer:<name>:<version>), got ${layerArn}`);
  }
  const layerRegion = parts[3];
  if (stackRegion !== undefined && !Token.isUnresolved(stackRegion) && layerRegion !== stackRegion) {
    throw new Error(`tracing.layerArn is in ${layerRegion} but the stack deploys to ${stackRegion}: a Lambda layer is usable in its own region only`);
  }
}

function checkEndpoint(endpoint: string): void {
  if (Token.isUnresolved(endpoint)) return;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`tracing.endpoint must be an http(s) URL, got ${endpoint}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`tracing.endpoint must be an http(s) URL, got ${endpoint}`);
  // Credentials in the URL would sit in every function's plain environment.
  if (url.username || url.password) throw new Error('tracing.endpoint must not carry credentials');
}
