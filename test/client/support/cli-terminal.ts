/**
 * The `async-mcp` CLI on a pseudo-terminal: `script` gives it a terminal for stdin, stdout
 * and stderr, and the test types into it as a user would, each keystroke line once the
 * screen shows what it answers.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { CLI } from './cli-process.ts';

const ROOT = resolve(import.meta.dirname, '../../..');

/** One step of the user at the terminal: wait until the screen shows `when`, then type `type` and Enter. */
export interface Keystrokes {
  when: RegExp;
  type: string;
}

export interface TerminalRun {
  code: number | null;
  /** Everything the terminal showed, stdout and stderr together, control sequences left in. */
  screen: string;
}

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** Runs the CLI with `args` on a pseudo-terminal, typing `steps` in order; fails after `timeoutMs`. */
export function runOnTerminal(args: string[], env: NodeJS.ProcessEnv, steps: Keystrokes[], timeoutMs = 60_000): Promise<TerminalRun> {
  const command = [process.execPath, ...CLI, ...args].map(quote).join(' ');
  // -e: script exits with the CLI's status; -f: flush at once, so the test sees each prompt.
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: { ...env, TERM: 'dumb' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  let next = 0;
  let seenUpTo = 0;
  const onOutput = (chunk: Buffer) => {
    screen += chunk.toString();
    const step = steps[next];
    if (step?.when.test(screen.slice(seenUpTo))) {
      next += 1;
      seenUpTo = screen.length;
      child.stdin.write(`${step.type}\r`);
    }
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`The terminal run did not end within ${timeoutMs} ms; step ${next} of ${steps.length}. Screen:\n${screen}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin.end();
      done({ code, screen });
    });
  });
}
