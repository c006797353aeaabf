/**
 * The Events soak's bookkeeping: what each subscriber received (first arrival per `eventId`,
 * and every repeat), and what became of each question the operations asked.
 */

export const FINISHED = 'operation.finished';
export const INPUT_REQUIRED = 'operation.input_required';

/** An `operation.finished` as the soak reads it from the log. */
export interface FinishedEvent {
  eventId: string;
  data: {
    operationId?: string;
    taskId?: string;
    status?: string;
    isError?: boolean;
    result?: { structuredContent?: { confirmation?: { action?: string } } };
  };
}

/** An `operation.input_required` as its subscriber reads it. */
export interface QuestionEvent {
  eventId: string;
  timestamp: string;
  data: { operationId: string; inputRequests?: Record<string, unknown> };
}

/** What one subscriber received: first arrival per eventId (with its latency), and every repeat. */
export class Arrivals {
  readonly first = new Map<string, number>();
  duplicates = 0;
  note(eventId: string, timestamp: string): void {
    if (this.first.has(eventId)) {
      this.duplicates++;
      return;
    }
    this.first.set(eventId, Date.now() - Date.parse(timestamp));
  }
  missingOf(expected: ReadonlySet<string>): number {
    let missing = 0;
    for (const id of expected) if (!this.first.has(id)) missing++;
    return missing;
  }
}

/** What became of each operation's questions: the events and keys it was told by, the keys tasks/get showed, the keys answered. */
export class Questions {
  readonly events = new Map<string, Set<string>>();
  readonly keys = new Map<string, Set<string>>();
  readonly answered = new Map<string, Set<string>>();
  noteEvent(taskId: string, eventId: string, keys: string[]): void {
    if (!this.events.has(taskId)) this.events.set(taskId, new Set());
    this.events.get(taskId)?.add(eventId);
    this.noteShown(taskId, keys);
  }
  noteShown(taskId: string, keys: string[]): void {
    if (!this.keys.has(taskId)) this.keys.set(taskId, new Set());
    for (const key of keys) this.keys.get(taskId)?.add(key);
  }
  noteAnswered(taskId: string, key: string): void {
    if (!this.answered.has(taskId)) this.answered.set(taskId, new Set());
    this.answered.get(taskId)?.add(key);
  }
  answeredKeys(taskId: string): ReadonlySet<string> {
    return this.answered.get(taskId) ?? new Set();
  }
  eventIds(): Set<string> {
    return new Set([...this.events.values()].flatMap((ids) => [...ids]));
  }
}
