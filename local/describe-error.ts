/** One line naming an error for the local runtime's logs: its name and message, never its data. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
