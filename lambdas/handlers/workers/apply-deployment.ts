/**
 * Worker `apply_deployment` (approve_deployment): the plan and how its approval ended →
 * the report. An accepted approval deploys every step (simulated); anything else none.
 */
import * as z from 'zod';
import { reportDeployment, type DeploymentReport } from '../../examples/deployment-plan.ts';
import { parseWorkerInput } from '../../examples/worker-input.ts';

const Input = z.object({
  plan: z.object({
    environment: z.string().min(1),
    count: z.number().int().min(1),
    steps: z.array(z.object({ step: z.number().int().min(1), change: z.string() })).min(1),
    message: z.string(),
  }),
  /** The client's ElicitResult when accepted; `{ action }` from the Cause of Mcp.InputDeclined, or `timeout`. */
  answer: z.looseObject({
    action: z.enum(['accept', 'decline', 'cancel', 'timeout']),
    content: z.looseObject({ comment: z.string().optional() }).optional(),
  }),
});

/** Lambda entry point. */
export async function handler(event: unknown): Promise<DeploymentReport> {
  const { plan, answer } = parseWorkerInput('apply_deployment', Input, event);
  return reportDeployment(plan, answer.action, answer.content?.comment);
}
