/**
 * The assembly's durable functions, run as Lambda runs them: the local durable service
 * (local/durable/) keeps each execution and decides when to invoke it, and each invocation runs
 * the function's bundled asset in its sandbox (LocalFunction) with the event Lambda sends a
 * durable function: the execution's ARN, its checkpoint token and the operations so far. The
 * SDK inside the sandbox checkpoints through a LambdaClient of its own, whose endpoint is the
 * Lambda IAM gateway, under the function's role.
 */
import type { DurableExecutionInvocationInput, DurableExecutionInvocationOutput, DurableLambdaHandler } from '@aws/durable-execution-sdk-js';
import type { DeployedFunction, DeployedStack } from '../assembly/deployed-stack.ts';
import type { DurableExecutionService } from '../durable/index.ts';
import type { LocalFunction } from '../lambda/local-function.ts';

/** Callback ids remembered with their execution, at most; a lookup past it asks the service again. */
const CALLBACKS_KEPT = 10_000;

/** The functions whose template sets DurableConfig. */
export function durableFunctionsOf(model: DeployedStack): DeployedFunction[] {
  return model.functions.filter((fn) => fn.durable !== undefined);
}

/**
 * One handler per durable function, by function name, for `startLocalDurableService`: each
 * invocation goes into the function's sandbox, found in `functions` (by logical id) when it runs,
 * so the sandboxes may start after the service whose endpoint they are given.
 */
export function sandboxedDurableHandlers(durable: DeployedFunction[], functions: ReadonlyMap<string, LocalFunction>): Record<string, DurableLambdaHandler> {
  const handlers: Record<string, DurableLambdaHandler> = {};
  for (const fn of durable) {
    handlers[fn.name] = async (event: DurableExecutionInvocationInput) => {
      const local = functions.get(fn.logicalId);
      if (!local) throw new Error(`durable function ${fn.name} is not running`);
      // The service hands in-process handlers an event that carries its own client; the sandbox
      // gets the plain payload Lambda sends, and its SDK builds its client from the environment.
      const { DurableExecutionArn, CheckpointToken, InitialExecutionState } = event;
      return (await local.invoke({ DurableExecutionArn, CheckpointToken, InitialExecutionState })) as DurableExecutionInvocationOutput;
    };
  }
  return handlers;
}

/**
 * The durable execution that issued a callback id: SendDurableExecutionCallback* are authorized
 * on it. Callback ids are opaque, so it is looked up in the executions' state, through the
 * service's own calls, and remembered.
 */
export function callbackOwners(service: DurableExecutionService, durable: DeployedFunction[]): (callbackId: string) => Promise<string | undefined> {
  const known = new Map<string, string>();
  return async (callbackId) => {
    const remembered = known.get(callbackId);
    if (remembered) return remembered;
    for (const fn of durable) {
      // Newest first: a question is answered while its execution is recent.
      for (const execution of service.list(fn.name, { reverseOrder: true })) {
        const state = await service.state(execution.DurableExecutionArn).catch(() => ({ Operations: [] }));
        for (const operation of state.Operations ?? []) {
          const id = operation.CallbackDetails?.CallbackId;
          if (id === undefined) continue;
          if (known.size >= CALLBACKS_KEPT) known.clear();
          known.set(id, execution.DurableExecutionArn);
        }
        if (known.has(callbackId)) return known.get(callbackId);
      }
    }
    return undefined;
  };
}
