/**
 * vitest globalSetup: on Node 20 a test run says so once, in the line `npm start` prints
 * (local/node-version-notice.ts), instead of the AWS SDK's NodeVersionSupportWarning in every
 * worker and spawned process. The SDK reads AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED
 * when a client is made (@aws-sdk/core emitWarningIfUnsupportedVersion); the workers and what
 * they spawn inherit it. On Node 22 and 24 nothing is printed or set.
 */
import { nodeVersionNotice } from '../../local/node-version-notice.ts';

export default function setup(): void {
  const notice = nodeVersionNotice();
  if (!notice) return;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  console.error(notice);
}
