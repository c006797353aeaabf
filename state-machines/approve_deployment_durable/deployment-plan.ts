/**
 * The simulated deployment behind approve_deployment_durable, as approve_deployment's workers
 * plan and report it (lambdas/examples/deployment-plan.ts): a plan of numbered steps and the
 * question that asks to approve it, then the report of what was (or was not) deployed. Kept in
 * the tool's folder so the folder is whole on its own, as a copied example must be.
 */

/** The approve_deployment arguments. */
export interface DeploymentRequest {
  environment: string;
  changes: string[];
}

/** One change of the plan, numbered from 1 in the order given. */
export interface DeploymentStep {
  step: number;
  change: string;
}

/** What the plan worker returns: the steps, and the question the approval state asks. */
export interface DeploymentPlan {
  environment: string;
  count: number;
  steps: DeploymentStep[];
  /** "Deploy N changes to <environment>?", then the numbered changes, one a line. */
  message: string;
}

/**
 * How the approval ended: the elicitation's action (`accept`, `decline`, `cancel`), or
 * `timeout` when nobody answered within the state's TimeoutSeconds.
 */
export type DeploymentDecision = 'accept' | 'decline' | 'cancel' | 'timeout';

/** The approve_deployment result (its outputSchema). */
export interface DeploymentReport {
  environment: string;
  planned: number;
  deployed: boolean;
  decision: DeploymentDecision;
  /** The approver's comment, when they accepted with one. */
  comment?: string;
  changes: Array<DeploymentStep & { status: 'deployed' | 'skipped' }>;
  summary: string;
}

/** The plan for a request: every change, trimmed and numbered, and the approval question. */
export function planDeployment(request: DeploymentRequest): DeploymentPlan {
  const steps = request.changes.map((change, index) => ({ step: index + 1, change: change.trim() }));
  if (steps.length === 0) throw new RangeError('a deployment needs at least one change');
  const question = `Deploy ${countOf(steps.length)} to ${request.environment}?`;
  const message = [question, ...steps.map(({ step, change }) => `${step}. ${change}`)].join('\n');
  return { environment: request.environment, count: steps.length, steps, message };
}

/**
 * What the deployment did once the approval ended: every step deployed when it was
 * accepted, none otherwise. Deploying is simulated; nothing leaves this function.
 */
export function reportDeployment(plan: DeploymentPlan, decision: DeploymentDecision, comment?: string): DeploymentReport {
  const deployed = decision === 'accept';
  const note = comment?.trim();
  const changes = plan.steps.map((step) => ({ ...step, status: deployed ? ('deployed' as const) : ('skipped' as const) }));
  const summary = deployed
    ? `Deployed ${countOf(plan.count)} to ${plan.environment}.${note ? ` Comment: ${note}` : ''}`
    : `Deployed nothing to ${plan.environment}: ${WHY_NOT[decision as Exclude<DeploymentDecision, 'accept'>]}.`;
  return {
    environment: plan.environment,
    planned: plan.count,
    deployed,
    decision,
    ...(deployed && note ? { comment: note } : {}),
    changes,
    summary,
  };
}

const WHY_NOT: Record<Exclude<DeploymentDecision, 'accept'>, string> = {
  decline: 'the approver declined',
  cancel: 'the approver dismissed the question',
  timeout: 'nobody answered in time',
};

function countOf(n: number): string {
  return `${n} change${n === 1 ? '' : 's'}`;
}
