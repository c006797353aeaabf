/**
 * The AWS JSON 1.0 protocol as Step Functions speaks it: `POST /` with
 * `X-Amz-Target: AWSStepFunctions.<Action>` and a JSON body; errors are HTTP 400 with
 * `{"__type", "message"}` (500 for our own faults). This is the one place where errors
 * become HTTP statuses. Request bodies are never logged: they carry tool arguments.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { isObject } from '../../lambdas/shared/json-values.ts';
import { describeError } from '../describe-error.ts';
import type { SfnAction } from './sfn-facade-actions.ts';
import { SfnApiError, type SfnErrorName } from './sfn-facade-errors.ts';

const TARGET_PREFIX = 'AWSStepFunctions.';
const CONTENT_TYPE = 'application/x-amz-json-1.0';
/** Well above the largest valid request (256 KiB of input plus envelope). */
const MAX_BODY_BYTES = 1024 * 1024;

export function createSfnRequestListener(actions: Record<string, SfnAction>, logger: Pick<Console, 'warn' | 'error'>): RequestListener {
  return (req, res) => {
    const requestId = randomUUID();
    handle(req, actions)
      .then((body) => send(res, requestId, 200, body))
      .catch((error: unknown) => {
        if (error instanceof SfnApiError) {
          send(res, requestId, 400, apiError(error.type, error.message));
          return;
        }
        logger.error(`sfn facade: request ${requestId} (${String(req.headers['x-amz-target'])}) failed: ${describeError(error)}`);
        send(res, requestId, 500, apiError('InternalFailure', 'The local Step Functions runtime failed to process the request'));
      });
  };
}

async function handle(req: IncomingMessage, actions: Record<string, SfnAction>): Promise<object> {
  const target = String(req.headers['x-amz-target'] ?? '');
  const name = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
  const action = req.method === 'POST' && Object.hasOwn(actions, name) ? actions[name] : undefined;
  const text = await readBody(req);
  if (!action) {
    throw new SfnApiError('UnknownOperationException', `Unknown operation ${target || '(no X-Amz-Target)'}`);
  }
  let body: unknown;
  try {
    body = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new SfnApiError('SerializationException', 'The request body is not valid JSON');
  }
  if (!isObject(body)) {
    throw new SfnApiError('SerializationException', 'The request body must be a JSON object');
  }
  return action(body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) reject(new SfnApiError('ValidationException', `The request body exceeds ${MAX_BODY_BYTES} bytes`));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

function send(res: ServerResponse, requestId: string, status: number, body: object): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': requestId,
  });
  res.end(text);
}

function apiError(type: SfnErrorName | 'InternalFailure', message: string): object {
  return { __type: type, message };
}
