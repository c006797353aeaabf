/**
 * One IAM evaluation with `@cloud-copilot/iam-simulate`: the result, whether a resource policy
 * denied, and the identity statements that allowed it.
 */
import { runSimulation, runUnsafeSimulation, type RequestAnalysis, type Simulation } from '@cloud-copilot/iam-simulate';
import type { PolicyDocument } from './managed-policies.ts';

/** A statement of a role's policy, named as the least-privilege report names it. */
export interface StatementRef {
  /** The policy's name (inline) or ARN (managed). */
  policy: string;
  sid?: string;
  /** 0-based position in the policy's Statement array. */
  index: number;
}

/** What one evaluation decided. */
export interface Evaluated {
  result: 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';
  deniedByResource: boolean;
  statements: StatementRef[];
}

/** Evaluates `simulation`; a request the simulator cannot evaluate is refused, and `logger` told. */
export async function evaluate(logger: Pick<Console, 'warn'>, simulation: Simulation): Promise<Evaluated> {
  const outcome = await runSimulation(simulation, {});
  if (outcome.resultType === 'error') {
    // Actions without resource-level permissions in the service authorization reference, which AWS
    // still authorizes on a resource: SendTaskSuccess/Failure/Heartbeat on the token's state
    // machine (the ARN its AccessDenied names, and what CDK's grantTaskResponse grants on).
    if (outcome.errors.message === 'must.use.wildcard') return evaluateUnvalidated(simulation);
    if (outcome.errors.identityPolicyErrors || outcome.errors.resourcePolicyErrors) {
      throw new Error(`IAM: a policy of this stack is not valid IAM: ${JSON.stringify(outcome.errors)}`);
    }
    // An action IAM does not know, or a resource of no type the action takes: AWS refuses it.
    const { action, resource } = simulation.request;
    logger.warn(`IAM: ${action} on ${resource.resource} is refused: the simulator cannot evaluate it (${outcome.errors.message})`);
    return { result: 'ImplicitlyDenied', deniedByResource: false, statements: [] };
  }
  const analyses: RequestAnalysis[] = outcome.resultType === 'single' ? [outcome.result.analysis] : outcome.results.map((r) => r.analysis);
  const statements: StatementRef[] = [];
  for (const analysis of analyses) {
    for (const allow of analysis.identityAnalysis?.allowStatements ?? []) {
      statements.push(statementRef(allow.policyId, allow.statement.sid(), allow.statement.index() - 1));
    }
  }
  const deniedByResource = analyses.some((a) => (a.resourceAnalysis?.denyStatements.length ?? 0) > 0);
  return { result: outcome.overallResult, deniedByResource, statements };
}

/** The simulator's unvalidated engine, and each Allow statement alone to name the ones that allow. */
function evaluateUnvalidated(simulation: Simulation): Evaluated {
  const result = runUnsafeSimulation(simulation, {});
  const statements: StatementRef[] = [];
  if (result === 'Allowed') {
    for (const { name, policy } of simulation.identityPolicies as Array<{ name: string; policy: PolicyDocument }>) {
      policy.Statement.forEach((statement, index) => {
        const alone = { ...simulation, resourcePolicy: undefined, identityPolicies: [{ name, policy: { Version: '2012-10-17', Statement: [statement] } }] };
        if (runUnsafeSimulation(alone, {}) === 'Allowed') {
          statements.push(statementRef(name, (statement as { Sid?: string }).Sid, index));
        }
      });
    }
  }
  return { result, deniedByResource: false, statements };
}

function statementRef(policy: string, sid: string | undefined, index: number): StatementRef {
  return sid === undefined ? { policy, index } : { policy, sid, index };
}
