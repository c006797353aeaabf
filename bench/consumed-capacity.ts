/**
 * DynamoDB request units, as the service bills them on demand, for the bench's cost figure:
 * a middleware on the DynamoDB client asks each item call for `ReturnConsumedCapacity: TOTAL`
 * and adds up what the table answers (dynalite computes it as DynamoDB does for the table:
 * writes per started KB, strongly consistent reads per started 4 KB).
 *
 * dynalite leaves out the `byOwner` index, which DynamoDB bills too: every operation item
 * (`OP#...`) is in it (ALL projection), so each write of one is counted once more, at the
 * table's units, as an estimate of the index write. Slot items (`ACTIVE#...`) are in no index.
 * It meters no index read either: with `estimateIndexReads`, a Query of the index is counted as
 * DynamoDB bills an eventually consistent read, 0.5 RCU per started 4 KB of the items it
 * returned (sized as DynamoDB counts them, item-footprint.ts), at least 0.5.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { itemBytes } from './item-footprint.ts';

let metersAdded = 0;

const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand']);
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);

export interface RequestUnits {
  /** Read request units. */
  read: number;
  /** Write request units, table and index. */
  write: number;
}

export interface CapacityMeter {
  /** Units consumed since the meter was added or last reset. */
  units(): RequestUnits;
  reset(): void;
}

/** Adds the metering middleware; `when` picks the calls to meter (all by default). */
export function meterConsumedCapacity(client: DynamoDBClient, options: { when?: () => boolean; estimateIndexReads?: boolean } = {}): CapacityMeter {
  let units: RequestUnits = { read: 0, write: 0 };
  const middleware =
    (next: (args: unknown) => Promise<{ output?: { ConsumedCapacity?: { CapacityUnits?: number }; Items?: unknown[] } }>, context: { commandName?: string }) =>
    async (args: { input?: Record<string, unknown> }) => {
      const command = context.commandName ?? '';
      const metered = (READS.has(command) || WRITES.has(command)) && (options.when?.() ?? true);
      if (metered && args.input) args.input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const indexRead = options.estimateIndexReads && command === 'QueryCommand' && typeof args.input?.IndexName === 'string';
      const consumed = indexRead ? indexReadUnits(result.output?.Items ?? []) : (result.output?.ConsumedCapacity?.CapacityUnits ?? 0);
      if (metered && READS.has(command)) units.read += consumed;
      if (metered && WRITES.has(command)) units.write += consumed * (isOperationItem(args.input) ? 2 : 1);
      return result;
    };
  // Several meters may watch one client, each for its own calls.
  client.middlewareStack.add(middleware as never, { step: 'initialize', name: `benchConsumedCapacity${++metersAdded}` });
  return {
    units: () => ({ ...units }),
    reset: () => {
      units = { read: 0, write: 0 };
    },
  };
}

function isOperationItem(input: Record<string, unknown> | undefined): boolean {
  const key = (input?.Key ?? input?.Item) as { pk?: { S?: string } } | undefined;
  return key?.pk?.S?.startsWith('OP#') ?? false;
}

/** An eventually consistent read of `items`, as DynamoDB bills it: 0.5 RCU per started 4 KB, at least 0.5. */
function indexReadUnits(items: readonly unknown[]): number {
  const bytes = items.reduce<number>((sum, item) => sum + itemBytes(item as Record<string, AttributeValue>), 0);
  return 0.5 * Math.max(1, Math.ceil(bytes / 4096));
}
