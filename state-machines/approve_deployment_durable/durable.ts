/**
 * approve_deployment_durable, the durable twin of approve_deployment: plans the changes, asks
 * the user to approve them (elicitation, key approval), deploys them (simulated) only if they
 * accept, and otherwise reports that nothing was deployed and why, as its twin does.
 */
import { CallbackTimeoutError } from '@aws/durable-execution-sdk-js';
import { defineTool, DurableToolError, INPUT_ERRORS, type ToolContext } from 'async-mcp/durable';
import { z } from 'zod';
import { type DeploymentDecision, planDeployment, reportDeployment } from './deployment-plan.ts';

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

export const handler = defineTool(
  {
    name: 'approve_deployment_durable',
    title: 'Deploy changes, after approval (simulated, durable function)',
    description:
      'Plans a deployment of the given changes to an environment, then asks the user to approve it: "Deploy N changes to <environment>?" with the changes listed and an optional comment field (the client must support elicitation). When the user accepts, it deploys every change; when they decline, dismiss the question or do not answer within an hour, it deploys nothing. It reports what it did, with the user\'s comment. Nothing is really deployed: the deployment is simulated. This is a long-running tool: it runs asynchronously and waits for the answer, so start it, poll its status (input_required while the question is open), answer the question, then fetch the result. Written as a Lambda durable function: the durable twin of approve_deployment.',
    inputSchema: z.strictObject({
      environment: z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,63}$/)
        .describe('The environment to deploy to, e.g. staging or production (lower case letters, digits and dashes, up to 64 characters).'),
      changes: z
        .array(z.string().min(1).max(200))
        .min(1)
        .max(50)
        .describe('The changes to deploy, in order, one line each (1 to 50, up to 200 characters each), e.g. "api: v2.3.1".'),
    }),
    outputSchema: z.strictObject({
      environment: z.string().describe('The environment it deployed to, or would have.'),
      planned: z.number().int().min(1).describe('How many changes the plan had.'),
      deployed: z.boolean().describe('Whether the changes were deployed (only when the user accepted).'),
      decision: z
        .enum(['accept', 'decline', 'cancel', 'timeout'])
        .describe('How the approval ended: the user accepted, declined or dismissed the question, or nobody answered within an hour.'),
      comment: z.string().optional().describe("The user's comment, when they accepted with one."),
      changes: z
        .array(z.strictObject({ step: z.number().int().min(1), change: z.string(), status: z.enum(['deployed', 'skipped']) }))
        .describe('Every planned change with its step number and what happened to it.'),
      summary: z.string().describe('One sentence saying what was done.'),
    }),
    invocation: 'async',
    keepAliveSeconds: 86400,
    pollIntervalSeconds: 2,
    durable: { executionTimeoutSeconds: 7200 },
  },
  async (request, context) => {
    const plan = await context.step('plan', async () => planDeployment(request));
    await context.reportProgress({ progress: 1, total: 3, message: `Planned ${plan.count} changes; waiting for approval` });
    const decided = await approval(context, plan.message);
    if (decided.decision !== 'accept') {
      // As approve_deployment: nothing deployed is an outcome to report, not a failure of the tool.
      const report = reportDeployment(plan, decided.decision);
      return { structuredContent: report, content: [{ type: 'text', text: report.summary }] };
    }
    await context.reportProgress({ progress: 2, total: 3, message: `Approved: deploying ${plan.count} changes` });
    const report = await context.step('deploy', async () => reportDeployment(plan, 'accept', decided.comment));
    await context.reportProgress({ progress: 3, total: 3, message: report.summary });
    return { structuredContent: report, content: [{ type: 'text', text: report.summary }] };
  },
);

/** How the approval ended: accepted (with the comment), declined or dismissed, or unanswered within the hour. */
async function approval(context: ToolContext, message: string): Promise<{ decision: DeploymentDecision; comment?: string }> {
  try {
    const answer = await context.askClient<Approval>(
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
