/**
 * One Lambda sandbox, run as a worker thread by local-function.ts: it does what the Node.js
 * runtime interface client does in AWS. It loads the function's bundled handler once (the cold
 * start), then runs one invocation at a time as the parent asks. Plain JavaScript on purpose:
 * the worker runs with no loader (no tsx), as the bundle runs in Lambda.
 *
 * Messages in: `{ type: 'invoke', id, eventJson, awsRequestId, deadlineMs, invokedFunctionArn }`.
 * Messages out: `ready {importMs}` | `init-error {error}` | `log {stream, text}` | `result {id, json}` |
 * `chunk {id, data, contentType}` | `done {id}` | `error {id, error}` | `fatal {error}`.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs';
import dns from 'node:dns';
import Module, { register, syncBuiltinESMExports } from 'node:module';
import { join, sep } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { format, types } from 'node:util';
import { parentPort, workerData } from 'node:worker_threads';

/** @type {{ assetDir: string; handler: string; repoRoot: string; sourceMaps: boolean; functionName: string; functionVersion: string; memoryLimitInMB: string; logGroupName: string; logStreamName: string }} */
const config = workerData;
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
const HIGH_WATER_MARK = Symbol.for('aws.lambda.runtime.handler.streaming.highWaterMark');
const HTTP_INTEGRATION = 'application/vnd.awslambda.http-integration-response';
const TASK_ROOT = '/var/task';

let currentRequestId;
let currentInvocationId;

captureOutput();
formatConsole();
quietLocalNodeWarning();
if (config.sourceMaps) process.setSourceMapsEnabled(true);
resolveLikeLambda();
resolveLoopbackPrefixes();
mapTaskRoot();
globalThis.awslambda = { streamifyResponse, HttpResponseStream: { from: httpResponseStreamFrom } };
process.on('uncaughtException', (error) => fatal(error, errorPayload(error)));
process.on('unhandledRejection', (reason) =>
  fatal(reason, {
    errorType: 'Runtime.UnhandledPromiseRejection',
    errorMessage: String(reason instanceof Error ? `${reason.name}: ${reason.message}` : reason),
    trace: traceOf(reason),
  }),
);

const importStarted = performance.now();
const handler = await loadHandler();
if (handler) {
  port.on('message', (message) => {
    if (message.type === 'invoke') void invoke(handler, message);
  });
  // How much of the init was the handler module's import (the function's own module init).
  port.postMessage({ type: 'ready', importMs: performance.now() - importStarted });
}

/** The worker's stdout and stderr travel on the message port, so log lines and results stay in order. */
function captureOutput() {
  for (const stream of /** @type {const} */ (['stdout', 'stderr'])) {
    const target = process[stream];
    target.write = /** @type {typeof target.write} */ (
      (chunk, encoding, callback) => {
        const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8');
        port.postMessage({ type: 'log', stream, text });
        const done = typeof encoding === 'function' ? encoding : callback;
        if (typeof done === 'function') queueMicrotask(() => done());
        return true;
      }
    );
  }
}

/** The runtime's text log format: `<ISO time>\t<request id>\t<LEVEL>\t<message>`. */
function formatConsole() {
  const levels = { log: 'INFO', info: 'INFO', warn: 'WARN', error: 'ERROR', debug: 'DEBUG', trace: 'TRACE' };
  for (const [method, level] of Object.entries(levels)) {
    console[method] = (...args) => {
      process.stdout.write(`${new Date().toISOString()}\t${currentRequestId ?? 'undefined'}\t${level}\t${format(...args)}\n`);
    };
  }
}

/**
 * The AWS SDK warns when the Node running it is older than it will support. The function runs
 * on its runtime's Node in AWS (nodejs24.x); the warning is about this machine's Node, not the function.
 */
function quietLocalNodeWarning() {
  const emitWarning = process.emitWarning;
  process.emitWarning = /** @type {typeof process.emitWarning} */ (
    (warning, ...rest) => {
      if (
        String(warning?.name ?? warning).includes('NodeVersionSupportWarning') ||
        rest[0] === 'NodeVersionSupportWarning' ||
        rest[0]?.type === 'NodeVersionSupportWarning'
      )
        return;
      return emitWarning.call(process, warning, ...rest);
    }
  );
}

/**
 * The asset resolves its packages itself; the AWS SDK comes from the runtime (this repository's
 * node_modules here). ESM imports go through runtime-modules-hook.mjs; `require` (the bundles'
 * createRequire shims of cdk/aws-sdk-require) does not pass through ESM hooks on this Node, so
 * the CommonJS resolver gets the same rule.
 */
/**
 * The SDK puts an endpoint's host prefix before the configured host (StartSyncExecution goes to
 * `sync-<host>`), which resolves in AWS but not for a loopback endpoint such as 127.0.0.1: a
 * `<prefix>-127.x.y.z` or `*.localhost` name resolves to loopback here (RFC 6761 for localhost).
 */
function resolveLoopbackPrefixes() {
  const lookup = dns.lookup;
  dns.lookup = /** @type {typeof dns.lookup} */ (
    function (hostname, ...rest) {
      const prefixed = /^[a-z0-9-]+-(127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i.exec(hostname);
      const target = prefixed ? prefixed[1] : /\.localhost$/i.test(hostname) ? '127.0.0.1' : hostname;
      return lookup.call(this, target, ...rest);
    }
  );
}

function resolveLikeLambda() {
  register('./runtime-modules-hook.mjs', import.meta.url, { data: { assetDir: config.assetDir, repoRoot: config.repoRoot } });
  const runtimeRequire = Module.createRequire(join(config.repoRoot, 'package.json'));
  const assetPrefix = config.assetDir.endsWith(sep) ? config.assetDir : config.assetDir + sep;
  const original = Module._resolveFilename;
  Module._resolveFilename = function (request, parent, ...rest) {
    const fromAsset = typeof parent?.filename === 'string' && parent.filename.startsWith(assetPrefix);
    if (!fromAsset || /^(\.|\/|node:)/.test(request) || Module.builtinModules.includes(request)) return original.call(this, request, parent, ...rest);
    const runtimePackage = /^@(aws-sdk|smithy)\//.test(request);
    let resolved;
    try {
      resolved = original.call(this, request, parent, ...rest);
    } catch (error) {
      if (runtimePackage) return runtimeRequire.resolve(request);
      throw error;
    }
    if (resolved.startsWith(assetPrefix)) return resolved;
    if (runtimePackage) return runtimeRequire.resolve(request);
    const error = new Error(`Cannot find module '${request}'\nRequire stack:\n- ${parent.filename}`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  };
}

/**
 * In Lambda the asset is mounted at /var/task, and templates name paths there (TOOLS_DIR of the
 * MCP function). Reads of /var/task/... go to the asset folder, so the template's environment
 * stays exactly as written.
 */
function mapTaskRoot() {
  const mapPath = (value) => {
    if (typeof value === 'string' && (value === TASK_ROOT || value.startsWith(`${TASK_ROOT}/`))) return config.assetDir + value.slice(TASK_ROOT.length);
    if (value instanceof URL && value.protocol === 'file:' && value.pathname.startsWith(`${TASK_ROOT}/`))
      return pathToFileURL(config.assetDir + value.pathname.slice(TASK_ROOT.length));
    return value;
  };
  const wrap = (target, names) => {
    for (const name of names) {
      const original = target[name];
      if (typeof original !== 'function') continue;
      const wrapped = function (path, ...rest) {
        return original.call(this, mapPath(path), ...rest);
      };
      Object.assign(wrapped, original);
      target[name] = wrapped;
    }
  };
  const sync = [
    'readdirSync',
    'readFileSync',
    'statSync',
    'lstatSync',
    'accessSync',
    'existsSync',
    'opendirSync',
    'realpathSync',
    'openSync',
    'createReadStream',
  ];
  const callback = ['readdir', 'readFile', 'stat', 'lstat', 'access', 'exists', 'opendir', 'realpath', 'open'];
  wrap(fs, [...sync, ...callback]);
  wrap(fs.promises, ['readdir', 'readFile', 'stat', 'lstat', 'access', 'opendir', 'realpath', 'open']);
  syncBuiltinESMExports();
}

/** `file.export` as the runtime reads it: the module path before the last `.`-free segment's first dot. */
async function loadHandler() {
  const slash = config.handler.lastIndexOf('/');
  const dot = config.handler.indexOf('.', slash + 1);
  if (dot < 0) return initError({ errorType: 'Runtime.MalformedHandlerName', errorMessage: "Bad handler: expected 'module.export'" });
  const moduleName = config.handler.slice(0, dot);
  const exportPath = config.handler.slice(dot + 1).split('.');
  const base = join(config.assetDir, moduleName);
  const file = ['.js', '.mjs', '.cjs'].map((extension) => base + extension).find((candidate) => existsSync(candidate));
  if (!file) {
    return initError({
      errorType: 'Runtime.ImportModuleError',
      errorMessage: `Error: Cannot find module '${moduleName}'\nRequire stack:\n- /var/runtime/index.mjs`,
      trace: [],
    });
  }
  let loaded;
  try {
    loaded = await import(pathToFileURL(file).href);
  } catch (error) {
    const code = /** @type {{ code?: string }} */ (error)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      return initError({ errorType: 'Runtime.ImportModuleError', errorMessage: `${error.name}: ${error.message}`, trace: traceOf(error) });
    }
    if (error instanceof SyntaxError)
      return initError({ errorType: 'Runtime.UserCodeSyntaxError', errorMessage: `${error.name}: ${error.message}`, trace: traceOf(error) });
    return initError(errorPayload(error));
  }
  let value = exportPath.reduce((object, key) => object?.[key], loaded);
  if (value === undefined && loaded.default !== undefined) value = exportPath.reduce((object, key) => object?.[key], loaded.default);
  if (typeof value !== 'function') {
    return initError({ errorType: 'Runtime.HandlerNotFound', errorMessage: `${moduleName}.${exportPath.join('.')} is undefined or not exported`, trace: [] });
  }
  return value;
}

function initError(payload) {
  console.error(`INIT_REPORT Status: error\t${JSON.stringify(payload)}`);
  port.postMessage({ type: 'init-error', error: payload });
  return undefined;
}

async function invoke(fn, message) {
  currentRequestId = message.awsRequestId;
  currentInvocationId = message.id;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: config.functionName,
    functionVersion: config.functionVersion,
    invokedFunctionArn: message.invokedFunctionArn,
    memoryLimitInMB: config.memoryLimitInMB,
    awsRequestId: message.awsRequestId,
    logGroupName: config.logGroupName,
    logStreamName: config.logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, message.deadlineMs - Date.now()),
  };
  try {
    if (fn[STREAMING] === 'response') {
      const stream = responseStream(message.id, fn[HIGH_WATER_MARK]);
      await fn(JSON.parse(message.eventJson), stream, context);
      if (!stream.writableEnded) await new Promise((resolve) => stream.end(resolve));
      port.postMessage({ type: 'done', id: message.id });
    } else {
      const result = await fn(JSON.parse(message.eventJson), context);
      let json;
      try {
        json = result === undefined ? 'null' : JSON.stringify(result);
      } catch (error) {
        throw Object.assign(new Error(`Unable to stringify response body: ${error.message}`), { name: 'Runtime.MarshalError' });
      }
      port.postMessage({ type: 'result', id: message.id, json });
    }
  } catch (error) {
    const payload = errorPayload(error);
    console.error(`Invoke Error \t${JSON.stringify(payload)}`);
    port.postMessage({ type: 'error', id: message.id, error: payload });
  } finally {
    currentRequestId = undefined;
    currentInvocationId = undefined;
  }
}

/** The Writable a streaming handler writes to; `setContentType` and the first-write hook are the runtime's. */
function responseStream(id, highWaterMark) {
  let contentType = 'application/octet-stream';
  const stream = new Writable({
    highWaterMark: typeof highWaterMark === 'number' ? highWaterMark : undefined,
    write(chunk, _encoding, callback) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      port.postMessage({ type: 'chunk', id, data: new Uint8Array(bytes), contentType });
      callback();
    },
  });
  const write = stream.write.bind(stream);
  let first = true;
  stream.write = /** @type {typeof stream.write} */ (
    (chunk, ...rest) => {
      if (first) {
        first = false;
        stream._onBeforeFirstWrite?.((bytes) => write(bytes));
      }
      return write(chunk, ...rest);
    }
  );
  stream.setContentType = (type) => {
    contentType = type;
  };
  return stream;
}

/** `awslambda.streamifyResponse(handler, { highWaterMark })`: marks the handler, as the runtime does. */
function streamifyResponse(handler, options) {
  handler[STREAMING] = 'response';
  if (options?.highWaterMark !== undefined) handler[HIGH_WATER_MARK] = Number(options.highWaterMark);
  return handler;
}

/** `awslambda.HttpResponseStream.from`: the prelude as JSON, then 8 NUL bytes, before the body's first byte. */
function httpResponseStreamFrom(stream, prelude) {
  stream.setContentType(HTTP_INTEGRATION);
  const json = JSON.stringify(prelude);
  stream._onBeforeFirstWrite = (write) => {
    write(json);
    write(new Uint8Array(8));
  };
  return stream;
}

/** The runtime's error response: an Error's name, message and stack lines; anything else its type and text. */
function errorPayload(thrown) {
  if (types.isNativeError(thrown) || (typeof thrown?.name === 'string' && typeof thrown?.message === 'string' && typeof thrown?.stack === 'string')) {
    return { errorType: thrown.name || 'Error', errorMessage: thrown.message, trace: traceOf(thrown) };
  }
  return { errorType: typeof thrown, errorMessage: String(thrown), trace: [] };
}

function traceOf(error) {
  return typeof error?.stack === 'string' ? error.stack.split('\n') : [];
}

/** An error outside any handler's await ends the sandbox, as the runtime exits on it. */
function fatal(error, payload) {
  try {
    console.error(`${currentInvocationId === undefined ? 'Uncaught Exception' : 'Invoke Error'} \t${JSON.stringify(payload)}`);
  } catch {
    // Logging must not hide the error itself.
  }
  port.postMessage({ type: 'fatal', id: currentInvocationId, error: payload, message: String(error) });
  process.exit(129);
}
