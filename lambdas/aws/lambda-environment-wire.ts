/**
 * The hot GetItem's wire (hot-get-item.ts) built from what Lambda's runtime gives every
 * function, without the DynamoDB client: the region, the role's credentials and, where set,
 * the endpoint (`AWS_ENDPOINT_URL_DYNAMODB`, then `AWS_ENDPOINT_URL`, as the SDK reads them).
 * It signs with the hot read's signer (hot-read-signer.ts, node:crypto only) and sends with
 * the global `fetch`, each attempt bounded like a deployed client's (DEPLOYED_CLIENT_CONFIG).
 *
 * Only what is certain is built: any variable missing, a region outside the standard `aws`
 * partition, FIPS or dual-stack endpoints, required account endpoints or ignored configured
 * endpoints give `undefined`, and the caller keeps the full client. Whatever the wire
 * answers other than a plain success, HotGetItem sends again through the SDK.
 */
import { DEPLOYED_CLIENT_CONFIG } from './aws-client-config.ts';
import type { HotWire, HotWireSource } from './hot-get-item.ts';
import { isPlainPath, signHotRequest } from './hot-read-signer.ts';

/** Regions of the standard partition (`aws`), whose DynamoDB endpoint is `dynamodb.<region>.amazonaws.com`. */
const STANDARD_REGION = /^(?:af|ap|ca|eu|il|me|mx|sa|us)-(?:central|north|south|east|west|northeast|northwest|southeast|southwest)-\d{1,2}$/;

/** One attempt of the hot read, as long as one of the SDK client's it stands in for. */
export const HOT_READ_TIMEOUT_MS = DEPLOYED_CLIENT_CONFIG.requestHandler.requestTimeout;

/** The wire `env` describes with certainty, or `undefined` when the full client must serve the read. */
export function lambdaEnvironmentWire(env: NodeJS.ProcessEnv = process.env): HotWireSource | undefined {
  const region = env.AWS_REGION;
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  const sessionToken = env.AWS_SESSION_TOKEN;
  if (!region || !accessKeyId || !secretAccessKey || !sessionToken) return undefined;
  if (!STANDARD_REGION.test(region)) return undefined;
  // Each of these changes the endpoint or the credentials the SDK would use: the SDK decides.
  if (isSet(env.AWS_USE_FIPS_ENDPOINT) || isSet(env.AWS_USE_DUALSTACK_ENDPOINT) || isSet(env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS)) return undefined;
  if (env.AWS_ACCOUNT_ID_ENDPOINT_MODE === 'required') return undefined;
  const url = endpointOf(env.AWS_ENDPOINT_URL_DYNAMODB || env.AWS_ENDPOINT_URL || `https://dynamodb.${region}.amazonaws.com`);
  if (!url) return undefined;
  const credentials = { accessKeyId, secretAccessKey, sessionToken };
  return async () => {
    const wire: HotWire = {
      url,
      sign: async (request, signingDate) => signHotRequest(request, credentials, region, signingDate),
      send: async (request) => {
        const response = await fetch(url, {
          method: request.method,
          headers: request.headers,
          body: request.body,
          signal: AbortSignal.timeout(HOT_READ_TIMEOUT_MS),
        });
        return { statusCode: response.status, body: new Uint8Array(await response.arrayBuffer()) };
      },
    };
    return wire;
  };
}

/** A flag the SDK reads as true: anything but unset, empty or "false". */
function isSet(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value.toLowerCase() !== 'false';
}

/** An http(s) endpoint without query, fragment or credentials, on a plain path; anything else is unusual. */
function endpointOf(value: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.search || url.hash || url.username || url.password || !isPlainPath(url.pathname)) return undefined;
  return url;
}
