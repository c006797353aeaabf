/** A loopback AWS stand-in for the hot calls' tests: answers as scripted and records what came. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  /** When it arrived (performance.now()). */
  at: number;
  method?: string;
  url?: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export type Answer = { status: number; body: unknown };

/** Whether the request came by the SDK path (its middleware adds an invocation id; the hot path does not). */
export const fromSdk = (request: Recorded) => request.headers['amz-sdk-invocation-id'] !== undefined;

/** Answers each request with the next of `answers` (the last one repeats) or as `answers` says. */
export async function scriptedServer(
  answers: readonly Answer[] | ((request: Recorded) => Answer),
): Promise<{ endpoint: string; requests: Recorded[]; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded = { at: performance.now(), method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks) };
      requests.push(recorded);
      const answer = typeof answers === 'function' ? answers(recorded) : (answers[Math.min(requests.length - 1, answers.length - 1)] as Answer);
      response.writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
