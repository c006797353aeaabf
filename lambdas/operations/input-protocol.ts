/**
 * The port through which the core reads questions and answers without knowing their wire
 * names (DESIGN §2: a dialect file is the only place its wire names appear). The core stores
 * a question as it was asked, counts and routes it by its kind, and hands an answer to the
 * waiting state as the protocol says; lambdas/mcp/input/mcp-input-protocol.ts is the MCP one.
 */
import type { Delivery, InputKind, InputRequestMessage } from './operation.ts';

/** The answer to one question: the client's result, or the JSON-RPC error it answered with. */
export type InputAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

/** What an answer does to the waiting state (defined beside the record, which keeps one for a retried ask). */
export type { Delivery };

/** A question a state asked, checked: as kept on the record, with the kind of client it may go to. */
export type ParsedInputRequest = { ok: true; request: InputRequestMessage; kind: InputKind; capability: string } | { ok: false; message: string };

/** An answer, checked against its question; `field` names the wrong part as the client sent it. */
export type ParsedInputAnswer = { ok: true; delivery: Delivery } | { ok: false; field: string; problem: string };

export interface InputProtocol {
  /** The part of a client's declared capabilities an execution may read to decide what to ask. */
  capabilitiesOf(declared: Record<string, unknown>): Record<string, unknown>;
  /** The question kinds a client that declared `capabilities` can be asked. */
  kindsOf(capabilities: Record<string, unknown>): InputKind[];
  /** Checks a question a state asked (`capability` names what it needs, for the refusal of a client without it). */
  parseRequest(value: unknown): ParsedInputRequest;
  /** Checks an answer to the question pending under `inputKey`, and says what it does to the waiting state. */
  parseAnswer(inputKey: string, request: InputRequestMessage, answer: InputAnswer): ParsedInputAnswer;
}

/**
 * The protocol of a process that takes no questions: its clients can be asked nothing, and a
 * question or answer reaching it is refused, saying so.
 */
export const noInputProtocol: InputProtocol = {
  capabilitiesOf: () => ({}),
  kindsOf: () => [],
  parseRequest: () => ({ ok: false, message: 'this process takes no questions' }),
  parseAnswer: () => ({ ok: false, field: 'result', problem: 'this process takes no answers' }),
};
