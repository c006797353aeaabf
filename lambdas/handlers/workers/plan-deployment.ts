/** Worker `plan_deployment` (approve_deployment): the tool arguments → the plan and its approval question. */
import * as z from 'zod';
import { planDeployment, type DeploymentPlan } from '../../examples/deployment-plan.ts';
import { parseWorkerInput } from '../../examples/worker-input.ts';

const Input = z.object({
  environment: z.string().min(1).max(64),
  changes: z.array(z.string().min(1).max(200)).min(1).max(50),
});

/** Lambda entry point. */
export async function handler(event: unknown): Promise<DeploymentPlan> {
  return planDeployment(parseWorkerInput('plan_deployment', Input, event));
}
