/**
 * The operation card's own tools, as `tools/list` shows them to hosts that declared MCP
 * Apps. They are app-only (`_meta.ui.visibility: ["app"]`): "Host MUST NOT include tools
 * in the agent's tool list when their visibility does not include "model"", so the model
 * never sees them, and the card calls them through the host bridge with the user's own
 * principal. Each reads or acts on one operation of that principal, in any dialect:
 * nothing the user could not do with the dialect's own methods.
 */
import type { ToolListing } from '../dialects/dialect.ts';

export const CARD_STATUS = 'operation_card_status';
export const CARD_ANSWER = 'operation_card_answer';
export const CARD_CANCEL = 'operation_card_cancel';
export const CARD_TOOL_NAMES: readonly string[] = [CARD_STATUS, CARD_ANSWER, CARD_CANCEL];

/** The statuses the card shows: the handle tools' words. */
export const CARD_STATUSES = ['working', 'input_required', 'completed', 'failed', 'canceled'] as const;
export type CardStatus = (typeof CARD_STATUSES)[number];

const APP_ONLY = { ui: { visibility: ['app'] } } as const;

const operationId = {
  type: 'string',
  minLength: 1,
  description: 'The operation: a handle operationId, a taskId or a SEP-1391 token.',
};

/** The three tools as listed. */
export const CARD_TOOL_LISTINGS: readonly ToolListing[] = [
  {
    name: CARD_STATUS,
    title: 'Operation card: status',
    description:
      'For the operation card only. The status, progress, latest message, open question and (once it ended) result of one of your operations, ' +
      'named by its id, or by the JSON-RPC id of the tools/call that started it while that call still waits.',
    inputSchema: {
      type: 'object',
      properties: {
        operationId,
        requestId: { type: ['string', 'integer'], description: 'The JSON-RPC id of the tools/call that started the operation.' },
        tool: { type: 'string', description: 'With requestId: the tool that call named, so an id reused by another call is not mistaken for it.' },
      },
      additionalProperties: false,
    },
    _meta: APP_ONLY,
  },
  {
    name: CARD_ANSWER,
    title: 'Operation card: answer',
    description: 'For the operation card only. Answers the question one of your operations asks (an elicitation form), as the user filled it in.',
    inputSchema: {
      type: 'object',
      properties: {
        operationId,
        key: { type: 'string', minLength: 1, description: 'The question, as operation_card_status named it.' },
        action: { type: 'string', enum: ['accept', 'decline', 'cancel'], description: 'What the user did with the form.' },
        content: { type: 'object', description: 'The form values, with accept.' },
      },
      required: ['operationId', 'key', 'action'],
      additionalProperties: false,
    },
    _meta: APP_ONLY,
  },
  {
    name: CARD_CANCEL,
    title: 'Operation card: cancel',
    description: 'For the operation card only. Cancels one of your operations, as its Cancel button does.',
    inputSchema: { type: 'object', properties: { operationId }, required: ['operationId'], additionalProperties: false },
    _meta: APP_ONLY,
  },
];
