/**
 * What an operation leaves in DynamoDB: every item of every table on the local endpoint is
 * read before and after (with a client of the bench's own, not counted), and the items that
 * are new or changed are sized as DynamoDB bills storage and write units: attribute names'
 * UTF-8 bytes plus each value's size (docs: "Item sizes and formats"). Indexes are left out;
 * consumed-capacity.ts estimates the owner index's writes.
 */
import { type AttributeValue, DynamoDBClient, ListTablesCommand, ScanCommand } from '@aws-sdk/client-dynamodb';

/** An item's key (its table and `pk`/`sk`) and its size in bytes. */
export type Footprint = Map<string, number>;

/** Every item of every table at `endpoint`, by `table pk sk`, with its size. */
export async function tableFootprint(endpoint: string): Promise<Footprint> {
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const items: Footprint = new Map();
  try {
    const { TableNames = [] } = await client.send(new ListTablesCommand({}));
    for (const table of TableNames) {
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
        for (const item of page.Items ?? []) items.set(`${table} ${keyText(item.pk)} ${keyText(item.sk)}`, itemBytes(item));
        start = page.LastEvaluatedKey;
      } while (start);
    }
  } finally {
    client.destroy();
  }
  return items;
}

/** The items of `after` that `before` does not hold as they are, by kind (the key's prefix up to `#`). */
export function footprintChange(before: Footprint, after: Footprint): { kind: string; items: number; bytes: number }[] {
  const kinds = new Map<string, { items: number; bytes: number }>();
  for (const [key, bytes] of after) {
    if (before.get(key) === bytes) continue;
    const [table = '', pk = ''] = key.split(' ');
    const kind = `${table.replace(/-[A-Za-z0-9]{8,}$/, '')} ${pk.split('#')[0]}#`;
    const sum = kinds.get(kind) ?? { items: 0, bytes: 0 };
    kinds.set(kind, { items: sum.items + 1, bytes: sum.bytes + bytes });
  }
  return [...kinds].map(([kind, sum]) => ({ kind, ...sum })).sort((a, b) => b.bytes - a.bytes);
}

function keyText(value: AttributeValue | undefined): string {
  return value?.S ?? value?.N ?? '';
}

/** An item's size as DynamoDB counts it. */
export function itemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (value.NS) return value.NS.reduce((sum, n) => sum + numberBytes(n), 0);
  if (value.BS) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  // A list or map: 3 bytes, plus 1 per element, plus its contents.
  if (value.L) return 3 + value.L.reduce((sum, v) => sum + 1 + valueBytes(v), 0);
  if (value.M) return 3 + Object.entries(value.M).reduce((sum, [k, v]) => sum + 1 + Buffer.byteLength(k) + valueBytes(v), 0);
  return 0;
}

/** "Approximately 1 byte per two significant digits, plus 1 byte." */
function numberBytes(n: string): number {
  const digits = n.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}
