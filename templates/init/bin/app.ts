/**
 * The CDK app: `npx cdk synth`, `npx cdk deploy`. One stack holding the MCP server, built from
 * this project's tool folders (state-machines/) and workers (workers/).
 */
import { fileURLToPath } from 'node:url';
import { App, CfnOutput, Stack } from 'aws-cdk-lib';
import { AsyncMcpServer, loadToolFolders } from 'async-mcp/cdk';

const app = new App();
// The same checks `async-mcp validate-tools` and `async-mcp start` run: a folder that would not start does not deploy.
const tools = await loadToolFolders(fileURLToPath(new URL('../state-machines', import.meta.url)));

const stack = new Stack(app, app.node.tryGetContext('stackName') ?? '__STACK_NAME__');
const server = new AsyncMcpServer(stack, 'Server', {
  tools,
  workersDir: fileURLToPath(new URL('../workers', import.meta.url)),
  // Callers sign their requests with SigV4 (IAM); see AsyncMcpServerProps for OAuth.
  auth: { kind: 'iam' },
});
new CfnOutput(stack, 'McpUrl', { description: 'The MCP endpoint', value: `${server.functionUrl.url}mcp` });

app.synth();
