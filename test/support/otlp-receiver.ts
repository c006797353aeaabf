/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 for the tracing tests: it decodes `http/json`
 * exports into spans, each with its resource's service name, keeps every body as it came (so
 * a test can look for a value that must never be exported), and answers as the test says:
 * 200, an error status, or never (a collector that hangs).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the receiver decoded it from OTLP/JSON. */
export interface ReceivedSpan {
  serviceName: string | undefined;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** How the receiver answers an export: `200`, another status, or `'never'`. */
export type OtlpAnswer = number | 'never';

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Every export's body, as text (protobuf ones too, where only a search for a value makes sense). */
  readonly bodies: string[];
  /** @default 200 */
  answer: OtlpAnswer;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value?: OtlpValue;
}
interface OtlpJsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
}
interface OtlpJsonExport {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpJsonSpan[] }[] }[];
}

function attributeValue(value: OtlpValue | undefined): unknown {
  return value === undefined ? undefined : Object.values(value)[0];
}

function attributesOf(attributes: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, attributeValue(value)]));
}

function spansOf(body: string): ReceivedSpan[] {
  const decoded = JSON.parse(body) as OtlpJsonExport;
  return (decoded.resourceSpans ?? []).flatMap((resource) => {
    const serviceName = attributesOf(resource.resource?.attributes)['service.name'];
    return (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        serviceName: typeof serviceName === 'string' ? serviceName : undefined,
        traceId: span.traceId,
        spanId: span.spanId,
        ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
      })),
    );
  });
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const hung: ServerResponse[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const json = (request.headers['content-type'] ?? '').includes('json');
      receiver.bodies.push(body);
      if (json) receiver.spans.push(...spansOf(body));
      if (receiver.answer === 'never') {
        hung.push(response);
        return;
      }
      // An empty export response, in the request's encoding.
      if (json) response.writeHead(receiver.answer, { 'content-type': 'application/json' }).end('{}');
      else response.writeHead(receiver.answer, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  const receiver: OtlpReceiver = {
    url: `http://127.0.0.1:${port}`,
    spans: [],
    bodies: [],
    answer: 200,
    close: () =>
      new Promise<void>((closed) => {
        for (const response of hung) response.destroy();
        server.close(() => closed());
        server.closeAllConnections();
      }),
  };
  return receiver;
}
