/**
 * `npm run running-operations -- --tool NAME [--table TABLE] [--endpoint URL] [--json]`: lists
 * the operations of one tool that have not ended (token or task id, dialect, status, created
 * time, execution ARN), so a tool can be drained before a deploy removes it. Never prints
 * tool arguments or results. AWS credentials and region come from the default chain;
 * `--endpoint` points at the local stack's DynamoDB (placeholder credentials).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { listRunningOperations, type RunningOperation } from '../lambdas/aws/running-operations.ts';
import { ENV } from '../lambdas/handlers/environment.ts';

/** The local stack's table name (local/dynamodb/dynamo-local.ts), for --endpoint without --table. */
const LOCAL_TABLE_NAME = 'async-mcp-operations';

const USAGE = `Usage: npm run running-operations -- --tool NAME [--table TABLE] [--endpoint URL] [--json]

  --tool NAME      the tool whose running operations to list
  --table TABLE    the operations table: the stack output OperationsTableName
                   (default: $${ENV.tableName}; with --endpoint, the local stack's ${LOCAL_TABLE_NAME})
  --endpoint URL   a DynamoDB endpoint, e.g. the local stack's
  --json           one JSON array instead of a table`;
const TABLE_FROM_STACK = `aws cloudformation describe-stacks --stack-name AsyncMcp --query "Stacks[0].Outputs[?OutputKey=='OperationsTableName'].OutputValue" --output text`;

const ARGS = {
  options: {
    tool: { type: 'string' },
    table: { type: 'string' },
    endpoint: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
} satisfies ParseArgsConfig;

async function main(): Promise<number> {
  let values: ReturnType<typeof parseArgs<typeof ARGS>>['values'];
  try {
    ({ values } = parseArgs(ARGS));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const tableName = values.table ?? process.env[ENV.tableName] ?? (values.endpoint ? LOCAL_TABLE_NAME : undefined);
  if (!values.tool) {
    console.error(`--tool is required\n\n${USAGE}`);
    return 2;
  }
  if (!tableName) {
    console.error(`--table is required (or ${ENV.tableName}): the stack output OperationsTableName, e.g.\n  --table "$(${TABLE_FROM_STACK})"`);
    return 2;
  }
  const client = new DynamoDBClient(
    values.endpoint
      ? { endpoint: values.endpoint, region: process.env.AWS_REGION ?? 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {},
  );
  try {
    const running = await listRunningOperations({ client, tableName, tool: values.tool });
    console.log(values.json ? JSON.stringify(running.map(asOutput), null, 2) : table(values.tool, running));
    return 0;
  } catch (error) {
    console.error(`Cannot read ${tableName}: ${(error as Error).name}: ${(error as Error).message}`);
    return 1;
  } finally {
    client.destroy();
  }
}

function asOutput(op: RunningOperation) {
  return { token: op.token, dialect: op.dialect, status: op.status, createdAt: new Date(op.createdAt).toISOString(), executionArn: op.executionArn ?? null };
}

function table(tool: string, running: RunningOperation[]): string {
  if (running.length === 0) return `No running operations of ${tool}.`;
  const rows = [['TOKEN', 'DIALECT', 'STATUS', 'CREATED', 'EXECUTION ARN'], ...running.map((op) => Object.values(asOutput(op)).map((v) => v ?? '-'))];
  const widths = rows.reduce<number[]>((max, row) => row.map((cell, i) => Math.max(max[i] ?? 0, cell.length)), []);
  const lines = rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
  return `${lines.join('\n')}\n${running.length} running operation${running.length === 1 ? '' : 's'} of ${tool}.`;
}

process.exitCode = await main();
