/**
 * A closed-loop HTTP load generator: `concurrency` workers, each posting the same request
 * again as soon as the previous answer has been read, for a fixed time, over one
 * node:http keep-alive Agent with `maxSockets = concurrency`.
 */
import { Agent, request as httpRequest } from 'node:http';

/** One request, posted again and again. */
export interface LoadTarget {
  url: URL;
  body: string;
  headers: Record<string, string>;
  /** A new body for each request (e.g. a fresh SEP-1391 token per start); `body` otherwise. */
  nextBody?: () => string;
}

export interface LoadResult {
  /** Answered with HTTP 200 and a JSON-RPC result. */
  ok: number;
  /** Anything else (a status other than 200, a JSON-RPC error, a transport error). */
  errors: number;
  seconds: number;
  /** Latency of each answered request, milliseconds. */
  latencies: number[];
}

export interface LoadOptions {
  concurrency: number;
  seconds: number;
}

/** Runs the load and returns what it measured. */
export async function runLoad(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const headersFor = (body: string) => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...target.headers,
    'content-length': String(Buffer.byteLength(body)),
  });
  const fixedHeaders = headersFor(target.body);
  const result: LoadResult = { ok: 0, errors: 0, seconds: 0, latencies: [] };
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      const body = target.nextBody?.() ?? target.body;
      const answer = await post(agent, target.url, body, target.nextBody ? headersFor(body) : fixedHeaders).catch(() => undefined);
      result.latencies.push(performance.now() - sent);
      // A result, not an error: `"result":` appears in a JSON-RPC result only (bodies are JSON or SSE).
      if (answer && answer.status === 200 && answer.text.includes('"result":')) result.ok++;
      else result.errors++;
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    agent.destroy();
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

function post(agent: Agent, url: URL, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The value at quantile `q` (0..1) of `sorted` (ascending). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
