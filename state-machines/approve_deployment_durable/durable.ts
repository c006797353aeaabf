/**
 * approve_deployment_durable, the durable twin of approve_deployment: plans the changes, asks
 * the user to approve them (elicitation, key approval), deploys them (simulated) only if they
 * accept, and otherwise reports that nothing was deployed and why, as its twin does.
 */
import { CallbackTimeoutError, type DurableContext, withDurableExecution } from '@aws/durable-execution-sdk-js';
import { askClient, DurableToolError, INPUT_ERRORS, reportProgress, type ToolEvent, type ToolResult } from 'async-mcp/durable';
import { type DeploymentDecision, type DeploymentRequest, planDeployment, reportDeployment } from './deployment-plan.ts';

/** What an accepted elicitation carries: the form's fields. */
interface Approval {
  action: 'accept';
  content?: { comment?: string };
}

const COMMENT_FORM = {
  type: 'object',
  properties: {
    comment: { type: 'string', title: 'Comment', description: 'A note for the deployment log (optional).', maxLength: 500 },
  },
};

export const handler = withDurableExecution(async (event: ToolEvent<DeploymentRequest>, context: DurableContext): Promise<ToolResult> => {
  const plan = await context.step('plan', async () => planDeployment(event.arguments));
  await reportProgress(context, event, { progress: 1, total: 3, message: `Planned ${plan.count} changes; waiting for approval` });
  const decided = await approval(context, event, plan.message);
  if (decided.decision !== 'accept') {
    // As approve_deployment: nothing deployed is an outcome to report, not a failure of the tool.
    const report = reportDeployment(plan, decided.decision);
    return { structuredContent: { ...report }, content: [{ type: 'text', text: report.summary }] };
  }
  await reportProgress(context, event, { progress: 2, total: 3, message: `Approved: deploying ${plan.count} changes` });
  const report = await context.step('deploy', async () => reportDeployment(plan, 'accept', decided.comment));
  await reportProgress(context, event, { progress: 3, total: 3, message: report.summary });
  return { structuredContent: { ...report }, content: [{ type: 'text', text: report.summary }] };
});

/** How the approval ended: accepted (with the comment), declined or dismissed, or unanswered within the hour. */
async function approval(context: DurableContext, event: ToolEvent<unknown>, message: string): Promise<{ decision: DeploymentDecision; comment?: string }> {
  try {
    const answer = await askClient<Approval>(
      context,
      event,
      { method: 'elicitation/create', params: { message, requestedSchema: COMMENT_FORM } },
      { key: 'approval', timeout: { hours: 1 } },
    );
    const comment = answer.content?.comment;
    return { decision: 'accept', ...(typeof comment === 'string' ? { comment } : {}) };
  } catch (error) {
    // A declined question's cause names the action: decline, or cancel for a dismissed one.
    if (error instanceof DurableToolError && error.name === INPUT_ERRORS.declined)
      return { decision: error.detail?.action === 'cancel' ? 'cancel' : 'decline' };
    if (error instanceof CallbackTimeoutError) return { decision: 'timeout' };
    throw error;
  }
}
