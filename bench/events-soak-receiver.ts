/**
 * The Events soak's webhook receiver on 127.0.0.1: one path per subscription
 * (`/hook/<index>`), answering verifications, failing a share of deliveries with 503, and
 * keeping only ids and times (bodies are up to 256 KiB each).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Arrivals } from './events-soak-arrivals.ts';

export interface Receiver {
  origin: string;
  hooks: Arrivals[];
  answered503: number;
  posts: number;
  close(): Promise<void>;
}

/** Starts a receiver for `count` subscriptions that answers 503 to `failRate` of the deliveries. */
export async function startReceiver(count: number, failRate: number, random: () => number): Promise<Receiver> {
  const receiver: Receiver = { origin: '', hooks: Array.from({ length: count }, () => new Arrivals()), answered503: 0, posts: 0, close: async () => {} };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      receiver.posts++;
      const index = Number(/^\/hook\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type?: string; challenge?: string; eventId?: string; timestamp?: string };
      if (body.type === 'verification') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: body.challenge }));
        return;
      }
      if (random() < failRate) {
        receiver.answered503++;
        res.writeHead(503).end();
        return;
      }
      const hook = receiver.hooks[index];
      if (hook && body.eventId && body.timestamp) hook.note(body.eventId, body.timestamp);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}
