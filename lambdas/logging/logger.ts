/** The process's default logger. The `Logger` port itself belongs to the core (operations/ports.ts). */
import type { Logger } from '../operations/ports.ts';
import { createStructuredLogger } from '../observability/structured-logger.ts';

/** The process's structured logger (the default wherever none is passed). */
export const consoleLogger: Logger = createStructuredLogger();
