/**
 * Operation events as deployed: the status-sync function's bundle, with its template
 * environment and role, puts `Operation Status Changed` events through the IAM gateway (which
 * checks its `events:PutEvents` grant on the bus) to the local EventBridge endpoint.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import type { EventBridgeEvent } from '../../../local/events/put-events-endpoint.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { legacyRequest } from '../../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../../support/rpc-assertions.ts';

const schema = JSON.parse(readFileSync(new URL('../../../schemas/operation-status-changed.schema.json', import.meta.url), 'utf8')) as object;
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
ajv.addFormat('date-time', { type: 'string', validate: (value: string) => !Number.isNaN(Date.parse(value)) && /T.*Z$/.test(value) });
const validateEvent = ajv.compile(schema);

const events: EventBridgeEvent[] = [];
let stack: DeployedLocalStack;

beforeAll(async () => {
  ({ stack } = await startAssemblyStack(await deployedAssembly(NO_AUTH), { onEvent: (event) => void events.push(event) }));
}, 600_000);

afterAll(async () => {
  await stack?.close();
});

describe('operation events from the deployed status-sync function', () => {
  it('a task that completes puts working, then completed, on the default bus through its grant', async () => {
    const created = ok(await legacyRequest(stack.url, 'tools/call', { name: 'summarize_numbers', arguments: { numbers: [3, 4, 5] }, task: { ttl: 600_000 } }));
    const taskId = created.task.taskId as string;
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }), ['completed']);
    await stack.drainEvents();
    const mine = events.filter((event) => (event.detail as { operationId?: string }).operationId === taskId);
    expect(mine.map((event) => (event.detail as { status: string }).status)).toEqual(['working', 'completed']);
    for (const event of mine) expect(validateEvent(event), ajv.errorsText(validateEvent.errors)).toBe(true);
    expect(mine[1]!.detail).toMatchObject({ tool: 'summarize_numbers', dialect: 'tasks-2025-11-25', isError: false, resultBytes: expect.any(Number) });
    expect(mine[1]!.account).toBe(stack.model.accountId);
  });
});
