/**
 * DynamoDB's TTL for dynalite, which has none, with the lateness AWS has: DynamoDB deletes
 * an expired item in the background, typically within days, so a reader can still find it
 * long after its `expiresAt`. The sweeper deletes an item only once it has been expired for
 * longer than `lagSeconds`, so local runs see both states: expired but present, then gone.
 *
 * Like DynamoDB it only considers a TTL attribute of type Number (epoch seconds) that is not
 * more than five years in the past, and each delete is conditional on the item still being
 * expired, so an item refreshed between the scan and the delete is kept. It scans the table,
 * which is fine for a local store and never done in AWS.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DescribeTableCommand,
  ScanCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { OPERATIONS_TABLE } from '../../lambdas/aws/operations-table.ts';
import { describeError } from '../describe-error.ts';

/** DynamoDB's TTL skips items that expired more than five years ago (a likely unit mistake). */
const MAX_PAST_SECONDS = 5 * 365 * 24 * 60 * 60;

export interface TtlSweeperOptions {
  client: DynamoDBClient;
  tableName: string;
  /** @default OPERATIONS_TABLE.ttlAttribute */
  attribute?: string;
  /** How long an item stays after it expired, at least. @default 60 */
  lagSeconds?: number;
  /** Time between sweeps. @default 10_000 */
  intervalMs?: number;
  /** @default console */
  logger?: Pick<Console, 'warn'>;
}

export interface TtlSweeper {
  /** Deletes what is due now; resolves with the number of items deleted. */
  sweep(): Promise<number>;
  /** Stops sweeping, after the sweep under way if any. */
  close(): Promise<void>;
}

/** Starts sweeping `tableName` every `intervalMs`. */
export function startTtlSweeper(options: TtlSweeperOptions): TtlSweeper {
  const { client, tableName } = options;
  const attribute = options.attribute ?? OPERATIONS_TABLE.ttlAttribute;
  const lagSeconds = options.lagSeconds ?? 60;
  const logger = options.logger ?? console;
  let keyNames: Promise<string[]> | undefined;
  let running: Promise<number> | undefined;

  async function sweepOnce(): Promise<number> {
    keyNames ??= client
      .send(new DescribeTableCommand({ TableName: tableName }))
      .then(({ Table }) => (Table?.KeySchema ?? []).flatMap((key) => (key.AttributeName ? [key.AttributeName] : [])));
    const keys = await keyNames.catch((error: unknown) => {
      keyNames = undefined;
      throw error;
    });
    const nowSeconds = Math.floor(Date.now() / 1000);
    const values = { ':due': { N: String(nowSeconds - lagSeconds) }, ':oldest': { N: String(nowSeconds - MAX_PAST_SECONDS) } };
    let deleted = 0;
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({
          TableName: tableName,
          // A Number comparison never matches a value of another type, as TTL ignores those.
          FilterExpression: '#ttl < :due AND #ttl >= :oldest',
          ProjectionExpression: keys.map((_, i) => `#k${i}`).join(', '),
          ExpressionAttributeNames: { '#ttl': attribute, ...Object.fromEntries(keys.map((key, i) => [`#k${i}`, key])) },
          ExpressionAttributeValues: values,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const key of page.Items ?? []) {
        try {
          await client.send(
            new DeleteItemCommand({
              TableName: tableName,
              Key: key,
              ConditionExpression: '#ttl < :due',
              ExpressionAttributeNames: { '#ttl': attribute },
              ExpressionAttributeValues: { ':due': values[':due'] },
            }),
          );
          deleted++;
        } catch (error) {
          // Refreshed (or deleted) since the scan: it is not due any more.
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        }
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return deleted;
  }

  function sweep(): Promise<number> {
    running ??= sweepOnce().finally(() => (running = undefined));
    return running;
  }

  const timer = setInterval(() => {
    // Only the error's name and message: never an item, which carries tool arguments.
    sweep().catch((error: unknown) => logger.warn(`ttl sweeper: sweep of ${tableName} failed: ${describeError(error)}`));
  }, options.intervalMs ?? 10_000);
  timer.unref();

  return {
    sweep,
    async close() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
