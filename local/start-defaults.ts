/**
 * Where `npm start` serves and finds workers unless told: its usage names them, and a `--help`
 * or a mistyped flag is answered before the stack's modules load.
 */
import { resolve } from 'node:path';

export const DEFAULT_PORT = 3000;
export const DEFAULT_HOST = '127.0.0.1';
/** Where `${Worker_<name>}` modules live unless `workersDir` says otherwise. */
export const DEFAULT_WORKERS_DIR = resolve(import.meta.dirname, '../lambdas/handlers/workers');
