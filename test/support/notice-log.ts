/**
 * A local stack's own notices (an IAM gateway's refusals, an event rule's retries and dead
 * letters), kept for the test that provokes them to assert instead of printed: pass it as the
 * stack's `notices`.
 */
import { format } from 'node:util';

export interface NoticeLog {
  /** Each notice as `WARN <text>` or `ERROR <text>`, in order. */
  readonly lines: string[];
  /** The notices so far, which the log then forgets: what one test provoked. */
  take(): string[];
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
}

export function noticeLog(): NoticeLog {
  const lines: string[] = [];
  return {
    lines,
    take: () => lines.splice(0),
    warn: (...data) => void lines.push(`WARN ${format(...data)}`),
    error: (...data) => void lines.push(`ERROR ${format(...data)}`),
  };
}
