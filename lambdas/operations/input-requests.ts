/**
 * Input mid-run: a state machine asks the client a question at a `.waitForTaskToken`
 * state (through the request-input worker), the question waits on the operation record,
 * and the client's answer resumes that state. Protocol-neutral: each dialect shows the
 * pending questions its own way and hands the answers back here.
 *
 * Every change is a compare-and-set on the record's `updatedAt`, so questions asked at
 * once (a Parallel state) and answers arriving at once (any instance) never lose one
 * another. An answer is delivered at most once: it is claimed on the record first.
 *
 * A question closes without its answer when its state stops waiting: Step Functions sends
 * no event when a `.waitForTaskToken` state times out, so a question carries its deadline
 * and is no longer shown once it passes; a question the execution went on past (it asks
 * again, and one of the two states runs alone) or whose token is gone is withdrawn.
 * Closed keys are remembered, so a late answer is told that it came too late. An answer
 * whose state stopped waiting while the run goes on is kept for the state's retried ask
 * (kept-answers.ts), which is resumed with it rather than asking again.
 *
 * Asking is idempotent: a question whose task token is already pending (a durable step run
 * again, a worker invoked twice), or one asked by a retried attempt of the state (and branch or
 * Map iteration) that stored it, keeps its key and stays one question. The ask writes it again all the same, so the
 * `operation.input_required` event a failed first try did not record is recorded now.
 */
import { OPERATION_SPANS } from '../observability/span-names.ts';
import { currentCarrier, withSpan } from '../observability/tracing.ts';
import type { Logger } from './ports.ts';
import type { Delivery, InputAnswer, InputProtocol } from './input-protocol.ts';
import { isTerminal, type InputRequestMessage, type OperationKey, type OperationRecord, type PendingInput } from './operation.ts';
import { OperationError } from './operation-error.ts';
import type { ExecutionLookup } from './operation-reads.ts';
import { RecordTooLargeError, TaskGoneError, type Clock, type RecordStore, type WorkflowEngine } from './ports.ts';
import { closedReason, closeWhere, type LateReason, pendingChanges, timedOut } from './question-closing.ts';
import { keepAnswer, keptForAnother } from './kept-answers.ts';
import { freeKey, ownQuestion } from './question-keys.ts';
import { nextUpdatedAt, updateRecord } from './record-updates.ts';

/** The error names a state's Catch sees when a question cannot be asked or was not answered. */
export const INPUT_ERRORS = {
  /** The client declined or cancelled an elicitation. */
  declined: 'Mcp.InputDeclined',
  /** The client answered with a JSON-RPC error. */
  error: 'Mcp.InputError',
  /** The client never declared the request kind, so it is not sent. */
  capabilityMissing: 'Mcp.CapabilityMissing',
  /** The state asked something that is not an MCP server-to-client request. */
  invalidRequest: 'Mcp.InvalidInputRequest',
  /** The operation is over (canceled, expired) or unknown: nobody will answer. */
  operationEnded: 'Mcp.OperationEnded',
  /**
   * The question, or its event, was not recorded (the store or the event log failed). Asking
   * again is safe (asking is idempotent), so the asking state retries it with backoff.
   */
  askFailed: 'Mcp.AskFailed',
} as const;

/** The largest question (JSON, UTF-8 bytes); the record holds every pending one and is bounded at 400 KB. */
export const MAX_INPUT_REQUEST_BYTES = 64 * 1024;
/** Questions pending at once on one operation. */
export const MAX_PENDING_INPUTS = 16;
/** The longest key (characters). */
export const MAX_INPUT_KEY_LENGTH = 128;
/** An answer being delivered this long ago is taken to have crashed: another may claim the key. */
const STALE_CLAIM_MS = 60_000;
const CAS_ATTEMPTS = 20;
const WAITING: readonly OperationRecord['status'][] = ['submitted', 'working', 'input_required'];

/** Why a question was not asked; the worker fails its state with `errorName`. */
export class InputRequestRefused extends Error {
  constructor(
    readonly errorName: (typeof INPUT_ERRORS)[keyof typeof INPUT_ERRORS],
    message: string,
  ) {
    super(message);
    this.name = 'InputRequestRefused';
  }
}

export interface AskInput {
  /** The operation, when the execution's input names it; otherwise it is found by `executionName`. */
  operation?: OperationKey;
  /** The asking execution's name: the question is refused unless it runs the operation. */
  executionName: string;
  /** A key of the state's choosing; one is minted when absent, and a used one gets a suffix. */
  key?: string;
  request: unknown;
  taskToken: string;
  /** When the asking state times out (epoch ms), if it has a timeout. */
  deadline?: number;
  /** Whether other states of the execution may run beside the asking one; absent counts as true. */
  concurrent?: boolean;
  /** The asking state's name, stored with the question. */
  state?: string;
  /**
   * This is a retry of an attempt of the same state that may have stored the question already
   * (under another task token): it then takes that question over.
   */
  retried?: boolean;
  /** When the asking state was entered (epoch ms; a retry keeps it), stored with the question to tell Map iterations apart. */
  enteredAt?: number;
}

/** A question that closed before its answer came, and why. */
export interface ClosedAnswer {
  key: string;
  reason: LateReason;
}

export type { LateReason } from './question-closing.ts';

/** What became of a set of answers: resumed states, keys not open (answered, unknown), and keys whose question had closed. */
export interface AnswerOutcome {
  resumed: string[];
  ignored: string[];
  closed: ClosedAnswer[];
}

export type { InputAnswer } from './input-protocol.ts';

export interface InputRequestsDeps {
  store: RecordStore;
  engine: WorkflowEngine;
  clock: Clock;
  logger: Logger;
  /** What questions and answers may be, and what an answer does to its state (the wire's words). */
  protocol: InputProtocol;
  /** The operation an execution runs, for executions whose input does not say. */
  executions: ExecutionLookup;
}

export class InputRequests {
  constructor(private readonly deps: InputRequestsDeps) {}

  /**
   * Stores a question with the waiting state's task token and moves the operation to
   * `input_required`. Returns the key it is pending under.
   */
  ask(input: AskInput): Promise<{ key: string; operation: OperationKey }> {
    // In the asking worker's span, so the operation's trace shows where the run waited.
    return withSpan(OPERATION_SPANS.questionAsked, {}, () => this.storeQuestion(input));
  }

  private async storeQuestion(input: AskInput): Promise<{ key: string; operation: OperationKey }> {
    const { request, kind, capability } = this.parseRequest(input.request);
    const operation = input.operation ?? (await this.deps.executions.findByExecutionName(input.executionName));
    if (!operation) throw new InputRequestRefused(INPUT_ERRORS.operationEnded, 'No live operation runs this execution');
    if (input.key !== undefined && (typeof input.key !== 'string' || input.key === '' || input.key.length > MAX_INPUT_KEY_LENGTH)) {
      throw new InputRequestRefused(INPUT_ERRORS.invalidRequest, `key must be a string of 1 to ${MAX_INPUT_KEY_LENGTH} characters`);
    }
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const record = await this.deps.store.get(operation);
      if (!record || record.executionName !== input.executionName || !WAITING.includes(record.status) || this.isExpired(record)) {
        throw new InputRequestRefused(INPUT_ERRORS.operationEnded, 'The operation is over: nobody will answer');
      }
      if (!(record.inputKinds ?? []).includes(kind)) {
        throw new InputRequestRefused(
          INPUT_ERRORS.capabilityMissing,
          `The client did not declare the ${capability} capability, so ${request.method} is not sent to it`,
        );
      }
      const now = nextUpdatedAt(this.deps.clock, record);
      const found = ownQuestion(record, { ...input, request }, now);
      const own = found && !keptForAnother(found[1], request) ? found : undefined;
      // Being answered already: the client has it, and the answer is on its way to the state
      // (to this retried attempt once it has taken the question over: see deliver).
      if (own && own[1].answeringSince !== undefined && own[1].taskToken === input.taskToken) return { key: own[0], operation };
      const { open: pending, closed } = this.closeOnAsk(record, now, input.concurrent, own?.[0]);
      if (!own && Object.keys(pending).length >= MAX_PENDING_INPUTS) {
        throw new InputRequestRefused(INPUT_ERRORS.invalidRequest, `At most ${MAX_PENDING_INPUTS} questions may be pending at once`);
      }
      const used = record.usedInputKeys ?? [];
      const key = own?.[0] ?? freeKey(input.key, used);
      // The same wait asked again keeps its deadline; a retried attempt waits from its own start.
      const deadline = own && own[1].taskToken === input.taskToken ? own[1].deadline : input.deadline;
      const entry: PendingInput = {
        request,
        taskToken: input.taskToken,
        askedAt: own?.[1].askedAt ?? now,
        ...(deadline === undefined ? {} : { deadline }),
        ...(input.concurrent === undefined ? {} : { concurrent: input.concurrent }),
        ...(input.state === undefined ? {} : { state: input.state }),
        ...(input.enteredAt === undefined ? {} : { enteredAt: input.enteredAt }),
        ...(own?.[1].keptAnswer ? { keptAnswer: own[1].keptAnswer } : {}),
        ...(own?.[1].answeringSince === undefined ? {} : { answeringSince: own[1].answeringSince }),
      };
      try {
        const updated = await this.deps.store.transition(
          operation,
          [record.status],
          {
            status: 'input_required',
            statusMessage: 'Waiting for input from the client',
            pendingInputs: { ...pending, [key]: entry },
            // Written again on a repeated ask: a write of the used keys is what records the
            // question's event (operation-occurrences.ts), the same event id for the same keys.
            usedInputKeys: own ? used : [...used, key],
            ...(closed ? { closedInputs: closed } : {}),
            updatedAt: now,
          },
          { ifUpdatedAt: record.updatedAt },
        );
        if (!updated) continue;
        // Answered while this attempt was on its way: resumed at once, not asked again.
        if (entry.keptAnswer) await this.deliver(operation, key, entry.keptAnswer);
        return { key, operation };
      } catch (error) {
        if (error instanceof RecordTooLargeError)
          throw new InputRequestRefused(INPUT_ERRORS.invalidRequest, 'The pending questions do not fit in the operation record');
        throw error;
      }
    }
    throw new OperationError('INTERNAL', 'The question was not stored: the operation kept changing');
  }

  /**
   * The questions a client should answer now: pending, within their deadline and not being
   * answered, by key. With none, the operation reads as working whatever its status says.
   */
  pending(record: OperationRecord): Record<string, InputRequestMessage> {
    if (record.status !== 'input_required') return {};
    const now = this.deps.clock.now();
    const open: Record<string, InputRequestMessage> = {};
    for (const [key, entry] of Object.entries(record.pendingInputs ?? {})) {
      if (timedOut(entry, now) || entry.keptAnswer !== undefined) continue;
      if (entry.answeringSince === undefined || now - entry.answeringSince > STALE_CLAIM_MS) open[key] = entry.request;
    }
    return open;
  }

  /** Closes the pending questions past their deadline on the record; the last one sends the operation back to `working`. */
  private async closeTimedOut(key: OperationKey): Promise<void> {
    await this.update(key, (record, now) => {
      if (isTerminal(record.status)) return undefined;
      const { open, closed } = closeWhere(record, now, (entry) => timedOut(entry, now));
      return closed ? { ...pendingChanges(record, open), closedInputs: closed } : undefined;
    });
  }

  /**
   * Delivers answers, keyed as the questions were. Keys that are not pending (never asked,
   * answered already, superseded) are ignored, as is a second answer racing the first. An
   * answer of the wrong shape for its question is refused before anything is delivered.
   */
  async answer(key: OperationKey, answers: Record<string, InputAnswer>): Promise<AnswerOutcome> {
    const record = await this.deps.store.get(key);
    const pending = record && !isTerminal(record.status) ? this.pending(record) : {};
    const deliveries: Array<[string, Delivery]> = [];
    const ignored: string[] = [];
    const closed: ClosedAnswer[] = [];
    const now = this.deps.clock.now();
    for (const [inputKey, answer] of Object.entries(answers)) {
      const request = pending[inputKey];
      const reason = record && !request ? closedReason(record, inputKey, now) : undefined;
      if (request) deliveries.push([inputKey, this.deliveryOf(inputKey, request, answer)]);
      else if (reason) closed.push({ key: inputKey, reason });
      else ignored.push(inputKey);
    }
    const resumed: string[] = [];
    for (const [inputKey, delivery] of deliveries) {
      // A span of the operation's trace, linked to the answering request's (another trace, or none).
      const answering = currentCarrier();
      const delivered = await withSpan(OPERATION_SPANS.questionAnswered, { ...(record?.trace ? { parent: record.trace } : {}), links: [answering] }, () =>
        this.deliver(key, inputKey, delivery),
      );
      if (delivered === true) resumed.push(inputKey);
      else if (delivered === false) ignored.push(inputKey);
      else closed.push({ key: inputKey, reason: delivered });
    }
    // Timed-out questions are closed on the record too, so the next read and ask see it.
    if (closed.some(({ reason }) => reason === 'timed-out')) await this.closeTimedOut(key).catch(() => undefined);
    // The answers' content may be the user's data: only keys and reasons are logged.
    for (const { key: inputKey, reason } of closed) this.deps.logger.warn('answer ignored: its question had closed', { inputKey, reason });
    for (const inputKey of ignored) this.deps.logger.info?.('answer ignored: no such question is open', { inputKey });
    return { resumed, ignored, closed };
  }

  /**
   * Claims the key, resumes its state, then takes the question off the record. False when
   * another answer won; why the question closed when its state no longer waits.
   */
  private async deliver(key: OperationKey, inputKey: string, delivery: Delivery): Promise<boolean | LateReason> {
    // The claim also marks the key answered, so an answer that comes after the operation ended
    // (and its questions were cleared) is told apart from one to a question nobody answered.
    const claimed = await this.update(key, (record, now) => {
      const entry = record.pendingInputs?.[inputKey];
      if (isTerminal(record.status) || !entry) return undefined;
      if (entry.answeringSince !== undefined && now - entry.answeringSince <= STALE_CLAIM_MS) return undefined;
      return {
        pendingInputs: { ...record.pendingInputs, [inputKey]: { ...entry, answeringSince: now } },
        closedInputs: { ...record.closedInputs, [inputKey]: { reason: 'answered' as const, at: now } },
      };
    });
    const entry = claimed?.pendingInputs?.[inputKey];
    if (!claimed || !entry) return false;
    let resumed: boolean | LateReason = true;
    try {
      if (delivery.kind === 'success') await this.deps.engine.sendTaskSuccess(entry.taskToken, delivery.output);
      else await this.deps.engine.sendTaskFailure(entry.taskToken, { error: delivery.error, cause: delivery.cause });
    } catch (error) {
      if (!(error instanceof TaskGoneError)) {
        // Not delivered: free the key so the answer can be sent again.
        await this.update(key, (record) => {
          const current = record.pendingInputs?.[inputKey];
          if (!current) return undefined;
          const { answeringSince: _released, ...rest } = current;
          const { [inputKey]: _unanswered, ...closed } = record.closedInputs ?? {};
          return { pendingInputs: { ...record.pendingInputs, [inputKey]: rest }, closedInputs: Object.keys(closed).length > 0 ? closed : undefined };
        }).catch(() => undefined);
        throw new OperationError('INTERNAL', 'The answer could not be delivered to the workflow', { cause: error });
      }
      // The state stopped waiting (timed out, or its execution went on or ended): the question is void.
      resumed = timedOut(entry, this.deps.clock.now()) ? 'timed-out' : 'ended';
      const kept = resumed === 'ended' ? await this.keep(key, inputKey, delivery) : undefined;
      // A retried attempt took the question over meanwhile: it is waiting, so the answer goes to it now.
      if (kept) return kept.taskToken === entry.taskToken ? true : this.deliver(key, inputKey, delivery);
    }
    await this.remove(key, inputKey, resumed === true ? undefined : resumed);
    return resumed;
  }

  /** Keeps an answer whose state stopped waiting for its retried attempt (kept-answers.ts); the question as kept, if it was. */
  private async keep(key: OperationKey, inputKey: string, delivery: Delivery): Promise<PendingInput | undefined> {
    const kept = await this.update(key, (record) => keepAnswer(record, inputKey, delivery)).catch(() => undefined);
    if (kept) this.deps.logger.info?.('answer kept for the retried attempt of its state', { inputKey });
    return kept?.pendingInputs?.[inputKey];
  }

  /** Takes an answered (or void, then remembered as closed) question off the record. */
  private async remove(key: OperationKey, inputKey: string, closedAs?: LateReason): Promise<void> {
    await this.update(key, (record, now) => {
      if (!record.pendingInputs?.[inputKey]) return undefined;
      const { [inputKey]: _answered, ...rest } = record.pendingInputs;
      return {
        ...pendingChanges(record, rest),
        ...(closedAs ? { closedInputs: { ...record.closedInputs, [inputKey]: { reason: closedAs, at: now } } } : {}),
      };
    });
  }

  /**
   * The pending questions a new question leaves open. Past their deadline: closed. When the
   * new one or an older one was asked by a state that runs alone, the older one's state is
   * over (the execution went on to ask again), so it is closed too.
   */
  private closeOnAsk(record: OperationRecord, now: number, concurrent: boolean | undefined, own: string | undefined) {
    return closeWhere(
      record,
      now,
      (entry, key) => key !== own && (timedOut(entry, now) || ((concurrent === false || entry.concurrent === false) && entry.answeringSince === undefined)),
    );
  }

  /** A question as the protocol reads it; refused (the state's Catch sees why) unless it is one. */
  private parseRequest(value: unknown) {
    // The record holds every pending question and is bounded: an oversized one is refused whatever it asks.
    const json = JSON.stringify(value);
    if (json !== undefined && Buffer.byteLength(json) > MAX_INPUT_REQUEST_BYTES) {
      throw new InputRequestRefused(INPUT_ERRORS.invalidRequest, `request must be at most ${MAX_INPUT_REQUEST_BYTES} bytes of JSON`);
    }
    const parsed = this.deps.protocol.parseRequest(value);
    if (!parsed.ok) throw new InputRequestRefused(INPUT_ERRORS.invalidRequest, parsed.message);
    return parsed;
  }

  /** What the answer does to its waiting state; an answer of the wrong shape is refused (INVALID_INPUT). */
  private deliveryOf(inputKey: string, request: InputRequestMessage, answer: InputAnswer): Delivery {
    const parsed = this.deps.protocol.parseAnswer(inputKey, request, answer);
    if (!parsed.ok) throw new OperationError('INVALID_INPUT', `Invalid ${parsed.field}: ${parsed.problem}`, { data: { field: parsed.field } });
    return parsed.delivery;
  }

  /** A compare-and-set update (see record-updates.ts); undefined when nothing was written. */
  private async update(
    key: OperationKey,
    change: (record: OperationRecord, now: number) => Parameters<RecordStore['transition']>[2] | undefined,
  ): Promise<OperationRecord | undefined> {
    const { record, written } = await updateRecord(this.deps.store, this.deps.clock, key, change);
    return written ? record : undefined;
  }

  private isExpired(record: OperationRecord): boolean {
    return record.expiresAt !== undefined && record.expiresAt * 1000 <= this.deps.clock.now();
  }
}

/**
 * The deadline of a question asked by a state entered at `enteredAt` (epoch ms): the sooner
 * of its TimeoutSeconds and HeartbeatSeconds (the worker sends no heartbeat, so the first
 * one missed ends the wait). Undefined when the state has neither.
 */
export function inputDeadline(enteredAt: number, timeoutSeconds: number | undefined, heartbeatSeconds: number | undefined): number | undefined {
  const bounds = [timeoutSeconds, heartbeatSeconds].filter((seconds): seconds is number => seconds !== undefined && Number.isFinite(seconds) && seconds > 0);
  return bounds.length === 0 ? undefined : enteredAt + Math.min(...bounds) * 1000;
}
