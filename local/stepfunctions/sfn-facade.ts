/**
 * A local Step Functions API endpoint for the unmodified `SFNClient`: it serves the
 * actions the project uses over AWS JSON 1.0, runs the tools' ASL definitions on the
 * project's own interpreter (asl-interpreter.ts), calling worker handlers in-process, and
 * emits the EventBridge status-change events of STANDARD executions.
 *
 * StartSyncExecution carries the endpoint trait `hostPrefix: "sync-"`, so the SDK would
 * send it to `sync-127.0.0.1`, which does not resolve. Build the client with
 * `disableHostPrefix: true` (it changes nothing for the other actions).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { walkDefinition } from './asl-definition.ts';
import { LAMBDA_INVOKE } from './asl-tasks.ts';
import { createSfnActions } from './sfn-facade-actions.ts';
import { parseExecutionArn, stateMachineArn } from './sfn-facade-arns.ts';
import { ExecutionEngine, type PreparedMachine } from './sfn-facade-engine.ts';
import { createLocalInterpreter } from './sfn-facade-interpreter.ts';
import type { TaskMocks } from './sfn-facade-mocks.ts';
import { createSfnRequestListener } from './sfn-facade-protocol.ts';
import type { ExecutionStatusChangeEvent } from './sfn-facade-status-event.ts';
import { ExecutionFile } from './sfn-facade-store.ts';
import { TaskTokens } from './sfn-facade-task-tokens.ts';

export type { ExecutionStatusChangeEvent } from './sfn-facade-status-event.ts';

export interface LocalStateMachine {
  name: string;
  /** The definition as written: `${Worker_<name>}` placeholders unresolved. */
  definitionText: string;
  workflowType: 'STANDARD' | 'EXPRESS';
  /** Answers for Tasks that are neither workers nor Lambda invokes of one (the tool's `mocks.json`). */
  taskMocks?: TaskMocks;
  /** The machine's execution role: with `authorize`, every Task call is authorized as this role. */
  roleArn?: string;
}

/** One call a Task makes with its machine's role, before it is made. */
export interface TaskAuthorization {
  roleArn: string;
  stateMachineArn: string;
  /** The Task's Resource (`arn:aws:states:::lambda:invoke` for a function, however the definition names it). */
  resource: string;
  /** The call's resolved parameters (`{ FunctionName }` for a function). */
  parameters: unknown;
}

/** A worker's Lambda handler, called in-process with the event Step Functions would send. */
export type WorkerHandler = (event: unknown) => Promise<unknown>;

export interface SfnFacadeOptions {
  stateMachines: LocalStateMachine[];
  /** The handler for `${Worker_<worker>}`; called once per worker when a machine is bound (at start, or by setStateMachine), so a missing one fails fast. */
  resolveWorker: (worker: string) => WorkerHandler;
  /** Called for STANDARD executions only, as EventBridge is; a throwing listener is logged, never propagated. */
  onStatusChange?: (event: ExecutionStatusChangeEvent) => void;
  /** @default 'us-east-1' */
  region?: string;
  /** @default '000000000000' */
  accountId?: string;
  /** A loopback address: the endpoint runs workers and has no authentication. @default '127.0.0.1' */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
  /** Where to keep STANDARD execution records (one JSON file), so they survive a restart. @default in memory */
  dataDir?: string;
  /** Multiplies the duration of Wait states that use `Seconds`. @default 1 */
  waitTimeScale?: number;
  /** @default console */
  logger?: Pick<Console, 'warn' | 'error'>;
  /**
   * Invokes a function a deployed definition names by ARN (possibly qualified) or name; a
   * thrown TaskError is the Task's failure as is. Without it such a Task needs a mock.
   */
  invokeFunction?: (functionArnOrName: string, payload: unknown) => Promise<unknown>;
  /** Authorizes each Task call of a machine that has a `roleArn` (mocked ones too); throw a TaskError to deny. */
  authorize?: (request: TaskAuthorization) => void | Promise<void>;
}

export interface SfnFacade {
  /** The URL to pass as the SDK client's `endpoint`. */
  endpoint: string;
  /** The ARN of one of `stateMachines`; throws for a name that is not among them. */
  stateMachineArn(name: string): string;
  /**
   * Serves `machine` (checked and bound as at start, with the workers `resolveWorker` gives now)
   * in place of the one of that name, or as a new one; throws, changing nothing, when it cannot
   * run. Running executions keep the definition and workers they started with, as in AWS.
   */
  setStateMachine(machine: LocalStateMachine): void;
  /** Stops serving a machine; its running executions run to their end. */
  removeStateMachine(name: string): void;
  /** The state machine whose execution a task token was issued to, while the token is known. */
  stateMachineOfTaskToken(token: string): string | undefined;
  /**
   * Stops serving and stops every running execution without recording an outcome, as a
   * stopped process would: with `dataDir`, the next start marks them FAILED (`Local.RuntimeRestarted`).
   */
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** Validates every definition, binds its workers, and starts serving. */
export async function startSfnFacade(options: SfnFacadeOptions): Promise<SfnFacade> {
  const scope = { region: options.region ?? 'us-east-1', accountId: options.accountId ?? '000000000000' };
  if (!/^[a-z0-9-]+$/.test(scope.region) || !/^\d{12}$/.test(scope.accountId)) {
    throw new Error(`region "${scope.region}" / accountId "${scope.accountId}" cannot appear in an ARN (accountId is 12 digits)`);
  }
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) throw new Error(`the Step Functions facade binds loopback addresses only, not "${host}"`);
  const waitTimeScale = options.waitTimeScale ?? 1;
  if (!Number.isFinite(waitTimeScale) || waitTimeScale < 0) throw new Error(`waitTimeScale must be a number >= 0, not ${waitTimeScale}`);
  const logger = options.logger ?? console;
  const tokens = new TaskTokens();
  const roleArn = `arn:aws:iam::${scope.accountId}:role/local-step-functions`;

  const creationDate = Date.now();
  const prepare = (machine: LocalStateMachine, created: number): PreparedMachine => {
    if (!/^[^\s:/]{1,80}$/.test(machine.name)) throw new Error(`state machine name "${machine.name}" cannot appear in an ARN`);
    const arn = stateMachineArn(scope, machine.name);
    const authorize = options.authorize && machine.roleArn ? checker(options.authorize, machine.roleArn, arn) : undefined;
    const invokeFunction = options.invokeFunction;
    return {
      name: machine.name,
      arn,
      type: machine.workflowType,
      definitionText: machine.definitionText,
      creationDate: created,
      interpreter: createLocalInterpreter(machine.name, machine.definitionText, {
        resolveWorker: options.resolveWorker,
        tokens,
        waitTimeScale,
        ...(machine.taskMocks ? { taskMocks: authorize ? authorizedMocks(machine.taskMocks, machine.definitionText, authorize) : machine.taskMocks } : {}),
        ...(invokeFunction
          ? {
              resolveFunction: (name: string) => async (event: unknown) => {
                await authorize?.(LAMBDA_INVOKE, { FunctionName: name });
                return invokeFunction(name, event);
              },
            }
          : {}),
      }),
    };
  };
  const machines = new Map<string, PreparedMachine>();
  for (const machine of options.stateMachines) {
    if (machines.has(machine.name)) throw new Error(`state machine "${machine.name}" is defined twice`);
    machines.set(machine.name, prepare(machine, creationDate));
  }

  const engine = await ExecutionEngine.create({
    scope,
    machines: [...machines.values()],
    tokens,
    roleArn,
    store: options.dataDir ? new ExecutionFile(options.dataDir) : undefined,
    onStatusChange: options.onStatusChange,
    logger,
  });
  const server = createServer(createSfnRequestListener(createSfnActions(engine, tokens, roleArn), logger));
  const { port } = await listen(server, options.port ?? 0, host);
  engine.announceRestarted();

  let closing: Promise<void> | undefined;
  return {
    endpoint: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    stateMachineArn(name) {
      const machine = machines.get(name);
      if (!machine) throw new Error(`no local state machine named "${name}"`);
      return machine.arn;
    },
    setStateMachine(machine) {
      const prepared = prepare(machine, Date.now());
      machines.set(machine.name, prepared);
      engine.setMachine(prepared);
    },
    removeStateMachine(name) {
      const machine = machines.get(name);
      if (!machine) return;
      machines.delete(name);
      engine.removeMachine(machine.arn);
    },
    stateMachineOfTaskToken(token) {
      const execution = tokens.executionOf(token);
      if (!execution) return undefined;
      const { machine } = parseExecutionArn(execution);
      return stateMachineArn(scope, machine);
    },
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await engine.shutdown();
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}

type Check = (resource: string, parameters: unknown) => Promise<void>;

function checker(authorize: NonNullable<SfnFacadeOptions['authorize']>, roleArn: string, stateMachineArn: string): Check {
  return async (resource, parameters) => authorize({ roleArn, stateMachineArn, resource, parameters });
}

/** Mocks answer in place of the service, but the role must still allow the call, as in AWS. */
function authorizedMocks(mocks: TaskMocks, definitionText: string, authorize: Check): TaskMocks {
  const resources = new Map<string, string>();
  try {
    walkDefinition(JSON.parse(definitionText), (name, state) => {
      if (state.Type === 'Task') resources.set(name, String(state.Resource));
    });
  } catch {
    // An invalid definition fails in createLocalInterpreter, with its own message.
  }
  return {
    handlerFor(stateName) {
      const handler = mocks.handlerFor(stateName);
      return (
        handler &&
        (async (input) => {
          await authorize(resources.get(stateName) ?? '', input);
          return handler(input);
        })
      );
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
