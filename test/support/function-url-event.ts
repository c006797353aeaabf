/**
 * A Function URL event (payload 2.0) carrying one JSON-RPC message to /mcp, from the caller
 * an AWS_IAM Function URL verified (the default auth): what the MCP function is invoked with.
 */

/** The caller AWS_IAM verified, as the Function URL puts it in the request context. */
export const SIGNED_CALLER = {
  iam: {
    accountId: '123456789012',
    callerId: 'AROAEXAMPLE:session',
    userArn: 'arn:aws:sts::123456789012:assumed-role/McpClient/session',
    userId: 'AROAEXAMPLE',
  },
};

/** The caller AWS_IAM verified invoking the function with `body`. */
export function iamFunctionUrlEvent(body: unknown) {
  return functionUrlEvent(body, SIGNED_CALLER);
}

/** A Function URL event with `body`, its request context carrying `authorizer` (none: an unsigned caller, or an OAuth one). */
export function functionUrlEvent(body: unknown, authorizer: object | undefined) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: 'example.lambda-url.us-east-1.on.aws' },
    requestContext: {
      accountId: '123456789012',
      apiId: 'example',
      domainName: 'example.lambda-url.us-east-1.on.aws',
      http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'vitest' },
      requestId: 'request-1',
      routeKey: '$default',
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: 0,
      ...(authorizer ? { authorizer } : {}),
    },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  };
}
