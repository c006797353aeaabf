/**
 * One Lambda invocation in a Node process of its own, as the runtime would run it: the module
 * is imported (its init), its `handler` invoked once with the event (with the runtime's
 * `awslambda` global and a response stream for a streaming handler), and the process exits
 * the moment the invocation settles, as a container is frozen then. What was not exported
 * by that moment is lost. A process each, since OpenTelemetry's SDK registers globals.
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';

const MARKER = 'INVOCATION-OUTCOME ';

const SCRIPT = `
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
const { moduleUrl, event, streaming } = JSON.parse(process.env.INVOCATION_SPEC);
let prelude;
globalThis.awslambda = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: { from: (stream, metadata) => { prelude = metadata; return stream; } },
};
const { handler } = await import(moduleUrl);
const context = { awsRequestId: 'invocation-1', getRemainingTimeInMillis: () => 30000 };
const started = performance.now();
let outcome;
try {
  if (streaming) {
    const chunks = [];
    const stream = new Writable({ write(chunk, _encoding, done) { chunks.push(Buffer.from(chunk)); done(); } });
    await handler(event, stream, context);
    outcome = { ok: true, result: { prelude, body: Buffer.concat(chunks).toString('utf8') } };
  } else {
    outcome = { ok: true, result: (await handler(event, context)) ?? null };
  }
} catch (error) {
  outcome = { ok: false, error: error?.name ?? String(error) };
}
outcome.ms = performance.now() - started;
outcome.commonJs = Object.keys(createRequire(import.meta.url).cache);
process.stdout.write(${JSON.stringify(MARKER)} + JSON.stringify(outcome) + '\\n');
process.exit(0);
`;

export interface InvocationSpec {
  /** The handler's module: a source file (run through tsx) or a bundle's index.mjs. */
  module: string;
  event: unknown;
  /** A RESPONSE_STREAM handler: `(event, responseStream, context)`. */
  streaming?: boolean;
  /** The whole environment of the process, beside PATH. */
  env: Record<string, string>;
  /** Where the process runs; the repository root by default. */
  cwd?: string;
}

export interface InvocationOutcome {
  ok: boolean;
  result?: unknown;
  /** The error's name when the invocation failed. */
  error?: string;
  /** How long the invocation took, from the handler's call until it settled. */
  ms: number;
  /** The files of the CommonJS modules loaded by then (an `import()` of one loads it as CommonJS too). */
  commonJs: string[];
  /** Everything else the process wrote (its logs). */
  output: string;
}

/** Runs the invocation; rejects if the process ends without an outcome. Asynchronous, so a receiver in this process keeps answering. */
export function invokeInProcess(spec: InvocationSpec): Promise<InvocationOutcome> {
  const source = spec.module.endsWith('.ts');
  const child = spawn(process.execPath, [...(source ? ['--import', 'tsx'] : []), '--input-type=module', '-e', SCRIPT], {
    cwd: spec.cwd ?? REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_NO_WARNINGS: '1',
      ...spec.env,
      INVOCATION_SPEC: JSON.stringify({ moduleUrl: pathToFileURL(spec.module).href, event: spec.event, streaming: spec.streaming === true }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const line = output.split('\n').find((candidate) => candidate.startsWith(MARKER));
      if (!line) {
        reject(new Error(`the invocation's process exited (${code}) without an outcome:\n${output}`));
        return;
      }
      const outcome = JSON.parse(line.slice(MARKER.length)) as Omit<InvocationOutcome, 'output'>;
      resolve({ ...outcome, output: output.replace(`${line}\n`, '') });
    });
  });
}
