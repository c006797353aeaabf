/**
 * Which occurrences an operation record's write amounts to, with their payloads
 * (event-catalog.ts describes them):
 * - `operation.finished` when it turns terminal;
 * - `operation.input_required` when it asks a new question;
 * - `operation.progress` for each progress or log line the run reports.
 * The payloads name the operation by the id its caller holds, and say how to read or
 * answer it in the protocol that started it.
 */
import { eventIdFor, type OccurrenceDraft } from '../../events/event-recorder.ts';
import { isTerminal, type Dialect, type OperationChanges, type OperationRecord, type RunReport } from '../../operations/operation.ts';
import { OPERATION_FINISHED, OPERATION_INPUT_REQUIRED, OPERATION_PROGRESS } from '../../events/event-names.ts';
// The SDK-free reading of a finished outcome: status sync appends events without the MCP SDK.
import { finishedAnswer } from '../results/result-shaping.ts';

/**
 * The most JSON a finished result may have to be inlined: the delivery body stays under
 * OpenAI's and the SEP's 256 KiB ("Servers SHOULD keep delivery bodies at or under 256
 * KiB") with the rest of the occurrence around it.
 */
export const MAX_INLINE_RESULT_BYTES = 240 * 1024;

/** How a client reads a finished operation's result in the protocol that started it. */
const FETCH: Record<Dialect, ((id: string) => Record<string, unknown>) | undefined> = {
  'tasks-2026-07-28': (id) => ({ method: 'tasks/get', params: { taskId: id } }),
  'tasks-2025-11-25': (id) => ({ method: 'tasks/result', params: { taskId: id } }),
  'sep-1391': (id) => ({ method: 'tools/async/result', params: { token: id } }),
  handle: (id) => ({ tool: 'operation_result', arguments: { operationId: id } }),
  // A waited-on call answered its caller itself.
  sync: undefined,
};

/** How a client answers an operation's questions in the protocol that started it. */
const ANSWER: Record<Dialect, ((id: string) => Record<string, unknown>) | undefined> = {
  'tasks-2026-07-28': (id) => ({ method: 'tasks/update', params: { taskId: id, inputResponses: '{ <key>: <answer> }' } }),
  // The server asks the questions on the tasks/result stream, and the answers go back as responses.
  'tasks-2025-11-25': (id) => ({ method: 'tasks/result', params: { taskId: id } }),
  // The server asks with a request carrying the token (_operation), answered while polling.
  'sep-1391': (id) => ({ method: 'tools/async/status', params: { token: id } }),
  handle: (id) => ({ tool: 'operation_result', arguments: { operationId: id } }),
  sync: undefined,
};

export function describeOperationChange(changes: OperationChanges, record: OperationRecord): OccurrenceDraft[] {
  if (changes.status !== undefined && isTerminal(changes.status) && isTerminal(record.status)) return [finished(record)];
  if (isTerminal(record.status)) return [];
  const drafts: OccurrenceDraft[] = [];
  // A run report writes exactly one new report (run-reports.ts); a terminal write trims them instead.
  const report = changes.reports !== undefined && changes.status === undefined ? record.reports?.at(-1) : undefined;
  if (report) drafts.push(progress(record, report));
  // A new question adds its key to `usedInputKeys`, in the same write that puts it in `pendingInputs`.
  if (changes.usedInputKeys !== undefined && record.status === 'input_required') {
    const asked = open(record);
    if (Object.keys(asked).length > 0) drafts.push(inputRequired(record, asked));
  }
  return drafts;
}

function common(record: OperationRecord) {
  return { operationId: record.token, tool: record.tool, dialect: record.dialect };
}

function finished(record: OperationRecord): OccurrenceDraft {
  const finishedAt = record.completedAt ?? record.updatedAt;
  const fetch = FETCH[record.dialect]?.(record.token);
  const base = {
    ...common(record),
    finishedAt: new Date(finishedAt).toISOString(),
    ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
    ...(fetch ? { fetch } : {}),
  };
  let data: Record<string, unknown>;
  if (record.status === 'canceled' || !record.outcome) {
    data = { ...base, status: 'cancelled', isError: false };
  } else {
    const answer = finishedAnswer(record.outcome, { name: record.tool });
    if ('result' in answer) {
      const { result } = answer;
      const inline = Buffer.byteLength(JSON.stringify(result)) <= MAX_INLINE_RESULT_BYTES;
      data = { ...base, status: 'completed', isError: result.isError === true, ...(inline ? { result } : { resultTooLarge: true }) };
    } else {
      // A protocol failure: the JSON-RPC error the original call would have answered.
      data = { ...base, status: 'failed', isError: true, error: answer.error };
    }
  }
  return {
    name: OPERATION_FINISHED,
    eventId: eventIdFor(record.ownerId, OPERATION_FINISHED, record.token, record.createdAt),
    at: finishedAt,
    ...pick(record),
    data,
  };
}

function progress(record: OperationRecord, report: RunReport): OccurrenceDraft {
  const { seq, at, kind } = report;
  const fields =
    report.kind === 'progress'
      ? {
          progress: report.progress,
          ...(report.total === undefined ? {} : { total: report.total }),
          ...(report.message === undefined ? {} : { message: report.message }),
        }
      : { level: report.level, ...(report.logger === undefined ? {} : { logger: report.logger }), data: report.data };
  return {
    name: OPERATION_PROGRESS,
    eventId: eventIdFor(record.ownerId, OPERATION_PROGRESS, record.token, record.createdAt, seq),
    at,
    ...pick(record),
    data: { ...common(record), seq, kind, ...fields },
  };
}

function inputRequired(record: OperationRecord, asked: Record<string, unknown>): OccurrenceDraft {
  const keys = Object.keys(asked).sort();
  const answer = ANSWER[record.dialect]?.(record.token);
  return {
    name: OPERATION_INPUT_REQUIRED,
    eventId: eventIdFor(record.ownerId, OPERATION_INPUT_REQUIRED, record.token, record.createdAt, ...keys),
    at: record.updatedAt,
    ...pick(record),
    data: { ...common(record), inputRequests: asked, ...(answer ? { answer } : {}) },
  };
}

/** The questions still open on the record, as tasks/get shows them: the ones nobody is answering yet. */
function open(record: OperationRecord): Record<string, unknown> {
  const asked: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(record.pendingInputs ?? {})) {
    if (entry.answeringSince === undefined && (entry.deadline === undefined || entry.deadline > record.updatedAt)) asked[key] = entry.request;
  }
  return asked;
}

function pick(record: OperationRecord) {
  return { operationId: record.token, tool: record.tool };
}
