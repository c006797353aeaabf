/**
 * Where a deployed function's log lines go: the console, each line prefixed with the function's
 * logical id, and with a data directory also `<data>/logs/<logicalId>.log`.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

export interface FunctionLogs {
  /** The sink for one function's lines. */
  sink(logicalId: string): (line: string) => void;
  close(): Promise<void>;
}

export function createFunctionLogs(options: { dataDir?: string; console?: (line: string) => void } = {}): FunctionLogs {
  const write = options.console ?? ((line: string) => process.stdout.write(`${line}\n`));
  const files = new Map<string, WriteStream>();
  const dir = options.dataDir ? join(options.dataDir, 'logs') : undefined;
  if (dir) mkdirSync(dir, { recursive: true });
  return {
    sink(logicalId) {
      let file: WriteStream | undefined;
      if (dir) {
        file = files.get(logicalId) ?? createWriteStream(join(dir, `${logicalId}.log`), { flags: 'a' });
        files.set(logicalId, file);
      }
      return (line) => {
        for (const part of line.replace(/\n$/, '').split('\n')) {
          write(`[${logicalId}] ${part}`);
          file?.write(`${part}\n`);
        }
      };
    },
    async close() {
      await Promise.all([...files.values()].map((file) => new Promise<void>((resolve) => file.end(() => resolve()))));
      files.clear();
    },
  };
}
