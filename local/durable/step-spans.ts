/**
 * A durable execution's steps as spans of the operation's trace: each one from its START
 * checkpoint to its end's, the child of the invocation that ended it.
 */
import type { OperationUpdate } from '@aws/durable-execution-sdk-js';
import { OPERATION_SPANS } from '../../lambdas/observability/span-names.ts';
import type { TraceCarrier } from '../../lambdas/observability/trace-context.ts';
import { recordSpan } from '../../lambdas/observability/tracing.ts';

export class StepSpans {
  /** The running invocation's span, the parent of the steps it ends; none outside a trace. */
  invocation: TraceCarrier | undefined;
  private readonly starts = new Map<string, number>();
  private ended = 0;

  /** Notes the steps a checkpoint starts, and records a span for each one it ends. */
  checkpointed(updates: OperationUpdate[] | undefined): void {
    const parent = this.invocation;
    if (!parent) return;
    for (const update of updates ?? []) {
      if (update.Type !== 'STEP' || !update.Id) continue;
      if (update.Action === 'START') {
        this.starts.set(update.Id, Date.now());
        continue;
      }
      const startTime = this.starts.get(update.Id) ?? Date.now();
      this.starts.delete(update.Id);
      // Numbered, not named: a tool may name its steps after its arguments, which stay out of traces.
      this.ended += 1;
      recordSpan(OPERATION_SPANS.step(this.ended), { parent, startTime, failed: update.Action === 'FAIL' });
    }
  }
}
