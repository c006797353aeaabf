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
  links: { traceId: string; spanId: string }[];
}

/** How the receiver answers an export: `200`, another status, or `'never'`. */
export type OtlpAnswer = number | 'never';

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Every export's body, as text (protobuf ones too, where only a search for a value makes sense). */
  readonly bodies: string[];
  /** Every export as it came, bytes and content type (a protobuf body holds ids as raw bytes). */
  readonly exports: { contentType: string; body: Buffer }[];
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
  links?: { traceId: string; spanId: string }[];
}
interface OtlpJsonExport {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpJsonSpan[] }[] }[];
}

/** OTLP/JSON ids are hex; a base64 one (as proto3's JSON mapping writes bytes) is turned into hex. */
function hexId(id: string): string {
  return /^[\da-f]*$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');
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
        traceId: hexId(span.traceId),
        spanId: hexId(span.spanId),
        ...(span.parentSpanId ? { parentSpanId: hexId(span.parentSpanId) } : {}),
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        links: (span.links ?? []).map((link) => ({ traceId: hexId(link.traceId), spanId: hexId(link.spanId) })),
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
      const bytes = Buffer.concat(chunks);
      const body = bytes.toString('utf8');
      const contentType = request.headers['content-type'] ?? '';
      const json = contentType.includes('json');
      receiver.bodies.push(body);
      receiver.exports.push({ contentType, body: bytes });
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
    exports: [],
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
