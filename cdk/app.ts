/**
 * The CDK app: validates the tool folders, builds the stack, and checks it with
 * cdk-nag's AWS Solutions rules on every synth (a finding fails the synth).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { loadToolFolders } from '../lambdas/tools/tool-folder.ts';
import { readAppSettings } from './app-settings.ts';
import { AsyncMcpStack } from './async-mcp-stack.ts';

const app = new App();
const settings = readAppSettings(app.node);
// The same validation the local server runs: a folder that would not start locally does not deploy.
const tools = await loadToolFolders(settings.toolsDir);

new AsyncMcpStack(app, settings.stackName, {
  description: 'async-mcp: an MCP server running long tool calls as Step Functions executions',
  tools,
  ...(settings.workersDir ? { workersDir: settings.workersDir } : {}),
  auth: settings.auth,
  ...(settings.corsAllowedOrigins ? { corsAllowedOrigins: settings.corsAllowedOrigins } : {}),
  tracing: settings.tracing,
  maxActiveOperations: settings.maxActiveOperations,
  handleTools: settings.handleTools,
  listen: settings.listen,
  ...(settings.operationCard === undefined ? {} : { operationCard: settings.operationCard }),
  mcpReservedConcurrency: settings.mcpReservedConcurrency,
  statusSyncReservedConcurrency: settings.statusSyncReservedConcurrency,
  workerReservedConcurrency: settings.workerReservedConcurrency,
  ...(settings.toolStackCount ? { toolStackCount: settings.toolStackCount } : {}),
  ...(settings.workerStackCount ? { workerStackCount: settings.workerStackCount } : {}),
  ...(settings.alarmEmail ? { alarmEmail: settings.alarmEmail } : {}),
  ...(settings.eventBus ? { eventBusName: settings.eventBus } : {}),
  ...(settings.events ? { events: settings.events } : {}),
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

app.synth();
