/**
 * A minimal EventBridge endpoint (AWS JSON 1.1, `AWSEvents.PutEvents` only) for the events
 * status sync puts, so the same PutEvents code runs locally as in AWS. Each entry becomes the
 * event EventBridge would deliver to a rule's target (version, id, source, detail-type,
 * account, time, region, resources, detail), handed to `onEvent` without waiting on it.
 * It listens on 127.0.0.1 only. Given `credentials`, it takes only requests signed (SigV4) with
 * that key: every event it accepts may reach a webhook with a valid signature, so an unsigned
 * one from another process must not (issue 27). Without, it authenticates nothing: as deployed,
 * the IAM gateway in front of it checks the caller's `events:PutEvents` grant on the bus.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySigV4, type VerifyResult } from '../iam/sigv4-verifier.ts';

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
  /**
   * The only key requests may be signed with (SigV4, service `events`, the endpoint's Region).
   * @default none: every request is taken, for use behind the IAM gateway only
   */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /**
   * @deprecated Not used: the endpoint always listens on 127.0.0.1, whatever the server's `--host`,
   * as only this machine's own processes may put events.
   */
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

/** Where every local AWS endpoint listens. */
const LOOPBACK = '127.0.0.1';

/** Starts the endpoint on a loopback port. */
export async function startPutEventsEndpoint(options: PutEventsEndpointOptions): Promise<PutEventsEndpoint> {
  const buses = new Set(options.buses ?? ['default']);
  const { credentials } = options;
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => sendError(res, 500, 'InternalException', error instanceof Error ? error.message : String(error)));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const bytes = await readBody(req);
    if (bytes === undefined)
      return sendError(res, 413, 'ValidationException', `Total size of the entries in the request is over the limit of ${MAX_REQUEST_BYTES} bytes.`);
    if (credentials) {
      const url = new URL(req.url ?? '/', 'http://endpoint');
      const verified = await verifySigV4(
        { method: req.method ?? 'POST', host: req.headers.host ?? '', path: url.pathname, query: url.searchParams, headers: headerRecord(req), body: bytes },
        {
          service: 'events',
          region: options.region,
          lookup: (key) => (key === credentials.accessKeyId ? { secretAccessKey: credentials.secretAccessKey } : undefined),
        },
      );
      if (!verified.ok) return sendError(res, 400, ...signatureError(verified));
    }
    const body = bytes.toString('utf8');
    const target = req.headers['x-amz-target'];
    if (req.method !== 'POST' || target !== 'AWSEvents.PutEvents') {
      return sendError(
        res,
        400,
        'UnknownOperationException',
        `The local EventBridge endpoint serves AWSEvents.PutEvents only, not ${String(target ?? req.method)}.`,
      );
    }
    let request: { Entries?: unknown };
    try {
      request = JSON.parse(body) as { Entries?: unknown };
    } catch {
      return sendError(res, 400, 'SerializationException', 'The request body is not JSON.');
    }
    const entries = request.Entries;
    if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_ENTRIES) {
      return sendError(
        res,
        400,
        'ValidationException',
        `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and ${MAX_ENTRIES}`,
      );
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
    server.listen(options.port ?? 0, LOOPBACK, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${address}:${port}`,
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

/** EventBridge's answer to a request it cannot authenticate, as the IAM gateway gives it. */
function signatureError(verified: Extract<VerifyResult, { ok: false }>): [string, string] {
  switch (verified.problem) {
    case 'missing':
      return ['MissingAuthenticationTokenException', 'Missing Authentication Token'];
    case 'unknown-key':
    case 'bad-token':
      return ['UnrecognizedClientException', 'The security token included in the request is invalid.'];
    case 'malformed':
      return ['IncompleteSignatureException', "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters."];
    case 'wrong-scope':
      return ['InvalidSignatureException', "Credential should be scoped to correct service: 'events'."];
    case 'mismatch':
      return [
        'InvalidSignatureException',
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
      ];
    case 'expired':
      return ['InvalidSignatureException', verified.message];
  }
}

function headerRecord(req: IncomingMessage): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) out[name] = Array.isArray(value) ? value.join(',') : value;
  return out;
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES + 4096) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) return void res.destroy();
  send(res, status, { __type: type, message });
}
