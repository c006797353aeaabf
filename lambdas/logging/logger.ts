/**
 * The process's default logger. The `Logger` port itself belongs to the core
 * (operations/ports.ts); it is re-exported here for the edges that import it from this file.
 */
import type { Logger } from '../operations/ports.ts';
import { createStructuredLogger } from '../observability/structured-logger.ts';

export type { Logger } from '../operations/ports.ts';

/** The process's structured logger (the default wherever none is passed). */
export const consoleLogger: Logger = createStructuredLogger();
