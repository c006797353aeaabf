/**
 * A POST whose SSE answer is read as it arrives, message by message: a server-to-client
 * request comes on the stream before the response that ends it, and the test answers it
 * while the stream is still open.
 */
import { LEGACY_VERSION } from './raw-mcp.ts';

export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read raw JSON-RPC results field by field; each expect checks the shape
  params?: any;
  // biome-ignore lint/suspicious/noExplicitAny: tests read raw JSON-RPC results field by field; each expect checks the shape
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

export interface OpenStream {
  status: number;
  headers: Headers;
  /** The next JSON-RPC message on the stream; rejects when the stream ends first. */
  next(): Promise<JsonRpcMessage>;
  /** Every message until the stream ends. */
  rest(): Promise<JsonRpcMessage[]>;
  /** Stops reading (the client goes away). */
  cancel(): Promise<void>;
}

/** POSTs `body` and returns the stream still open; a JSON answer reads as one message. */
export async function openStream(url: URL | string, body: unknown, headers: Record<string, string> = {}): Promise<OpenStream> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LEGACY_VERSION, ...headers },
    body: JSON.stringify(body),
  });
  if (!response.body) throw new Error(`POST ${url} answered ${response.status} without a body`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const queue: JsonRpcMessage[] = [];
  let buffer = '';
  let done = false;
  const isJson = (response.headers.get('content-type') ?? '').includes('application/json');

  async function fill(): Promise<void> {
    const chunk = await reader.read();
    if (chunk.done) {
      done = true;
      if (isJson && buffer.trim()) queue.push(JSON.parse(buffer));
      return;
    }
    buffer += decoder.decode(chunk.value, { stream: true });
    if (isJson) return;
    const events = buffer.split(/\r?\n\r?\n/);
    buffer = events.pop() ?? '';
    for (const event of events) {
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
        .join('\n');
      if (data.trim()) queue.push(JSON.parse(data));
    }
  }

  return {
    status: response.status,
    headers: response.headers,
    async next() {
      for (;;) {
        const message = queue.shift();
        if (message) return message;
        if (done) throw new Error('the stream ended');
        await fill();
      }
    },
    async rest() {
      while (!done) await fill();
      return queue.splice(0);
    },
    cancel: () => reader.cancel(),
  };
}

/** A JSON-RPC response POSTed as its own request, the way a client answers a server request. */
export async function postAnswer(url: URL | string, message: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LEGACY_VERSION, ...headers },
    body: JSON.stringify(message),
  });
  return { status: response.status, text: await response.text() };
}
