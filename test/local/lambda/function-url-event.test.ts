/**
 * The payload format 2.0 event a Function URL builds from an HTTP request
 * (https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads), and the
 * adapter the MCP function uses reading it back as the request that was sent.
 */
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { toWebRequest } from '../../../lambdas/aws/function-url-adapter.ts';
import { functionUrlEvent, functionUrlId, type FunctionUrlRequest } from '../../../local/lambda/function-url-event.ts';

const NOW = new Date('2026-03-12T19:03:58.390Z');

function request(overrides: Partial<FunctionUrlRequest> = {}): FunctionUrlRequest {
  return {
    method: 'POST',
    target: '/mcp/a%20b?parameter1=value1&parameter1=value2&parameter2=va%2Blue',
    rawHeaders: [
      'Host',
      '127.0.0.1:3000',
      'Content-Type',
      'application/json',
      'User-Agent',
      'agent/1.0',
      'X-Custom',
      'one',
      'x-custom',
      'two',
      'Cookie',
      'session=abc; theme=dark',
      'x-forwarded-proto',
      'http',
    ],
    body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}'),
    sourceIp: '127.0.0.1',
    httpVersion: '1.1',
    ...overrides,
  };
}

describe('the Function URL event', () => {
  it('has the fields of payload format 2.0, as AWS fills them', () => {
    const event = functionUrlEvent(request(), { urlId: 'abcdefghijklmnopqrstuvwxyz012345', requestId: 'id-1', now: NOW });
    expect(event).toEqual({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/mcp/a%20b',
      rawQueryString: 'parameter1=value1&parameter1=value2&parameter2=va%2Blue',
      cookies: ['session=abc', 'theme=dark'],
      headers: {
        host: '127.0.0.1:3000',
        'content-type': 'application/json',
        'user-agent': 'agent/1.0',
        'x-custom': 'one,two',
        'x-forwarded-proto': 'http',
      },
      queryStringParameters: { parameter1: 'value1,value2', parameter2: 'va+lue' },
      requestContext: {
        accountId: 'anonymous',
        apiId: 'abcdefghijklmnopqrstuvwxyz012345',
        domainName: '127.0.0.1:3000',
        domainPrefix: '127',
        http: { method: 'POST', path: '/mcp/a%20b', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'agent/1.0' },
        requestId: 'id-1',
        routeKey: '$default',
        stage: '$default',
        time: '12/Mar/2026:19:03:58 +0000',
        timeEpoch: NOW.getTime(),
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      pathParameters: null,
      isBase64Encoded: false,
      stageVariables: null,
    });
  });

  it('carries the SigV4 caller in requestContext.authorizer.iam under AWS_IAM', () => {
    const caller = {
      accessKey: 'local',
      accountId: '000000000000',
      userId: 'AROALOCALCALLER:local',
      userArn: 'arn:aws:sts::000000000000:assumed-role/async-mcp-local-caller/local',
    };
    const event = functionUrlEvent(request(), { urlId: 'x', caller });
    expect(event.requestContext.accountId).toBe('000000000000');
    expect(event.requestContext.authorizer).toEqual({
      iam: {
        accessKey: 'local',
        accountId: '000000000000',
        callerId: 'AROALOCALCALLER:local',
        cognitoIdentity: null,
        principalOrgId: null,
        userArn: 'arn:aws:sts::000000000000:assumed-role/async-mcp-local-caller/local',
        userId: 'AROALOCALCALLER:local',
      },
    });
  });

  it('base64-encodes a body that is not text, and leaves out body, cookies and query parameters that are absent', () => {
    const bytes = Buffer.from([0, 255, 128, 10]);
    const binary = functionUrlEvent(request({ rawHeaders: ['Host', 'h', 'Content-Type', 'application/octet-stream'], body: bytes }), { urlId: 'x' });
    expect(binary.isBase64Encoded).toBe(true);
    expect(Buffer.from(binary.body!, 'base64')).toEqual(bytes);
    const untyped = functionUrlEvent(request({ rawHeaders: ['Host', 'h'], body: Buffer.from('plain') }), { urlId: 'x' });
    expect(untyped.isBase64Encoded).toBe(true);
    for (const type of ['text/plain; charset=utf-8', 'application/vnd.api+json', 'application/xml', 'application/x-www-form-urlencoded']) {
      expect(functionUrlEvent(request({ rawHeaders: ['Host', 'h', 'Content-Type', type], body: Buffer.from('a=1') }), { urlId: 'x' }).isBase64Encoded).toBe(
        false,
      );
    }
    const get = functionUrlEvent(request({ method: 'GET', target: '/', rawHeaders: ['Host', 'h'], body: Buffer.alloc(0) }), { urlId: 'x' });
    expect(get).not.toHaveProperty('body');
    expect(get).not.toHaveProperty('cookies');
    expect(get).not.toHaveProperty('queryStringParameters');
    expect(get.isBase64Encoded).toBe(false);
    expect(get.rawQueryString).toBe('');
  });

  it('reads back, through the adapter the MCP function uses, as the request that was sent', async () => {
    const event = functionUrlEvent(request(), { urlId: 'x' });
    const web = toWebRequest(event as unknown as LambdaFunctionURLEvent);
    expect(web.url).toBe('http://127.0.0.1:3000/mcp/a%20b?parameter1=value1&parameter1=value2&parameter2=va%2Blue');
    expect(web.method).toBe('POST');
    expect(web.headers.get('cookie')).toBe('session=abc; theme=dark');
    expect(web.headers.get('x-custom')).toBe('one,two');
    expect(await web.json()).toEqual({ jsonrpc: '2.0', id: 1, method: 'ping' });
  });

  it('gives a function a stable 32-character URL id', () => {
    const arn = 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-Mcp-ABC';
    expect(functionUrlId(arn)).toMatch(/^[0-9a-z]{32}$/);
    expect(functionUrlId(arn)).toBe(functionUrlId(arn));
  });
});
