/**
 * An execution's history in GetExecutionHistory's shape: the execution's own start and
 * close events plus a subset of the interpreter's log (state entered/exited, task
 * failures, map iterations). Kept in memory only; after a restart a persisted
 * execution's history is just its start and close.
 */
import type { InterpreterEvent } from './local-interpreter.ts';
import type { ExecutionRecord } from './sfn-facade-store.ts';

export interface HistoryEvent {
  /** Epoch milliseconds. */
  timestamp: number;
  type: string;
  id: number;
  previousEventId: number;
  [details: string]: unknown;
}

const UNTRUNCATED = { truncated: false };

export class ExecutionHistory {
  private readonly events: HistoryEvent[] = [];
  private closed = false;

  constructor(record: ExecutionRecord, roleArn: string) {
    this.add(record.startDate, 'ExecutionStarted', {
      executionStartedEventDetails: { input: record.input, inputDetails: UNTRUNCATED, roleArn },
    });
  }

  /** Maps one interpreter event; the execution's own events come from `close`, not from here. */
  record(event: InterpreterEvent): void {
    // A stopped run may still flush a few events; the close event stays last.
    if (this.closed) return;
    switch (event.type) {
      case 'StateEntered':
        this.add(event.timestamp, `${event.state.type}StateEntered`, {
          stateEnteredEventDetails: { name: event.state.name, input: json(event.state.input), inputDetails: UNTRUNCATED },
        });
        break;
      case 'StateExited':
        this.add(event.timestamp, `${event.state.type}StateExited`, {
          stateExitedEventDetails: { name: event.state.name, output: json(event.state.output), outputDetails: UNTRUNCATED },
        });
        break;
      case 'StateFailed':
        if (event.state.type === 'Task') {
          this.add(event.timestamp, 'TaskFailed', {
            taskFailedEventDetails: { resourceType: 'lambda', resource: 'invoke', ...errorDetails(event.Error, event.Cause) },
          });
        } else if (event.state.type === 'Map' || event.state.type === 'Parallel') {
          this.add(event.timestamp, `${event.state.type}StateFailed`, {});
        }
        break;
      case 'MapIterationStarted':
      case 'MapIterationSucceeded':
      case 'MapIterationFailed': {
        const key = `${event.type.charAt(0).toLowerCase()}${event.type.slice(1)}EventDetails`;
        this.add(event.timestamp, event.type, { [key]: { name: event.parentState.name, index: event.index } });
        break;
      }
      default:
        break;
    }
  }

  close(record: ExecutionRecord): void {
    this.closed = true;
    const at = record.stopDate ?? Date.now();
    const failure = errorDetails(record.error, record.cause);
    switch (record.status) {
      case 'SUCCEEDED':
        this.add(at, 'ExecutionSucceeded', { executionSucceededEventDetails: { output: record.output, outputDetails: UNTRUNCATED } });
        break;
      case 'FAILED':
        this.add(at, 'ExecutionFailed', { executionFailedEventDetails: failure });
        break;
      case 'ABORTED':
        this.add(at, 'ExecutionAborted', { executionAbortedEventDetails: failure });
        break;
      case 'TIMED_OUT':
        this.add(at, 'ExecutionTimedOut', { executionTimedOutEventDetails: { error: 'States.Timeout' } });
        break;
      default:
        break;
    }
  }

  list(): readonly HistoryEvent[] {
    return this.events;
  }

  private add(timestamp: number, type: string, details: Record<string, unknown>): void {
    const id = this.events.length + 1;
    this.events.push({ timestamp, type, id, previousEventId: id - 1, ...details });
  }
}

function errorDetails(error: unknown, cause: unknown): { error?: string; cause?: string } {
  return {
    ...(typeof error === 'string' && error ? { error } : {}),
    ...(cause === undefined || cause === null || cause === '' ? {} : { cause: typeof cause === 'string' ? cause : json(cause) }),
  };
}

function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}
