/**
 * A stack closes its IAM gateways while a client's request may still be on its way upstream (an
 * event-source poller's long ReceiveMessage, say), then the service behind them. That request is
 * cut off by the close, not failed by the gateway: nothing is reported for it.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { ACCOUNT, REGION, role, useGatewayHarness } from './gateway-harness.ts';

const TABLE = 'Operations';
const READER = role('Reader', [{ Action: 'dynamodb:GetItem', Effect: 'Allow', Resource: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${TABLE}` }]);

describe("the IAM gateway's close", () => {
  const harness = useGatewayHarness();

  it('reports nothing for a request its close cut off whose upstream then went away', async () => {
    // An upstream that takes the request and holds it, as a long poll does.
    const held: IncomingMessage[] = [];
    const upstream = createServer((req) => held.push(req));
    await new Promise<void>((listening) => upstream.listen(0, '127.0.0.1', listening));
    const authority = harness.authority([READER]);
    const gateway = await harness.gateway({ service: 'dynamodb', upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, authority });
    const client = harness.closeLater({
      inner: new DynamoDBClient({ region: REGION, endpoint: gateway.endpoint, credentials: authority.credentialsFor(READER.arn, 'reader'), maxAttempts: 1 }),
      close() {
        this.inner.destroy();
      },
    }).inner;

    const call = client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'OP#1' } } })).catch((error: unknown) => error);
    await vi.waitFor(() => expect(held).toHaveLength(1));
    await gateway.close();
    const upstreamClosed = new Promise<void>((closed) => upstream.close(() => closed()));
    upstream.closeAllConnections();
    await upstreamClosed;

    // The client's connection went with the gateway's close.
    expect(await call).toBeInstanceOf(Error);
    // The gateway learns of the upstream's end on its next turns of the event loop.
    await new Promise((settled) => setTimeout(settled, 200));
    expect(harness.warnings).toEqual([]);
  });
});
