/**
 * The Events soak's report: per mode, how many subscribers got every expected event (by
 * `eventId`), the repeats, the delivery latency and the AWS calls per delivered event; then
 * whether every question waited for its answer exactly once.
 */
import type { IntervalHistogram } from 'node:perf_hooks';
import type { Arrivals, Questions } from './events-soak-arrivals.ts';
import type { Receiver } from './events-soak-receiver.ts';
import type { ClientTally } from './events-soak-rpc.ts';

/** The soak's mix of operations, for the report's heading. */
export interface SoakShape {
  largeEvery: number;
  largeBytes: number;
  questionEvery: number;
}

export function percentile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export function printSoak(m: {
  shape: SoakShape;
  expected: Set<string>;
  operations: number;
  failedStarts: number;
  startsMs: number;
  totalMs: number;
  poll: Arrivals;
  push: Arrivals;
  finishedHooks: Arrivals[];
  receiver: Receiver;
  dynamo: Record<string, number>;
  sqs: Record<string, number>;
  injected: { dynamodb: number; sqs: number; questions: number };
}): void {
  const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
  const { largeEvery, largeBytes, questionEvery } = m.shape;
  console.log(
    `MCP Events soak (bench/events-soak.ts): ${m.operations} operations of one principal (1 in ${largeEvery} with a ${largeBytes / 1024} KiB result, 1 in ${questionEvery} asking a question first), ${m.finishedHooks.length} webhooks of operation.finished and ${m.receiver.hooks.length - m.finishedHooks.length} of operation.input_required, one poller of each, one push stream`,
  );
  console.log(
    `  faults: ${m.injected.dynamodb} DynamoDB write attempts, ${m.injected.questions} more of questions' writes and ${m.injected.sqs} SQS send attempts throttled, ${m.receiver.answered503} deliveries answered 503; ${m.failedStarts} starts refused and tried again`,
  );
  console.log(`  starts took ${(m.startsMs / 1000).toFixed(1)} s; the whole run ${(m.totalMs / 1000).toFixed(1)} s`);
  console.log(`  expected operation.finished events: ${m.expected.size} (of ${m.operations} operations)`);
  const row = (name: string, arrivals: Arrivals[]) => {
    const missing = arrivals.reduce((n, a) => n + a.missingOf(m.expected), 0);
    const duplicates = arrivals.reduce((n, a) => n + a.duplicates, 0);
    const latency = arrivals.flatMap((a) => [...a.first.values()]);
    const complete = arrivals.filter((a) => a.missingOf(m.expected) === 0).length;
    console.log(
      `  ${name.padEnd(9)} ${String(complete).padStart(4)}/${arrivals.length} subscribers got every event; missing ${missing}, repeated ${duplicates}; latency p50=${percentile(latency, 0.5)} ms p95=${percentile(latency, 0.95)} ms`,
    );
  };
  row('poll', [m.poll]);
  row('push', [m.push]);
  row('webhook', m.finishedHooks);
  const delivered = m.poll.first.size + m.push.first.size + m.receiver.hooks.reduce((n, a) => n + a.first.size, 0);
  const format = (counts: Record<string, number>) =>
    Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ');
  console.log(`  DynamoDB calls: ${sum(m.dynamo)} (${format(m.dynamo)}) = ${(sum(m.dynamo) / Math.max(1, delivered)).toFixed(2)} per delivered event`);
  console.log(`  SQS calls: ${sum(m.sqs)} (${format(m.sqs)}) = ${(sum(m.sqs) / Math.max(1, delivered)).toFixed(3)} per delivered event`);
  console.log(`  (${delivered} first arrivals in all; ${m.receiver.posts} webhook POSTs received, verifications included)`);
}

export function printQuestions(m: {
  asking: ReadonlySet<string>;
  completed: ReadonlySet<string>;
  questions: Questions;
  questionEvents: Set<string>;
  questionPoll: Arrivals;
  questionHooks: Arrivals[];
  askFailed: number;
}): void {
  const { asking, completed, questions } = m;
  const told = [...asking].filter((id) => questions.events.has(id)).length;
  const oneEvent = [...asking].filter((id) => questions.events.get(id)?.size === 1).length;
  const oneKey = [...asking].filter((id) => {
    const keys = questions.keys.get(id);
    return keys?.size === 1 && keys.has('confirm');
  }).length;
  const answered = [...asking].filter((id) => questions.answeredKeys(id).size === 1).length;
  const done = [...asking].filter((id) => completed.has(id)).length;
  const exactly = (id: string) =>
    questions.events.get(id)?.size === 1 && questions.keys.get(id)?.size === 1 && questions.answeredKeys(id).size === 1 && completed.has(id);
  const exactlyOnce = [...asking].filter(exactly).length;
  console.log(
    `  questions: ${asking.size} asked (${m.askFailed} asks failed with Mcp.AskFailed and were retried); ${told} told by event, ${oneEvent} by exactly one event; ${oneKey} only ever under the key confirm; ${answered} answered once; ${done} completed with the answer`,
  );
  console.log(`  questions waited for their answer exactly once: ${exactlyOnce}/${asking.size}${exactlyOnce === asking.size ? '' : ' (LOST OR DOUBLED)'}`);
  // What became of the first few others, to tell a lost question from a doubled one.
  for (const id of [...asking].filter((one) => !exactly(one)).slice(0, 3)) {
    const keys = [...(questions.keys.get(id) ?? [])].join(', ') || 'none';
    console.log(
      `    ${id}: keys ${keys}; ${questions.events.get(id)?.size ?? 0} events; answered ${[...questions.answeredKeys(id)].join(', ') || 'nothing'}; ${completed.has(id) ? 'completed' : 'not completed'}`,
    );
  }
  const row = (name: string, arrivals: Arrivals[]) => {
    const missing = arrivals.reduce((n, a) => n + a.missingOf(m.questionEvents), 0);
    const complete = arrivals.filter((a) => a.missingOf(m.questionEvents) === 0).length;
    const duplicates = arrivals.reduce((n, a) => n + a.duplicates, 0);
    console.log(
      `  ${name.padEnd(9)} ${String(complete).padStart(4)}/${arrivals.length} question subscribers got every question event; missing ${missing}, repeated ${duplicates}`,
    );
  };
  row('poll', [m.questionPoll]);
  row('webhook', m.questionHooks);
}

/** What the soak's own client went through, and how long the shared event loop was held up. */
export function printClient(m: { tally: ClientTally; loopDelay: IntervalHistogram }): void {
  const resent = [...m.tally.resent].map(([method, n]) => `${method} ${n}`).join(', ');
  const total = [...m.tally.resent.values()].reduce((a, b) => a + b, 0);
  const ms = (ns: number) => Math.round(ns / 1e6);
  console.log(
    `  client: ${total} requests sent again after their connection closed${total ? ` (${resent})` : ''}; ${m.tally.failed} failed after that and were tried again by their loop${m.tally.lastFailure ? ` (last: ${m.tally.lastFailure})` : ''}; event loop held up p99 ${ms(m.loopDelay.percentile(99))} ms, max ${ms(m.loopDelay.max)} ms`,
  );
}
