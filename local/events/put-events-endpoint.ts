/**
 * A minimal EventBridge endpoint (AWS JSON 1.1, `AWSEvents.PutEvents` only) for the events
 * status sync puts, so the same PutEvents code runs locally as in AWS. Each entry becomes the
 * event EventBridge would deliver to a rule's target (version, id, source, detail-type,
 * account, time, region, resources, detail), handed to `onEvent` without waiting on it.
 * It does no authentication: as deployed, the IAM gateway in front of it checks the caller's
 * `events:PutEvents` grant on the bus.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The event a rule's target receives. */
export interface EventBridgeEvent {
  version: '0';
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  /** ISO 8601, to the second, as EventBridge writes it. */
  time: string;
  region: string;
  resources: string[];
  detail: unknown;
}

export interface PutEventsEndpointOptions {
  region: string;
  accountId: string;
  /** The buses that exist, by name. @default ['default'] */
  buses?: readonly string[];
  /** Each accepted event, with the name of its bus; called after the answer is decided, never awaited. */
  onEvent: (event: EventBridgeEvent, busName: string) => void;
  /** @default '127.0.0.1' */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
}

export interface PutEventsEndpoint {
  /** The URL to pass as the EventBridge client's `endpoint` (or to the IAM gateway as its upstream). */
  endpoint: string;
  close(): Promise<void>;
}

/** PutEvents' own limits. */
const MAX_ENTRIES = 10;
const MAX_REQUEST_BYTES = 256 * 1024;

/** One request entry, as the SDK serializes it (`Time` in epoch seconds). */
interface RequestEntry {
  Source?: unknown;
  DetailType?: unknown;
  Detail?: unknown;
  EventBusName?: unknown;
  Resources?: unknown;
  Time?: unknown;
}

type ResultEntry = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

/** Starts the endpoint on a loopback port. */
export async function startPutEventsEndpoint(options: PutEventsEndpointOptions): Promise<PutEventsEndpoint> {
  const buses = new Set(options.buses ?? ['default']);
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => sendError(res, 500, 'InternalException', error instanceof Error ? error.message : String(error)));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body === undefined) return sendError(res, 413, 'ValidationException', `Total size of the entries in the request is over the limit of ${MAX_REQUEST_BYTES} bytes.`);
    const target = req.headers['x-amz-target'];
    if (req.method !== 'POST' || target !== 'AWSEvents.PutEvents') {
      return sendError(res, 400, 'UnknownOperationException', `The local EventBridge endpoint serves AWSEvents.PutEvents only, not ${String(target ?? req.method)}.`);
    }
    let request: { Entries?: unknown };
    try {
      request = JSON.parse(body) as { Entries?: unknown };
    } catch {
      return sendError(res, 400, 'SerializationException', 'The request body is not JSON.');
    }
    const entries = request.Entries;
    if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_ENTRIES) {
      return sendError(res, 400, 'ValidationException', `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and ${MAX_ENTRIES}`);
    }
    const accepted: Array<{ event: EventBridgeEvent; bus: string }> = [];
    const results: ResultEntry[] = entries.map((raw: unknown) => {
      const entry = (raw ?? {}) as RequestEntry;
      const checked = eventFromEntry(entry, options, buses);
      if ('ErrorCode' in checked) return checked;
      accepted.push(checked);
      return { EventId: checked.event.id };
    });
    const failed = results.filter((result) => 'ErrorCode' in result).length;
    send(res, 200, { FailedEntryCount: failed, Entries: results });
    for (const { event, bus } of accepted) options.onEvent(event, bus);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An entry as EventBridge checks it, or the entry-level error it reports. */
function eventFromEntry(
  entry: RequestEntry,
  scope: { region: string; accountId: string },
  buses: ReadonlySet<string>,
): { event: EventBridgeEvent; bus: string } | { ErrorCode: string; ErrorMessage: string } {
  for (const field of ['Source', 'DetailType', 'Detail'] as const) {
    if (typeof entry[field] !== 'string' || entry[field] === '') return { ErrorCode: 'InvalidArgument', ErrorMessage: `Parameter ${field} is not valid.` };
  }
  let detail: unknown;
  try {
    detail = JSON.parse(entry.Detail as string);
  } catch {
    return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
  }
  if (detail === null || typeof detail !== 'object' || Array.isArray(detail)) return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
  const bus = busNameOf(entry.EventBusName, scope);
  if (bus === undefined || !buses.has(bus)) {
    return { ErrorCode: 'ResourceNotFoundException', ErrorMessage: `Event bus ${String(entry.EventBusName)} does not exist.` };
  }
  const resources = Array.isArray(entry.Resources) ? entry.Resources.filter((r): r is string => typeof r === 'string') : [];
  const seconds = typeof entry.Time === 'number' ? entry.Time : Date.now() / 1000;
  return {
    bus,
    event: {
      version: '0',
      id: randomUUID(),
      'detail-type': entry.DetailType as string,
      source: entry.Source as string,
      account: scope.accountId,
      time: new Date(Math.floor(seconds) * 1000).toISOString().replace('.000Z', 'Z'),
      region: scope.region,
      resources,
      detail,
    },
  };
}

/** The bus an entry names: absent is the default bus; an ARN must be of this account and Region. */
function busNameOf(name: unknown, scope: { region: string; accountId: string }): string | undefined {
  if (name === undefined || name === null || name === '') return 'default';
  if (typeof name !== 'string') return undefined;
  const arn = name.match(/^arn:[^:]+:events:([^:]+):(\d{12}):event-bus\/(.+)$/);
  if (!arn) return name.startsWith('arn:') ? undefined : name;
  return arn[1] === scope.region && arn[2] === scope.accountId ? arn[3] : undefined;
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES + 4096) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) return void res.destroy();
  send(res, status, { __type: type, message });
}
