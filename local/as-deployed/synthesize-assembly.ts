/**
 * `npx cdk synth --no-notices -q -o DIR [-c key=value ...]` in the repository, as a user would
 * run it before `cdk deploy`: the cloud assembly that `--as-deployed` and the tests run.
 */
import { spawn } from 'node:child_process';

export interface SynthesizeOptions {
  /** Where the assembly goes. */
  outDir: string;
  /** CDK context (`-c key=value`), e.g. `{ auth: 'none' }`. */
  context?: Record<string, string>;
  /** Where cdk.json is. @default the working directory (the repository, or the user's project) */
  cwd?: string;
  /** Lines of cdk's output, for a progress display. @default kept until a failure reports them */
  onOutput?: (text: string) => void;
  /** Stops the synth: every process it started ends before the promise rejects. */
  signal?: AbortSignal;
}

/** Synthesizes the app; rejects with cdk's output when it fails, or with the abort reason once its processes have ended. */
export function synthesizeAssembly(options: SynthesizeOptions): Promise<void> {
  const args = ['cdk', 'synth', '--no-notices', '-q', '-o', options.outDir];
  for (const [key, value] of Object.entries(options.context ?? {})) args.push('-c', `${key}=${value}`);
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    // npx, cdk, the app and esbuild are a tree of processes: a group of their own lets an abort
    // end them all, so none writes into the output folder after it is removed.
    // The project's own cdk.json: the repository's in a clone, the user's project with the package installed.
    const child = spawn('npx', args, { cwd: options.cwd ?? process.cwd(), stdio: ['ignore', 'pipe', 'pipe'], detached: signal !== undefined });
    const killGroup = (kill: NodeJS.Signals) => {
      try {
        if (signal && child.pid !== undefined) process.kill(-child.pid, kill);
      } catch {
        // The group has ended already.
      }
    };
    const abort = () => killGroup('SIGTERM');
    // A group of its own is not ended with this process: end it when this process exits.
    const orphaned = () => killGroup('SIGKILL');
    signal?.addEventListener('abort', abort, { once: true });
    if (signal) process.once('exit', orphaned);
    let output = '';
    const collect = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      options.onOutput?.(text);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    // 'close': npx, and every process still holding its output pipes, have ended.
    child.once('close', (code) => {
      signal?.removeEventListener('abort', abort);
      process.removeListener('exit', orphaned);
      // A process cdk started may outlive cdk itself (a failed synth does not wait for its bundlings).
      killGroup('SIGKILL');
      if (signal?.aborted) reject(signal.reason);
      else if (code === 0) resolve();
      else reject(new Error(`npx ${args.join(' ')} failed (exit ${code}):\n${output.trim()}`));
    });
  });
}
