/** The handover marks in memory, for unit tests and a single-process server (the local stack). */
import type { EventHandover } from './event-handover.ts';

export class InMemoryEventHandover implements EventHandover {
  readonly #marked = new Map<string, number>();

  async handedOver(ownerId: string, eventId: string): Promise<boolean> {
    return this.#marked.has(`${ownerId}\n${eventId}`);
  }

  async markHandedOver(ownerId: string, eventId: string, at: number): Promise<void> {
    this.#marked.set(`${ownerId}\n${eventId}`, at);
  }
}
