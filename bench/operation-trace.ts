/**
 * One operation's trace from a real local run, drawn: `npx tsx bench/operation-trace.ts`.
 * Starts the local stack with OpenTelemetry exporting OTLP/JSON to a receiver in this process
 * (127.0.0.1), subscribes a webhook (another receiver here) to `operation.finished`, runs one
 * `analyze_dataset` task in the Tasks extension with a host's `traceparent` in `_meta`, polls it
 * to its end, then prints the spans per trace and writes docs/images/operation-trace.svg (a
 * waterfall of the operation's trace, the polls' linked traces below it) and, with Chromium, a
 * PNG screenshot of it beside it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { auth } from '@modelcontextprotocol/client';
import { generateWebhookSecret } from '../lambdas/events/webhooks/webhook-secret.ts';
import { startLocalTracing } from '../local/local-tracing.ts';
import { DEV_MCP_SCOPE } from '../local/oauth/dev-authorization-server.ts';
import { startLocalStackWithDevAuthorization } from '../local/oauth/local-stack-with-dev-authorization.ts';
import { REPO_ROOT } from '../cdk/repo-paths.ts';
import { MemoryOAuthProvider, signInWithFetch } from '../test/support/oauth-dev-client.ts';
import { modernRequest } from '../test/support/raw-mcp.ts';

/** One span as OTLP/JSON carries it, cut to what the picture needs. */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  links: { traceId: string; spanId: string }[];
  service: string;
}

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const KIND = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

/** A loopback OTLP/JSON trace receiver collecting every span. */
async function startOtlpReceiver(): Promise<{ url: string; spans: ExportedSpan[]; close: () => Promise<void> }> {
  const spans: ExportedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        spans.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      } catch {
        // Not OTLP/JSON: nothing to collect.
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

// biome-ignore lint/suspicious/noExplicitAny: OTLP/JSON read field by field
function spansOf(request: any): ExportedSpan[] {
  const found: ExportedSpan[] = [];
  for (const resource of request.resourceSpans ?? []) {
    // biome-ignore lint/suspicious/noExplicitAny: as above
    const service = resource.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue ?? '';
    for (const scope of resource.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        found.push({
          traceId: span.traceId,
          spanId: span.spanId,
          ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
          name: span.name,
          kind: span.kind ?? 0,
          startNs: BigInt(span.startTimeUnixNano),
          endNs: BigInt(span.endTimeUnixNano),
          // biome-ignore lint/suspicious/noExplicitAny: as above
          links: (span.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
          service,
        });
      }
    }
  }
  return found;
}

/** One webhook POST as received: its `traceparent` header and its body's `_meta`. */
export interface ReceivedNotice {
  traceparent: string | undefined;
  meta: unknown;
}

/** A receiver of webhook posts that answers verification challenges and takes everything else. */
async function startWebhookSink(): Promise<{ url: string; notices: ReceivedNotice[]; close: () => Promise<void> }> {
  const notices: ReceivedNotice[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { type?: string; challenge?: string; _meta?: unknown };
      if (body.type === 'verification')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: body.challenge }));
      const header = req.headers.traceparent;
      notices.push({ traceparent: typeof header === 'string' ? header : undefined, meta: body._meta });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, notices, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Runs one traced operation on the local stack; the spans of its trace and of the traces linking to it. */
export async function traceOneOperation(): Promise<{ traceId: string; operation: ExportedSpan[]; linked: ExportedSpan[]; notices: ReceivedNotice[] }> {
  const otlp = await startOtlpReceiver();
  const hook = await startWebhookSink();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' };
  const before = Object.fromEntries(Object.keys(otel).map((key) => [key, process.env[key]]));
  Object.assign(process.env, otel);
  const tracing = await startLocalTracing(false);
  // Webhook subscriptions need a principal: the development authorization server signs one in.
  const stack = await startLocalStackWithDevAuthorization(
    { toolsDir: 'state-machines', port: 0, events: { delivery: { baseDelaySeconds: 1 } } },
    { announce: () => undefined },
  );
  const provider = new MemoryOAuthProvider('operation trace');
  await auth(provider, { serverUrl: stack.url, scope: DEV_MCP_SCOPE });
  const pages = await signInWithFetch(provider.authorizationUrls[0] as URL, 'alice');
  await auth(provider, { serverUrl: stack.url, authorizationCode: pages.callback.get('code') as string, iss: pages.callback.get('iss') as string });
  const bearer = { authorization: `Bearer ${(provider.savedTokens as { access_token: string }).access_token}` };
  const traceId = randomBytes(16).toString('hex');
  const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
  try {
    const subscribed = await modernRequest(
      stack.url,
      'events/subscribe',
      {
        name: 'operation.finished',
        arguments: { tool: 'analyze_dataset' },
        delivery: { mode: 'webhook', url: hook.url, secret: generateWebhookSecret() },
      },
      { headers: bearer },
    );
    if (!subscribed.message?.result) throw new Error(`events/subscribe: ${subscribed.text}`);
    const started = await modernRequest(
      stack.url,
      'tools/call',
      { name: 'analyze_dataset', arguments: { rows: 100, delaySeconds: 1 }, _meta: { traceparent } },
      { capabilities: TASKS, headers: bearer },
    );
    const taskId = started.message?.result?.taskId as string | undefined;
    if (!taskId) throw new Error(`tools/call: ${started.text}`);
    for (let polls = 0; polls < 120; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const got = await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: TASKS, headers: bearer });
      if (got.message?.result?.status === 'completed' || got.message?.result?.status === 'failed') break;
    }
    for (let waited = 0; hook.notices.length === 0 && waited < 100; waited++) await new Promise((resolve) => setTimeout(resolve, 100));
    await stack.drainEvents();
  } finally {
    await stack.close();
    await tracing?.forceFlush();
    await tracing?.shutdown();
    for (const [key, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    await hook.close();
    await otlp.close();
  }
  const operation = otlp.spans.filter((s) => s.traceId === traceId);
  const linked = otlp.spans.filter((s) => s.traceId !== traceId && s.links.some((l) => l.traceId === traceId));
  return { traceId, operation, linked, notices: hook.notices };
}

const ROW = 22;
const LABEL = 330;
const WIDTH = 1100;

/** The spans as an SVG waterfall: one row per span, indented under its parent, bars on one time axis. */
export function waterfallSvg(traceId: string, operation: readonly ExportedSpan[], linked: readonly ExportedSpan[]): string {
  const all = [...operation, ...linked];
  // BigInt nanoseconds: Math.min and Math.max take numbers only.
  const starts = all.map((s) => s.startNs).sort((a, b) => (a < b ? -1 : 1));
  const ends = all.map((s) => s.endNs).sort((a, b) => (a < b ? -1 : 1));
  const t0 = starts[0] ?? 0n;
  const t1 = ends.at(-1) ?? t0 + 1n;
  const scale = (WIDTH - LABEL - 90) / Number(t1 - t0);
  const ordered = [...treeOrder(operation), ...treeOrder(linked)];
  const rows = ordered.map(({ span, depth }, index) => {
    const y = 40 + index * ROW;
    const x = LABEL + Number(span.startNs - t0) * scale;
    const w = Math.max(2, Number(span.endNs - span.startNs) * scale);
    const ms = (Number(span.endNs - span.startNs) / 1e6).toFixed(1);
    const inTrace = span.traceId === traceId;
    const color = !inTrace ? '#9aa5b1' : span.kind === 2 ? '#3b82f6' : span.kind === 3 || span.kind === 4 ? '#f59e0b' : '#10b981';
    const label = `${'  '.repeat(depth)}${inTrace ? '' : '↪ '}${span.name}`;
    return [
      `<text x="8" y="${y + 14}" xml:space="preserve">${escapeXml(label)}</text>`,
      `<rect x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${ROW - 8}" rx="3" fill="${color}"><title>${escapeXml(`${span.name} (${KIND[span.kind] ?? span.kind}, ${span.service}) ${ms} ms`)}</title></rect>`,
      `<text x="${(x + w + 4).toFixed(1)}" y="${y + 14}" class="ms">${ms} ms</text>`,
    ].join('');
  });
  const height = 60 + ordered.length * ROW;
  const totalMs = (Number(t1 - t0) / 1e6).toFixed(0);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="ui-monospace, Menlo, Consolas, monospace" font-size="12">
<style>.ms{fill:#555;font-size:11px}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="8" y="22" font-weight="bold">trace ${traceId}: ${operation.length} spans in ${totalMs} ms; ↪ a poll's own trace, linked to it (${linked.length} spans)</text>
${rows.join('\n')}
</svg>
`;
}

/** Spans in tree order (each after its parent, siblings by start), with their depth; a span whose parent is elsewhere is a root. */
function treeOrder(spans: readonly ExportedSpan[]): { span: ExportedSpan; depth: number }[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string | undefined, ExportedSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanId && ids.has(span.parentSpanId) ? span.parentSpanId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const out: { span: ExportedSpan; depth: number }[] = [];
  const visit = (parent: string | undefined, depth: number) => {
    for (const span of (children.get(parent) ?? []).sort((a, b) => (a.startNs < b.startNs ? -1 : 1))) {
      out.push({ span, depth });
      visit(span.spanId, depth + 1);
    }
  };
  visit(undefined, 0);
  return out;
}

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** A PNG of the SVG, rendered by headless Chromium (playwright-core, the system's Chromium). */
async function screenshot(svgFile: string, pngFile: string): Promise<boolean> {
  const executablePath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
  if (!executablePath) return false;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ deviceScaleFactor: 1 });
    await page.goto(`file://${svgFile}`);
    await page.locator('svg').screenshot({ path: pngFile });
    return true;
  } finally {
    await browser.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { traceId, operation, linked, notices } = await traceOneOperation();
  const byName = new Map<string, number>();
  for (const span of operation) byName.set(span.name, (byName.get(span.name) ?? 0) + 1);
  const linkedTraces = new Set(linked.map((s) => s.traceId));
  console.log(`trace ${traceId}: ${operation.length} spans in the operation's trace; ${linkedTraces.size} linked traces (${linked.length} spans)`);
  for (const [name, count] of [...byName].sort()) console.log(`  ${String(count).padStart(3)}  ${name}`);
  console.log(`webhook traceparent headers: ${notices.map(({ traceparent: t }) => (t?.includes(traceId) ? 'in the trace' : String(t))).join(', ') || 'none'}`);
  const dir = join(REPO_ROOT, 'docs', 'images');
  await mkdir(dir, { recursive: true });
  const svgFile = join(dir, 'operation-trace.svg');
  await writeFile(svgFile, waterfallSvg(traceId, operation, linked));
  const png = join(dir, 'operation-trace.png');
  console.log((await screenshot(svgFile, png)) ? `wrote ${svgFile} and ${png}` : `wrote ${svgFile} (no Chromium for the PNG)`);
  process.exit(0);
}
