/**
 * A webhook receiver on 127.0.0.1 for the Events tests: every POST is recorded as it came
 * (headers and exact body), then answered by the handler the test sets: the AI SDK's
 * `experimental_createMCPEventWebhook`, or a hand-made answer (503, a wrong challenge).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPost {
  readonly path: string;
  readonly headers: Headers;
  readonly body: string;
  readonly status: number;
}

export type WebhookHandler = (request: Request) => Promise<Response>;

export interface WebhookReceiver {
  /** The base URL, `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly posts: ReceivedPost[];
  /** Answers each POST; the default answers 204. */
  handle: WebhookHandler;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let server: Server | undefined;
  const receiver: WebhookReceiver = {
    origin: '',
    posts: [],
    handle: async () => new Response(null, { status: 204 }),
    close: () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
  };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const request = new Request(new URL(req.url ?? '/', receiver.origin), {
        method: req.method ?? 'POST',
        headers,
        ...(req.method === 'POST' ? { body } : {}),
      });
      let response: Response;
      try {
        response = await receiver.handle(request);
      } catch {
        response = new Response(null, { status: 500 });
      }
      receiver.posts.push({ path: req.url ?? '/', headers, body, status: response.status });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  (receiver as { origin: string }).origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
