/**
 * The logger every layer writes through: one JSON line per entry on stderr, which
 * CloudWatch Logs indexes as is. Callers pass ids and error names, never tool
 * arguments or secrets.
 */
export interface Logger {
  error(message: string, fields: Record<string, unknown>): void;
  warn(message: string, fields: Record<string, unknown>): void;
}

/** Logs as one JSON line on stderr. */
export const consoleLogger: Logger = {
  error: (message, fields) => console.error(JSON.stringify({ level: 'error', message, ...fields })),
  warn: (message, fields) => console.warn(JSON.stringify({ level: 'warn', message, ...fields })),
};
