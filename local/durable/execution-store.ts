/**
 * The `dataDir` of the local durable service: one JSON file per execution
 * (`<dataDir>/<function>/<name>.json`), so executions outlive a restart. Each save writes a
 * temporary file, flushes it and renames it over the old one: a crash mid-write leaves the
 * previous version whole.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorObject, Operation } from '@aws/durable-execution-sdk-js';
import type { JournalEntry } from './checkpoint-journal.ts';

/** The statuses an execution can have; TIMED_OUT is Lambda's, which this service never reaches. */
export type RunStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'STOPPED';

/** Everything the service knows of one execution, as it is saved. */
export interface StoredExecution {
  arn: string;
  name: string;
  functionName: string;
  payload: string | undefined;
  started: Date;
  /** The id the checkpoint worker knows the execution by; callback ids embed it. */
  workerExecutionId: string;
  status: RunStatus;
  result?: string;
  error?: ErrorObject;
  endTimestamp?: Date;
  /** The worker calls that changed the execution's operations, in the order they were applied. */
  journal: JournalEntry[];
  /** The operations as the service first gave them out, by id. */
  operations: Record<string, Operation>;
}

const TEMP_SUFFIX = '.tmp';

/** The execution files under one directory. */
export class ExecutionStore {
  private writes = 0;

  constructor(private readonly dir: string) {}

  /** Every saved execution; a file that cannot be read is logged and left where it is. */
  load(): StoredExecution[] {
    if (!existsSync(this.dir)) return [];
    const executions: StoredExecution[] = [];
    for (const folder of readdirSync(this.dir, { withFileTypes: true })) {
      if (!folder.isDirectory()) continue;
      const functionName = folder.name;
      for (const file of readdirSync(join(this.dir, functionName))) {
        if (!file.endsWith('.json')) continue; // a temporary file a crash left behind
        const path = join(this.dir, functionName, file);
        try {
          executions.push(parseStored(readFileSync(path, 'utf8')) as StoredExecution);
        } catch (error) {
          console.error(JSON.stringify({ level: 'error', message: 'durable execution file not read', path, error: String(error) }));
        }
      }
    }
    return executions.sort((a, b) => a.started.getTime() - b.started.getTime());
  }

  save(execution: StoredExecution): void {
    const folder = join(this.dir, execution.functionName);
    mkdirSync(folder, { recursive: true });
    const path = join(folder, `${execution.name}.json`);
    this.writes += 1;
    const temp = `${path}.${process.pid}.${this.writes}${TEMP_SUFFIX}`;
    const fd = openSync(temp, 'w');
    try {
      writeSync(fd, stringifyStored(execution));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  }
}

// JSON keeps neither Dates (operations' timestamps) nor bytes (a callback's result): both are
// tagged on the way out and rebuilt on the way in.
function stringifyStored(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, encoded) {
    const raw = this[key];
    if (raw instanceof Date) return { $date: raw.toISOString() };
    if (raw instanceof Uint8Array) return { $base64: Buffer.from(raw).toString('base64') };
    return encoded;
  });
}

function parseStored(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value && typeof value === 'object') {
      if ('$date' in value && typeof value.$date === 'string') return new Date(value.$date);
      if ('$base64' in value && typeof value.$base64 === 'string') return new Uint8Array(Buffer.from(value.$base64, 'base64'));
    }
    return value;
  });
}
