/**
 * The second cold-start reference: the minimal server of reference-mcp-lambda.ts, backed by
 * DynamoDB the way any such Lambda is. It loads the runtime's DynamoDB client and builds one
 * at module scope, as our MCP handler does, and its one tool reads an item. Our cold import
 * over this one is what our own module init costs beyond the AWS SDK a DynamoDB-backed MCP
 * Lambda must load.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

const client = new DynamoDBClient({});
const TableName = process.env.TABLE_NAME ?? 'reference';

const mcp = createMcpHandler(() => {
  const server = new McpServer({ name: 'reference-dynamodb', version: '1.0.0' });
  server.registerTool('read', { description: 'Reads one item by its key.', inputSchema: z.object({ key: z.string() }) }, async ({ key }) => {
    const { Item } = await client.send(new GetItemCommand({ TableName, Key: { pk: { S: key } } }));
    return { content: [{ type: 'text', text: Item?.value?.S ?? '' }] };
  });
  return server;
});

/** The web-standard face, which a Lambda adapter would call. */
export const handler = (request: Request): Promise<Response> => mcp.fetch(request);
