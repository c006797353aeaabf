/**
 * Loopback webhook callbacks are for the local as-deployed runner only (issue 29: "In AWS,
 * accept only https:"): the template never sets ASYNC_MCP_EVENTS_LOOPBACK_CALLBACKS, so every
 * deployed function checks callbacks in AWS mode.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { resourcesOf, repoTools, synthTemplate } from './cdk-test-app.ts';
import type { Template } from 'aws-cdk-lib/assertions';

let template: Template;
beforeAll(async () => {
  ({ template } = synthTemplate(await repoTools()));
});

describe('loopback callbacks in the template', () => {
  it('sets ASYNC_MCP_EVENTS_LOOPBACK_CALLBACKS on no function, so deployed callbacks stay public https only', () => {
    const functions = Object.entries(resourcesOf(template, 'AWS::Lambda::Function'));
    expect(functions.length).toBeGreaterThan(0);
    const withIt = functions.filter(([, fn]) => ENV.eventsLoopbackCallbacks in (fn.Properties.Environment?.Variables ?? {})).map(([id]) => id);
    expect(withIt).toEqual([]);
  });
});
