/**
 * The local durable-execution service: the durable half of the Lambda API on 127.0.0.1,
 * running registered durable handlers in this process on the checkpoint backend of
 * `@aws/durable-execution-sdk-js-testing`. The one entry point to this folder.
 */
import { DurableExecutionApiClient, type DurableLambdaHandler } from '@aws/durable-execution-sdk-js';
import { LambdaClient } from '@aws-sdk/client-lambda';
import type { DurableStatusChangeEvent } from '../../lambdas/aws/durable-status-events.ts';
import { serveFetch } from '../node-http-server.ts';
import { CheckpointWorkerClient } from './checkpoint-worker-client.ts';
import { DurableExecutionService } from './durable-execution-service.ts';
import { ExecutionStore } from './execution-store.ts';
import { lambdaDurableRoutes } from './lambda-durable-routes.ts';

export type { DurableExecutionService } from './durable-execution-service.ts';

/** The options of {@link startLocalDurableService}. */
export interface LocalDurableServiceOptions {
  /** Durable handlers by function name: modules' `handler`, built with `withDurableExecution`. */
  functions: Record<string, DurableLambdaHandler>;
  /** @default 0 (a free port) */
  port?: number;
  /** @default 'us-east-1' */
  region?: string;
  /** @default '000000000000' */
  accountId?: string;
  /**
   * Gets the status-change event of every execution that starts (RUNNING) or ends, as
   * EventBridge delivers Lambda's; called once GetDurableExecution answers that status.
   */
  onStatusChange?: (event: DurableStatusChangeEvent) => void;
  /**
   * A directory to keep executions in: a service started again on it answers for the ended
   * ones and resumes the running ones. Without it, executions live as long as the service.
   */
  dataDir?: string;
  /** How long close() waits for the handler invocations under way before it closes the service. @default 5000 */
  handlerGraceMs?: number;
}

/** A running local durable service. */
export interface LocalDurableService {
  /** The endpoint to give a `LambdaClient`. */
  endpoint: string;
  service: DurableExecutionService;
  close(): Promise<void>;
}

/** How long a closing service waits for the handler invocations under way, unless told. */
const HANDLER_GRACE_MS = 5000;

/** `promise` settled, or `ms` gone, whichever comes first. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise.then(noop, noop), grace]);
  } finally {
    clearTimeout(timer);
  }
}

const noop = () => undefined;

/** Starts the service on 127.0.0.1 with `options.functions` registered. */
export async function startLocalDurableService(options: LocalDurableServiceOptions): Promise<LocalDurableService> {
  const region = options.region ?? 'us-east-1';
  const worker = new CheckpointWorkerClient();
  let handlerClient: LambdaClient | undefined;
  let endpoint = '';
  let closed = false;
  // Handlers checkpoint through the unmodified Lambda client, over HTTP, to this service.
  const transport = () => {
    handlerClient ??= new LambdaClient({
      endpoint,
      region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    return new StopAwareApiClient(handlerClient, (arn) => {
      // A handler still running when the service closed checkpoints to a closed port: the service's own doing too.
      if (closed) return true;
      try {
        return service.describe(arn, false).Status === 'STOPPED';
      } catch {
        // An execution this service does not know was not stopped by it.
        return false;
      }
    });
  };
  const store = options.dataDir === undefined ? undefined : new ExecutionStore(options.dataDir);
  const service: DurableExecutionService = new DurableExecutionService(
    worker,
    transport,
    { region, accountId: options.accountId ?? '000000000000' },
    { store, onStatusChange: options.onStatusChange },
  );
  for (const [name, handler] of Object.entries(options.functions)) service.register(name, handler);
  const server = await serveFetch(lambdaDurableRoutes(service), { host: '127.0.0.1', port: options.port ?? 0, path: '' });
  endpoint = server.url.origin;
  // After the server listens: a resumed handler checkpoints through it at once.
  if (store) await service.restore(store.load());
  return {
    endpoint,
    service,
    close: async () => {
      // A handler under way finishes its invocation (its checkpoints, its writes to the stack's
      // table, its progress and questions) before the stack's parts close under it; one still
      // running after the grace goes on against closed ports, as before.
      await settledWithin(service.halt(), options.handlerGraceMs ?? HANDLER_GRACE_MS);
      closed = true;
      handlerClient?.destroy();
      await server.close();
      await worker.close();
    },
  };
}

/**
 * The SDK's client, except that a checkpoint refused because the execution was stopped, or the
 * service closed, is not logged: Lambda refuses it too, but the stop was this service's, so the
 * handler's ERROR line with its stack would only alarm. Any other refusal is logged as the SDK logs it.
 */
class StopAwareApiClient extends DurableExecutionApiClient {
  constructor(
    client: LambdaClient,
    private readonly stopped: (arn: string) => boolean,
  ) {
    super(client);
  }

  override async checkpoint(...[params, logger]: Parameters<DurableExecutionApiClient['checkpoint']>) {
    try {
      return await super.checkpoint(params);
    } catch (error) {
      if (!this.stopped(params.DurableExecutionArn ?? '')) {
        logger?.error('Failed to checkpoint durable execution', error, { requestId: (error as { $metadata?: { requestId?: string } }).$metadata?.requestId });
      }
      throw error;
    }
  }
}
