/**
 * The event rule's dead-letter queue, locally: each event EventBridge gives up on is one JSON
 * file under `<data>/dead-letters/<queue name>/` (in memory without a data directory), with the
 * message attributes EventBridge sets (RULE_ARN, TARGET_ARN, ERROR_CODE, ERROR_MESSAGE,
 * EXHAUSTED_RETRY_CONDITION, RETRY_ATTEMPTS), so a user can read and replay it.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeployedStack } from '../assembly/deployed-stack.ts';

/** One dead-lettered message: the event as SQS would hold it. */
export interface DeadLetter {
  messageId: string;
  /** The event, as JSON text (the SQS message body). */
  body: string;
  attributes: Record<string, string>;
  /** Epoch milliseconds. */
  sentTimestamp: number;
}

export interface DeadLetterQueue {
  queue: DeployedStack['queues'][number];
  send(body: string, attributes: Record<string, string>): Promise<DeadLetter>;
  list(): Promise<DeadLetter[]>;
  remove(messageId: string): Promise<void>;
}

/** The folder a queue's dead letters are written to under `dataDir`. */
export function deadLetterFolder(dataDir: string, queueName: string): string {
  return join(dataDir, 'dead-letters', queueName);
}

export function createDeadLetterQueue(queue: DeployedStack['queues'][number], dataDir?: string): DeadLetterQueue {
  const memory = new Map<string, DeadLetter>();
  const folder = dataDir ? deadLetterFolder(dataDir, queue.name) : undefined;
  const fileOf = (messageId: string) => {
    if (!folder) throw new Error(`${queue.name}: dead letters are kept in memory, not in files`);
    return join(folder, `${messageId}.json`);
  };
  return {
    queue,
    async send(body, attributes) {
      const letter: DeadLetter = { messageId: randomUUID(), body, attributes, sentTimestamp: Date.now() };
      if (!folder) memory.set(letter.messageId, letter);
      else {
        await mkdir(folder, { recursive: true });
        await writeFile(fileOf(letter.messageId), `${JSON.stringify(letter, null, 2)}\n`);
      }
      return letter;
    },
    async list() {
      if (!folder) return [...memory.values()];
      let names: string[];
      try {
        names = await readdir(folder);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      const letters = await Promise.all(
        names.filter((n) => n.endsWith('.json')).map(async (n) => JSON.parse(await readFile(join(folder, n), 'utf8')) as DeadLetter),
      );
      return letters.sort((a, b) => a.sentTimestamp - b.sentTimestamp);
    },
    async remove(messageId) {
      if (!folder) memory.delete(messageId);
      else await rm(fileOf(messageId), { force: true });
    },
  };
}
