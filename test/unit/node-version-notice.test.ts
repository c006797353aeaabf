import { describe, expect, it } from 'vitest';
import { announceNodeVersion, nodeVersionNotice } from '../../local/node-version-notice.ts';

describe('the Node version notice of npm start', () => {
  it('says nothing on Node 22 or 24', () => {
    expect(nodeVersionNotice('22.12.0')).toBeUndefined();
    expect(nodeVersionNotice('24.0.0')).toBeUndefined();
  });

  it('on Node 20 names the version, what to upgrade to, and why', () => {
    expect(nodeVersionNotice('20.19.0')).toBe(
      'Node.js 20.19.0 is past its end of life: upgrade to Node 22 or 24 (the Lambda functions run on nodejs24.x, and AWS SDK releases after early January 2027 need Node 22 or later).',
    );
  });

  it("prints the one line on this Node if it is Node 20 and turns the AWS SDK's own warning off; on Node 22 or 24 does nothing", () => {
    const env: NodeJS.ProcessEnv = {};
    const printed: string[] = [];
    announceNodeVersion(env, (line) => printed.push(line));
    if (nodeVersionNotice() === undefined) {
      expect(printed).toEqual([]);
      expect(env).toEqual({});
      return;
    }
    expect(printed).toEqual([nodeVersionNotice()]);
    expect(env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('true');
    const quiet: NodeJS.ProcessEnv = { NODE_NO_WARNINGS: '1' };
    announceNodeVersion(quiet, (line) => printed.push(line));
    expect(printed).toHaveLength(1);
    expect(quiet.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('true');
  });
});
