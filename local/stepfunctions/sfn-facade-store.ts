/**
 * Keeps STANDARD execution records in one JSON file, so DescribeExecution answers across
 * restarts. Every save writes a temporary file and renames it over the old one, so a
 * crash leaves either the previous or the next snapshot, never a torn file.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';

export const EXECUTIONS_FILE = 'sfn-executions.json';

export const ExecutionRecordSchema = z.strictObject({
  executionArn: z.string(),
  stateMachineArn: z.string(),
  name: z.string(),
  status: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']),
  /** Epoch milliseconds. */
  startDate: z.number(),
  stopDate: z.number().optional(),
  /** JSON text, as given to StartExecution. */
  input: z.string(),
  /** JSON text; only when SUCCEEDED. */
  output: z.string().optional(),
  error: z.string().optional(),
  cause: z.string().optional(),
});
export type ExecutionRecord = z.infer<typeof ExecutionRecordSchema>;
export type ExecutionStatus = ExecutionRecord['status'];

const FileSchema = z.strictObject({ version: z.literal(1), executions: z.array(ExecutionRecordSchema) });

export class ExecutionFile {
  readonly path: string;
  private writing: Promise<void> = Promise.resolve();

  constructor(readonly dir: string) {
    this.path = join(dir, EXECUTIONS_FILE);
  }

  /** The saved records; none when the file does not exist yet. Throws on a file it cannot read. */
  async load(): Promise<ExecutionRecord[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    let parsed: ReturnType<typeof FileSchema.safeParse>;
    try {
      parsed = FileSchema.safeParse(JSON.parse(text));
    } catch (error) {
      throw new Error(`${this.path}: not valid JSON (${(error as Error).message})`);
    }
    if (!parsed.success) throw new Error(`${this.path}: not an execution file (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    return parsed.data.executions;
  }

  /** Writes `records` after any save already under way, so the last call always wins. */
  save(records: ExecutionRecord[]): Promise<void> {
    const text = JSON.stringify({ version: 1, executions: records });
    const next = this.writing.catch(() => undefined).then(() => this.write(text));
    this.writing = next;
    return next;
  }

  private async write(text: string): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const temporary = `${this.path}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(temporary, text, 'utf8');
    await rename(temporary, this.path);
  }
}
