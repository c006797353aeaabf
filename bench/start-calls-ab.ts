/**
 * A start's three calls, the SDK path against the hot wire, measured alternately in one
 * process: the record's conditional `PutItem`, the slot claim's `UpdateItem` and
 * `StartExecution`, as the record store and the Step Functions engine send them (without the
 * hot path, then with `HotDynamoDbWrites` and `HotStartExecution`). The stand-ins (dynalite,
 * the Step Functions facade running each execution) answer from a local stack in another
 * process (local-server-process.ts `--starts`), so this process's CPU is the client side
 * alone. Rounds alternate so that both paths see the same load; medians are printed.
 *
 *   npx tsx bench/start-calls-ab.ts [rounds=12] [startsPerRound=240] [concurrency=8]
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { loadavg } from 'node:os';
import { AWS_CLIENT_CONFIG } from '../lambdas/aws/aws-client-config.ts';
import { DynamoDbRecordStore } from '../lambdas/aws/dynamodb-record-store.ts';
import { HotDynamoDbWrites } from '../lambdas/aws/hot-dynamodb-writes.ts';
import { HotStartExecution } from '../lambdas/aws/hot-start-execution.ts';
import { StepFunctionsEngine } from '../lambdas/aws/step-functions-engine.ts';
import type { OperationRecord } from '../lambdas/operations/operation.ts';
import type { RecordStore, WorkflowEngine } from '../lambdas/operations/ports.ts';
import { LOCAL_ACCOUNT_ID, LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/local-scope.ts';
import { stateMachineArn } from '../local/stepfunctions/sfn-facade-arns.ts';
import { WAITING_RUN, type LocalServerReady } from './local-server-process.ts';
import { startChild } from './poll-throughput.ts';

const [rounds = 12, perRound = 240, concurrency = 8] = process.argv.slice(2).map(Number);
const machineArn = stateMachineArn({ region: LOCAL_REGION, accountId: LOCAL_ACCOUNT_ID }, WAITING_RUN.name);
let started = 0;

/** One start's three calls, each owner its own so that no slot item grows. */
async function start(store: RecordStore, engine: WorkflowEngine, side: string): Promise<void> {
  const token = `ab-${side}-${process.pid}-${++started}`;
  const now = Date.now();
  const record: OperationRecord = {
    ownerId: `owner-${token}`,
    token,
    tool: WAITING_RUN.name,
    argumentsHash: 'sha256-of-arguments',
    dialect: 'tasks-2026-07-28',
    status: 'working',
    executionName: `exec-${token}`,
    createdAt: now,
    updatedAt: now,
    keepAliveSeconds: 3600,
    pollIntervalSeconds: 5,
  };
  const created = await store.create(record);
  if (!created.created) throw new Error(`${token} existed already`);
  if ((await store.claimActiveSlot(record.ownerId, token, 1_000, { requestId: '1', expiresAt: Math.floor(now / 1000) + 3600 })) !== 'claimed') {
    throw new Error(`${token} claimed no slot`);
  }
  const input = { arguments: WAITING_RUN.arguments, operation: { token, tool: WAITING_RUN.name, ownerId: record.ownerId } };
  await engine.start({ stateMachineArn: machineArn, name: record.executionName, input });
}

/** Client-side CPU per start over one round, µs. */
async function round(store: RecordStore, engine: WorkflowEngine, side: string): Promise<number> {
  let left = perRound;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await start(store, engine, side);
    }),
  );
  const { user, system } = process.cpuUsage(before);
  return (user + system) / perRound;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const stack = await startChild<LocalServerReady>('./local-server-process.ts', ['--starts']);
const endpoints = stack.ready.endpoints;
if (!endpoints) throw new Error('the local stack reported no endpoints');
const scope = { ...AWS_CLIENT_CONFIG, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
const dynamodb = new DynamoDBClient({ ...scope, endpoint: endpoints.dynamodb });
const sfn = new SFNClient({ ...scope, endpoint: endpoints.stepFunctions, disableHostPrefix: true });
const table = { client: dynamodb, tableName: endpoints.tableName };
const sides = {
  sdk: { store: new DynamoDbRecordStore(table), engine: new StepFunctionsEngine(sfn) },
  hot: {
    store: new DynamoDbRecordStore({ ...table, writes: new HotDynamoDbWrites(dynamodb) }),
    engine: new StepFunctionsEngine(sfn, new HotStartExecution(sfn)),
  },
};
const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
console.log(`start calls, SDK path against hot wire: ${rounds} alternating rounds of ${perRound} starts, ${concurrency} concurrent (load ${load()})`);
try {
  // One round each first, unmeasured: the clients' sockets, the wire's first signature, the JIT.
  for (const side of ['sdk', 'hot'] as const) await round(sides[side].store, sides[side].engine, side);
  const results: Record<'sdk' | 'hot', number[]> = { sdk: [], hot: [] };
  for (let index = 0; index < rounds; index++) {
    const order = index % 2 === 0 ? (['sdk', 'hot'] as const) : (['hot', 'sdk'] as const);
    for (const side of order) results[side].push(await round(sides[side].store, sides[side].engine, side));
  }
  const sdk = median(results.sdk);
  const hot = median(results.hot);
  console.log(
    `  client CPU per start (PutItem + UpdateItem + StartExecution), median: SDK path ${(sdk / 1000).toFixed(3)} ms, hot wire ${(hot / 1000).toFixed(3)} ms (${((1 - hot / sdk) * 100).toFixed(0)}% less)`,
  );
  console.log(`  rounds, µs: SDK ${results.sdk.map((v) => v.toFixed(0)).join(' ')}; hot ${results.hot.map((v) => v.toFixed(0)).join(' ')} (load ${load()})`);
} finally {
  dynamodb.destroy();
  sfn.destroy();
  await stack.close();
}
