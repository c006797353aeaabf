/**
 * The live status line a terminal user sees while a call runs: a spinner, the elapsed time,
 * the status message, and a progress bar once the server reports progress. It redraws one
 * line in place and clears it when done.
 */
import type { CallStatus } from './call-handle.ts';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const BAR_WIDTH = 20;
const REDRAW_MS = 100;

/** One rendering of the line (no control characters), for a given frame and elapsed time. */
export function renderProgressLine(frame: number, elapsedMs: number, label: string, status: CallStatus | undefined, columns = 80): string {
  const parts = [FRAMES[frame % FRAMES.length] ?? '', formatElapsed(elapsedMs), label];
  if (status) parts.push(status.statusMessage ? `${status.state}: ${status.statusMessage}` : status.state);
  const progress = status?.progress;
  if (progress) {
    if (progress.total !== undefined && progress.total > 0) {
      const ratio = Math.min(Math.max(progress.progress / progress.total, 0), 1);
      const filled = Math.round(ratio * BAR_WIDTH);
      parts.push(`[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ${Math.round(ratio * 100)}%`);
    } else {
      parts.push(`(${progress.progress})`);
    }
  }
  const line = parts.join(' ');
  return line.length > columns - 1 ? `${line.slice(0, Math.max(columns - 2, 1))}…` : line;
}

export function formatElapsed(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60
    ? `${minutes}m${String(Math.floor(seconds % 60)).padStart(2, '0')}s`
    : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

export interface ProgressLine {
  update(status: CallStatus): void;
  setLabel(label: string): void;
  /** Clears the line and stops redrawing it, so a prompt can use the terminal; `resume` draws it again. */
  pause(): void;
  resume(): void;
  stop(): void;
}

/** Draws on `stream` (a TTY) until stopped. */
export function startProgressLine(stream: NodeJS.WriteStream, label: string): ProgressLine {
  const started = Date.now();
  let frame = 0;
  let status: CallStatus | undefined;
  let text = label;
  const draw = () => {
    stream.write(`\r\x1b[2K${renderProgressLine(frame++, Date.now() - started, text, status, stream.columns || 80)}`);
  };
  let timer: NodeJS.Timeout | undefined;
  const run = () => {
    draw();
    timer = setInterval(draw, REDRAW_MS);
    timer.unref();
  };
  const halt = () => {
    clearInterval(timer);
    timer = undefined;
    stream.write('\r\x1b[2K');
  };
  run();
  return {
    update(next) {
      // A status without progress keeps the last bar: polls do not repeat it.
      status = next.progress || !status?.progress ? next : { ...next, progress: status.progress };
      if (timer) draw();
    },
    setLabel(next) {
      text = next;
    },
    pause() {
      if (timer) halt();
    },
    resume() {
      if (!timer) run();
    },
    stop() {
      halt();
    },
  };
}
