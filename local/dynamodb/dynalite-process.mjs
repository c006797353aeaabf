// @ts-check
/**
 * The local DynamoDB's own process, as DynamoDB is its own service in AWS: dynalite on
 * 127.0.0.1, started by dynamo-local.ts with `fork()`. Plain JavaScript, so that it starts
 * without a TypeScript loader.
 *
 * Protocol (IPC): options arrive as JSON in argv[2] (`{ dataDir?, port? }`); the process
 * answers `{ port }` once listening, or `{ error }` and exits. `{ close: true }` closes the
 * database and exits. When the parent goes away (IPC disconnect), it closes and exits too.
 */
import { createRequire } from 'node:module';

// Small buffers are slices of shared 8 KiB slabs. The in-memory store keeps a few bytes from
// each of many slabs (requests allocate in between), so every stored item pinned about a slab;
// unpooled buffers hold only their own bytes.
Buffer.poolSize = 0;

const require = createRequire(import.meta.url);
/** @type {(options: Record<string, unknown>) => import('node:http').Server} */
const dynalite = require('dynalite');

/** @type {{ dataDir?: string; port?: number }} */
const options = JSON.parse(process.argv[2] ?? '{}');
/** @param {unknown} message */
const send = (message) => process.send?.(message);

// Table state changes take dynalite 500 ms by default; locally there is no reason to wait.
const server = dynalite({ path: options.dataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });

server.once('error', (error) => {
  send({ error: error.message });
  process.exit(1);
});
server.listen(options.port ?? 0, '127.0.0.1', () => {
  const address = server.address();
  send({ port: typeof address === 'object' && address ? address.port : 0 });
});

let closing = false;
function close() {
  if (closing) return;
  closing = true;
  // Closing the server closes the database (LevelDB flushes); do not hang on a stuck one.
  setTimeout(() => process.exit(0), 5000).unref();
  server.close(() => process.exit(0));
  server.closeAllConnections();
}

process.on('message', (message) => {
  if (typeof message === 'object' && message !== null && 'close' in message) close();
});
process.on('disconnect', close);
process.on('SIGTERM', close);
process.on('SIGINT', close);
