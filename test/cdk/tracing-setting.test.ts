/**
 * The tracing prop's exporters: with the ADOT layer every function (the durable tools' and the
 * workers' included) runs the layer, exports OTLP to its collector and writes X-Ray, and the
 * state machines trace with X-Ray; with OTLP to a collector the functions get the endpoint and
 * no role may write X-Ray. cdk-nag passes on each, from the same synth.
 */
import { describe, expect, it } from 'vitest';
import { Stack, Validations } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ADOT_COLLECTOR_ENDPOINT, NO_TRACING, resolveServerTracing, type ServerTracing } from '../../cdk/server-tracing.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { readAppSettings } from '../../cdk/app-settings.ts';
import { bareApp, buildStack, deployedTemplate, repoTools, resourcesOf, testApp } from './cdk-test-app.ts';

// An ARN of the layer's shape in an account that publishes none: the real one comes from the ADOT docs per region.
const LAYER_ARN = 'arn:aws:lambda:eu-west-1:123456789012:layer:adot-nodejs-arm64-example:1';
const COLLECTOR = 'https://otel-collector.internal.example:4318';

/** One synth per setting: the template and cdk-nag's findings. */
async function synthChecked(tracing: ServerTracing) {
  const app = testApp();
  const stack: AsyncMcpStack = buildStack(app, await repoTools(), { tracing });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  app.synth();
  return { stack, template: deployedTemplate(stack), nag: new AwsSolutionsChecks().validateScope(app) };
}

/** Every action any IAM policy of the template allows. */
function allowedActions(template: Template): string[] {
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy')).flatMap((policy) =>
    (policy.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((statement) => [statement.Action].flat()),
  );
}

describe('tracing through the ADOT Lambda layer', async () => {
  const { stack, template, nag } = await synthChecked({
    exporter: 'adot-layer',
    layerArn: LAYER_ARN,
    serviceName: 'my-mcp',
    sampler: 'parentbased_traceidratio',
    samplerArg: '0.25',
  });
  const functions = Object.entries(resourcesOf(template, 'AWS::Lambda::Function'));

  it('runs every function (MCP, status sync, delivery, workers, durable tools) with the layer, X-Ray active and OTLP to the layer’s collector', () => {
    expect(functions.length).toBe(3 + stack.server.workerFunctions.size + stack.server.durableToolFunctions.size);
    expect(stack.server.durableToolFunctions.size).toBeGreaterThan(0);
    for (const [id, fn] of functions) {
      expect(fn.Properties.Layers, id).toEqual([LAYER_ARN]);
      expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Environment.Variables, id).toMatchObject({
        OTEL_EXPORTER_OTLP_ENDPOINT: ADOT_COLLECTOR_ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: 'my-mcp',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      });
    }
  });

  it('traces every state machine with X-Ray, and grants the X-Ray writes to each function role and machine role', () => {
    const machines = Object.values(resourcesOf(template, 'AWS::StepFunctions::StateMachine'));
    expect(machines.length).toBeGreaterThan(0);
    for (const machine of machines) expect(machine.Properties.TracingConfiguration).toEqual({ Enabled: true });
    const roles = Object.keys(resourcesOf(template, 'AWS::IAM::Role'));
    const writers = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).filter((policy) =>
      (policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]).some(
        (statement) => [statement.Action].flat().includes('xray:PutTraceSegments') && statement.Resource === '*',
      ),
    );
    // A function's role and a machine's role each write their own segments; no other role does.
    expect(writers.length).toBe(functions.length + machines.length);
    expect(writers.length).toBeLessThanOrEqual(roles.length);
  });

  it('passes cdk-nag', () => {
    expect(nag).toEqual({ success: true, violations: [] });
  });
});

describe('tracing by OTLP to a collector', async () => {
  const { template, nag } = await synthChecked({ exporter: 'otlp', endpoint: COLLECTOR, protocol: 'http/json' });

  it('gives every function the collector’s endpoint and protocol, with no layer and no X-Ray', () => {
    const functions = Object.entries(resourcesOf(template, 'AWS::Lambda::Function'));
    for (const [id, fn] of functions) {
      expect(fn.Properties.Environment.Variables, id).toMatchObject({
        OTEL_EXPORTER_OTLP_ENDPOINT: COLLECTOR,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'async-mcp',
      });
      expect(fn.Properties.Layers, id).toBeUndefined();
      expect(fn.Properties.TracingConfig, id).toBeUndefined();
    }
    for (const machine of Object.values(resourcesOf(template, 'AWS::StepFunctions::StateMachine'))) {
      expect(machine.Properties.TracingConfiguration?.Enabled ?? false).toBe(false);
    }
  });

  it('grants no X-Ray action to any role', () => {
    expect(allowedActions(template).filter((action) => action.startsWith('xray:'))).toEqual([]);
  });

  it('passes cdk-nag', () => {
    expect(nag).toEqual({ success: true, violations: [] });
  });
});

describe('the tracing prop', () => {
  it('is off by default and X-Ray only when true', () => {
    expect(resolveServerTracing(undefined)).toBe(NO_TRACING);
    expect(resolveServerTracing(false)).toBe(NO_TRACING);
    expect(resolveServerTracing(true)).toEqual({ xray: true, environment: {}, layerArns: [] });
  });

  it('refuses a layer ARN that is not one, or from another region than the stack’s', () => {
    expect(() => resolveServerTracing({ exporter: 'adot-layer', layerArn: 'aws-otel-nodejs' })).toThrow(/tracing.layerArn must be a layer version's ARN/);
    expect(() => resolveServerTracing({ exporter: 'adot-layer', layerArn: LAYER_ARN }, 'us-east-1')).toThrow(/in eu-west-1 but the stack deploys to us-east-1/);
    expect(resolveServerTracing({ exporter: 'adot-layer', layerArn: LAYER_ARN }, 'eu-west-1').layerArns).toEqual([LAYER_ARN]);
    // An environment-agnostic stack's region is a token: the deploy checks it.
    expect(resolveServerTracing({ exporter: 'adot-layer', layerArn: LAYER_ARN }, new Stack(bareApp(), 'S').region).layerArns).toEqual([LAYER_ARN]);
  });

  it('refuses an endpoint that is not an http(s) URL or that carries credentials (they would sit in plain environment)', () => {
    expect(() => resolveServerTracing({ exporter: 'otlp', endpoint: 'collector:4317' })).toThrow(/tracing.endpoint must be an http\(s\) URL/);
    expect(() => resolveServerTracing({ exporter: 'otlp', endpoint: 'https://user:secret@collector.example' })).toThrow(/must not carry credentials/);
  });

  it('is read from the app context: tracing=adot-layer with tracingLayerArn, tracing=otlp with tracingEndpoint', () => {
    const settingsFrom = (context: Record<string, unknown>) => readAppSettings(bareApp({ context }).node).tracing;
    expect(settingsFrom({ tracing: 'adot-layer', tracingLayerArn: LAYER_ARN })).toEqual({ exporter: 'adot-layer', layerArn: LAYER_ARN });
    expect(settingsFrom({ tracing: 'otlp', tracingEndpoint: COLLECTOR })).toEqual({ exporter: 'otlp', endpoint: COLLECTOR });
    expect(settingsFrom({ tracing: 'x-ray' })).toBe(true);
    expect(() => settingsFrom({ tracing: 'adot-layer' })).toThrow(/Invalid context "tracingLayerArn"/);
    expect(() => settingsFrom({ tracing: 'true', tracingEndpoint: COLLECTOR })).toThrow(/Invalid context "tracingEndpoint": it needs tracing=otlp/);
  });
});
