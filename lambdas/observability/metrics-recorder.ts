/**
 * The metrics port: counts and durations with their dimensions, buffered until `flush`
 * (once per invocation). The EMF implementation is emf-metrics.ts; `noMetrics` drops
 * everything (the local server's default, so `npm start` prints no metric lines).
 */

/** Custom metric names (namespace `AsyncMcp`); `service` is a dimension of each. */
export const METRIC = {
  /** A record created by a start; dimensions tool, dialect. */
  started: 'OperationsStarted',
  /** Entered `completed`; dimensions tool, dialect. */
  completed: 'OperationsCompleted',
  /** Entered `failed`; dimensions tool, dialect. */
  failed: 'OperationsFailed',
  /** Entered `canceled`; dimensions tool, dialect. */
  cancelled: 'OperationsCancelled',
  /** A status request (`tasks/get`, `tools/async/status`, the `operation_status` handle tool); dimension dialect. */
  polls: 'Polls',
  /** Milliseconds from an execution's status change to status-sync having applied it; no extra dimension. */
  statusSyncLag: 'StatusSyncLag',
  /** A question an execution asked the client (the operation waits in `input_required`); dimension tool. */
  inputRequired: 'InputRequired',
  /** An operation status event EventBridge did not take after every attempt; dimension tool. */
  operationEventsFailed: 'OperationEventsFailed',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

export interface MetricsRecorder {
  /** Adds `value` (default 1) to a Count metric. */
  count(name: MetricName, dimensions: Record<string, string>, value?: number): void;
  /** Records a duration in milliseconds. */
  milliseconds(name: MetricName, value: number, dimensions: Record<string, string>): void;
  /** Writes what was recorded since the last flush; nothing when nothing was. */
  flush(): void;
}

/** Records nothing. */
export const noMetrics: MetricsRecorder = {
  count: () => undefined,
  milliseconds: () => undefined,
  flush: () => undefined,
};
