/** The names of the event types this server offers (mcp/events/event-catalog.ts describes them). */
export const OPERATION_FINISHED = 'operation.finished';
export const OPERATION_INPUT_REQUIRED = 'operation.input_required';
export const OPERATION_PROGRESS = 'operation.progress';
