/** The error a durable tool's helper rejects with, named as a state machine's Catch would see it. */

/**
 * An error whose `name` is the execution's error when the tool lets it through (the SDK
 * reports `name` as the ErrorType), and whose `message` is what a state's Cause would hold:
 * for `Mcp.InputDeclined`, JSON naming the action (`{"action":"decline"}`).
 */
export class DurableToolError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }

  /** The message read as JSON when it is JSON (a declined question's action), else undefined. */
  get detail(): Record<string, unknown> | undefined {
    try {
      const parsed: unknown = JSON.parse(this.message);
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }
}
