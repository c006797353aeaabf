/**
 * DynamoDB's size limits where dynalite gets them wrong, as a middleware on a local
 * client. DynamoDB measures strings in UTF-8 bytes; dynalite counts UTF-16 code units, so
 * a key or item of non-ASCII text passes locally and fails in AWS. dynalite also never
 * checks the size of a global secondary index's key attributes, which DynamoDB refuses on
 * write like the table's own. The middleware refuses such requests before they are sent,
 * with the error DynamoDB answers (`ValidationException`, its message), so a local test sees
 * what a deployment would. What dynalite already gets right (ASCII keys and items) it still
 * answers itself.
 *
 * Covered: the key of GetItem, DeleteItem and UpdateItem; the table and index keys and the
 * item size of PutItem; each value of an UpdateItem on its own. Not covered: the size an
 * UpdateItem gives the stored item (it depends on what is stored; dynalite checks it in
 * UTF-16 units), and batch or transaction requests.
 */
import { DescribeTableCommand, DynamoDBServiceException, type AttributeValue, type DynamoDBClient, type TableDescription } from '@aws-sdk/client-dynamodb';

/** DynamoDB's limits, in bytes (1 KB = 1024 bytes). */
export const DYNAMODB_LIMITS = { partitionKeyBytes: 2048, sortKeyBytes: 1024, itemBytes: 400 * 1024 } as const;

const MESSAGES = {
  // The missing space before 2048 is DynamoDB's own.
  partitionKey: 'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes',
  sortKey: 'One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes',
  item: 'Item size has exceeded the maximum allowed size',
  updateValue: (name: string) => `ExpressionAttributeValues contains invalid value: Item size has exceeded the maximum allowed size for key ${name}`,
};

type Item = Record<string, AttributeValue>;

interface KeyPair {
  partitionKey: string;
  sortKey?: string;
}

interface KeySchemas {
  table: KeyPair;
  indexes: KeyPair[];
}

/** Installs the checks on `client` (idempotent). Table key schemas are read once per table with DescribeTable. */
export function installDynamoLimits(client: DynamoDBClient): void {
  const name = 'localDynamoLimits';
  if (client.middlewareStack.identify().some((entry) => entry.startsWith(`${name} `))) return;
  const schemas = new Map<string, Promise<KeySchemas | undefined>>();
  const schemaOf = (tableName: string) => {
    let schema = schemas.get(tableName);
    if (!schema) {
      schema = client.send(new DescribeTableCommand({ TableName: tableName })).then(
        ({ Table }) => (Table ? keySchemasOf(Table) : undefined),
        // No such table (yet): dynalite answers the request itself; ask again next time.
        () => {
          schemas.delete(tableName);
          return undefined;
        },
      );
      schemas.set(tableName, schema);
    }
    return schema;
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; Key?: Item; Item?: Item; ExpressionAttributeValues?: Item };
      const command = context.commandName;
      const checked = command === 'PutItemCommand' || command === 'GetItemCommand' || command === 'DeleteItemCommand' || command === 'UpdateItemCommand';
      if (checked && input.TableName) {
        const schema = await schemaOf(input.TableName);
        const problem = schema && limitProblem(command, input, schema);
        if (problem) throw validationException(problem);
      }
      return next(args);
    },
    { step: 'initialize', name, tags: ['LOCAL'] },
  );
}

/** What DynamoDB would refuse in this request, or undefined. */
function limitProblem(command: string, input: { Key?: Item; Item?: Item; ExpressionAttributeValues?: Item }, schema: KeySchemas): string | undefined {
  if (command === 'PutItemCommand') {
    const item = input.Item ?? {};
    for (const keys of [schema.table, ...schema.indexes]) {
      const problem = keyProblem(item, keys);
      if (problem) return problem;
    }
    return itemBytes(item) > DYNAMODB_LIMITS.itemBytes ? MESSAGES.item : undefined;
  }
  const problem = keyProblem(input.Key ?? {}, schema.table);
  if (problem || command !== 'UpdateItemCommand') return problem;
  for (const [name, value] of Object.entries(input.ExpressionAttributeValues ?? {})) {
    if (valueBytes(value) > DYNAMODB_LIMITS.itemBytes) return MESSAGES.updateValue(name);
  }
  return undefined;
}

function keyProblem(item: Item, keys: KeyPair): string | undefined {
  const partition = item[keys.partitionKey];
  if (partition && keyBytes(partition) > DYNAMODB_LIMITS.partitionKeyBytes) return MESSAGES.partitionKey;
  const sort = keys.sortKey === undefined ? undefined : item[keys.sortKey];
  if (sort && keyBytes(sort) > DYNAMODB_LIMITS.sortKeyBytes) return MESSAGES.sortKey;
  return undefined;
}

function keySchemasOf(table: TableDescription): KeySchemas {
  const pair = (schema: TableDescription['KeySchema']): KeyPair => ({
    partitionKey: schema?.find((key) => key.KeyType === 'HASH')?.AttributeName ?? '',
    ...sortKeyOf(schema?.find((key) => key.KeyType === 'RANGE')?.AttributeName),
  });
  return {
    table: pair(table.KeySchema),
    indexes: [...(table.GlobalSecondaryIndexes ?? []), ...(table.LocalSecondaryIndexes ?? [])].map((index) => pair(index.KeySchema)),
  };
}

function sortKeyOf(name: string | undefined): Pick<KeyPair, 'sortKey'> {
  return name === undefined ? {} : { sortKey: name };
}

/** Key attributes are S, N or B; a number's size never comes near a limit. */
function keyBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.B !== undefined) return value.B.byteLength;
  return 0;
}

/** An item's size as DynamoDB documents it: attribute names and values, strings in UTF-8. */
export function itemBytes(item: Item): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) total += Buffer.byteLength(name) + valueBytes(value);
  return total;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, number) => sum + numberBytes(number), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, bytes) => sum + bytes.byteLength, 0);
  // A list or map takes 3 bytes, and each element 1 more.
  if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 0);
  if (value.M !== undefined) {
    return 3 + Object.entries(value.M).reduce((sum, [name, element]) => sum + 1 + Buffer.byteLength(name) + valueBytes(element), 0);
  }
  return 0;
}

/** About one byte per two significant digits, plus one. */
function numberBytes(number: string): number {
  const digits = number
    .replace(/[eE].*$/, '')
    .replace(/[^0-9]/g, '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

function validationException(message: string): DynamoDBServiceException {
  const error = new DynamoDBServiceException({
    name: 'ValidationException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400, attempts: 1, totalRetryDelay: 0 },
    message,
  });
  // As the SDK leaves it on an error it deserialised from the service.
  return Object.assign(error, { __type: 'com.amazon.coral.validate#ValidationException' });
}
