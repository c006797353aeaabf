/**
 * The local PutEvents endpoint behind the IAM gateway, driven by the real EventBridgeClient:
 * a role granted events:PutEvents on one bus may put there and nowhere else, as AWS decides it
 * (AccessDeniedException naming the action and the bus), and nothing reaches the bus when denied.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { describe, expect, it } from 'vitest';
import { eventBridgeActions } from '../../local/iam/request-actions.ts';
import { startPutEventsEndpoint, type EventBridgeEvent } from '../../local/events/put-events-endpoint.ts';
import { ACCOUNT, REGION, role, useGatewayHarness } from '../local/iam/gateway-harness.ts';

const DEFAULT_BUS = `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/default`;
const STATUS_SYNC = role('AsyncMcp-ServerStatusSyncHandlerRole-0A1B2C', [{ Action: 'events:PutEvents', Effect: 'Allow', Resource: DEFAULT_BUS }]);
const OTHER = role('AsyncMcp-ServerMcpRole-0A1B2C', [{ Action: 'dynamodb:GetItem', Effect: 'Allow', Resource: '*' }]);
const entry = { Source: 'async-mcp', DetailType: 'Operation Status Changed', Detail: JSON.stringify({ status: 'completed' }) };

describe('PutEvents through the IAM gateway', () => {
  const harness = useGatewayHarness();

  async function setUp() {
    const delivered: EventBridgeEvent[] = [];
    const endpoint = harness.closeLater(
      await startPutEventsEndpoint({ region: REGION, accountId: ACCOUNT, buses: ['default', 'jobs'], onEvent: (event) => void delivered.push(event) }),
    );
    const authority = harness.authority([STATUS_SYNC, OTHER]);
    const gateway = await harness.gateway({ service: 'events', upstream: endpoint.endpoint, authority });
    const clientFor = (roleArn: string) => {
      const client = new EventBridgeClient({ region: REGION, endpoint: gateway.endpoint, credentials: authority.credentialsFor(roleArn, 'test') });
      harness.closeLater({ close: () => client.destroy() });
      return client;
    };
    return { delivered, clientFor };
  }

  it('the granted role puts on its bus, by name, by ARN or by default', async () => {
    const { delivered, clientFor } = await setUp();
    const client = clientFor(STATUS_SYNC.arn);
    for (const bus of [undefined, 'default', DEFAULT_BUS]) {
      const out = await client.send(new PutEventsCommand({ Entries: [{ ...entry, ...(bus ? { EventBusName: bus } : {}) }] }));
      expect(out.FailedEntryCount, String(bus)).toBe(0);
    }
    expect(delivered.map((event) => event.source)).toEqual(['async-mcp', 'async-mcp', 'async-mcp']);
  });

  it('another bus, or a role without the grant, is denied as AWS denies it, and nothing is put', async () => {
    const { delivered, clientFor } = await setUp();
    await expect(clientFor(STATUS_SYNC.arn).send(new PutEventsCommand({ Entries: [{ ...entry, EventBusName: 'jobs' }] }))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringMatching(/not authorized to perform: events:PutEvents on resource: arn:aws:events:us-east-1:000000000000:event-bus\/jobs/),
    });
    await expect(clientFor(OTHER.arn).send(new PutEventsCommand({ Entries: [entry] }))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(delivered).toEqual([]);
  });

  it('authorizes each bus an entry names once', () => {
    const scope = { region: REGION, accountId: ACCOUNT };
    expect(eventBridgeActions('PutEvents', { Entries: [{}, { EventBusName: 'default' }, { EventBusName: 'jobs' }] }, scope)).toEqual([
      { action: 'events:PutEvents', resource: DEFAULT_BUS },
      { action: 'events:PutEvents', resource: `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/jobs` },
    ]);
  });
});
