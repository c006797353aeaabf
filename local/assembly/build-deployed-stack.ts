/**
 * The `DeployedStack` model from a read assembly: the table, bucket, secret, functions (each
 * with its bundled asset folder, and a durable function's DurableConfig), Function URL,
 * permissions, state machines (definitions with their substitutions applied), event rules
 * (marked when they carry durable status changes), queues, roles with every policy attached to
 * them, versions and aliases and outputs. Anything the local stack would have to guess is an error naming the
 * template and the resource.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AssemblyError } from './assembly-error.ts';
import type { DeployedFunction, DeployedRole, DeployedStack } from './deployed-stack.ts';
import { ACCOUNT_ID, REGION } from './physical-names.ts';
import { readCloudAssembly, type AssemblyResource, type ReadAssembly } from './read-cloud-assembly.ts';
import { DURABLE_STATUS_CHANGE_DETAIL_TYPE, DURABLE_STATUS_CHANGE_SOURCE } from '../../lambdas/aws/durable-status-events.ts';

type Props = Record<string, unknown>;

/** Reads the cloud assembly in `directory` into the model the local runner starts. */
export function loadDeployedStack(directory: string, stackName?: string): DeployedStack {
  return buildDeployedStack(readCloudAssembly(directory, stackName));
}

export function buildDeployedStack(assembly: ReadAssembly): DeployedStack {
  const all = assembly.resources;
  const ofType = (type: string) => all.filter((r) => r.type === type);
  const one = (type: string) => {
    const found = ofType(type);
    const [only] = found;
    if (only === undefined || found.length !== 1)
      throw new AssemblyError('manifest.json', undefined, `expected one ${type} in the stack and its nested stacks, found ${found.length}`);
    return only;
  };
  const arnOf = (r: AssemblyResource) => {
    const arn = r.identity.attributes.Arn;
    if (arn === undefined) throw new AssemblyError(r.templateFile, r.logicalId, `a ${r.type} without an Arn attribute`);
    return arn;
  };
  const functionArn = (value: unknown, r: AssemblyResource) => {
    if (typeof value !== 'string') throw new AssemblyError(r.templateFile, r.logicalId, 'names a function that does not resolve to a string');
    return value.startsWith('arn:') ? value : `arn:aws:lambda:${REGION}:${ACCOUNT_ID}:function:${value}`;
  };

  const tableResource = one('AWS::DynamoDB::Table');
  const t = tableResource.properties;
  const ttl = t.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean } | undefined;
  const table: DeployedStack['table'] = {
    logicalId: tableResource.logicalId,
    name: tableResource.identity.name,
    arn: arnOf(tableResource),
    keySchema: (t.KeySchema ?? []) as DeployedStack['table']['keySchema'],
    attributeDefinitions: (t.AttributeDefinitions ?? []) as DeployedStack['table']['attributeDefinitions'],
    globalSecondaryIndexes: (t.GlobalSecondaryIndexes ?? []) as DeployedStack['table']['globalSecondaryIndexes'],
    ...(ttl?.Enabled && ttl.AttributeName ? { ttlAttribute: ttl.AttributeName } : {}),
    ...(t.StreamSpecification ? { streamSpecification: t.StreamSpecification } : {}),
  };

  const bucketResource = one('AWS::S3::Bucket');
  const bucket = {
    logicalId: bucketResource.logicalId,
    name: bucketResource.identity.name,
    arn: arnOf(bucketResource),
    lifecycleRules: ((bucketResource.properties.LifecycleConfiguration as Props | undefined)?.Rules ?? []) as unknown[],
  };
  const secretResource = one('AWS::SecretsManager::Secret');
  const secret = {
    logicalId: secretResource.logicalId,
    name: secretResource.identity.name,
    arn: secretResource.identity.ref,
    ...(secretResource.properties.GenerateSecretString
      ? { generateSecretString: secretResource.properties.GenerateSecretString as Record<string, unknown> }
      : {}),
  };

  const functions: DeployedFunction[] = [];
  for (const r of ofType('AWS::Lambda::Function')) {
    const p = r.properties;
    const assetPath = r.metadata['aws:asset:path'];
    if (typeof assetPath !== 'string') {
      throw new AssemblyError(
        r.templateFile,
        r.logicalId,
        'the function has no aws:asset:path metadata, so its code is not in the assembly (inline ZipFile and image functions do not run locally)',
      );
    }
    const assetDir = join(assembly.directory, assetPath);
    if (!existsSync(assetDir) || !statSync(assetDir).isDirectory()) {
      throw new AssemblyError(r.templateFile, r.logicalId, `the function's asset folder ${assetPath} is missing from the assembly`);
    }
    if (typeof p.Handler !== 'string') throw new AssemblyError(r.templateFile, r.logicalId, 'the function has no Handler');
    const variables = ((p.Environment as Props | undefined)?.Variables ?? {}) as Props;
    const environment: Record<string, string> = {};
    for (const [name, value] of Object.entries(variables)) {
      if (typeof value === 'object' && value !== null)
        throw new AssemblyError(r.templateFile, r.logicalId, `environment variable ${name} did not resolve to a string`);
      environment[name] = String(value);
    }
    const durable = durableConfigOf(r);
    functions.push({
      logicalId: r.logicalId,
      name: r.identity.name,
      arn: arnOf(r),
      assetDir,
      handler: p.Handler,
      runtime: String(p.Runtime ?? ''),
      timeoutSeconds: Number(p.Timeout ?? 3),
      memorySize: Number(p.MemorySize ?? 128),
      environment,
      roleArn: String(p.Role),
      ...(durable ? { durable } : {}),
    });
  }
  const functionByArn = (arn: string) => {
    const unqualified = arn.split(':').slice(0, 7).join(':');
    return functions.find((f) => f.arn === unqualified);
  };

  const urls = ofType('AWS::Lambda::Url');
  const [, secondUrl] = urls;
  if (secondUrl) throw new AssemblyError(secondUrl.templateFile, secondUrl.logicalId, 'the local stack serves one Function URL');
  let functionUrl: DeployedStack['functionUrl'];
  if (urls[0]) {
    const r = urls[0];
    const target = functionByArn(functionArn(r.properties.TargetFunctionArn, r));
    if (!target) throw new AssemblyError(r.templateFile, r.logicalId, 'the Function URL targets a function that is not in the assembly');
    const authType = r.properties.AuthType;
    if (authType !== 'NONE' && authType !== 'AWS_IAM')
      throw new AssemblyError(r.templateFile, r.logicalId, `AuthType ${String(authType)} is neither NONE nor AWS_IAM`);
    functionUrl = {
      logicalId: r.logicalId,
      targetFunctionLogicalId: target.logicalId,
      authType,
      invokeMode: r.properties.InvokeMode === 'RESPONSE_STREAM' ? 'RESPONSE_STREAM' : 'BUFFERED',
      ...(r.properties.Cors ? { cors: r.properties.Cors as Record<string, unknown> } : {}),
    };
  }

  const permissions = ofType('AWS::Lambda::Permission').map((r) => ({
    functionArn: functionArn(r.properties.FunctionName, r),
    action: String(r.properties.Action),
    principal: String(r.properties.Principal),
    ...(r.properties.FunctionUrlAuthType ? { functionUrlAuthType: String(r.properties.FunctionUrlAuthType) } : {}),
    ...(r.properties.SourceArn ? { sourceArn: String(r.properties.SourceArn) } : {}),
  }));

  const stateMachines = ofType('AWS::StepFunctions::StateMachine').map((r) => {
    const p = r.properties;
    let definition: string;
    if (typeof p.DefinitionString === 'string') definition = p.DefinitionString;
    else if (p.Definition !== undefined) definition = JSON.stringify(p.Definition);
    else
      throw new AssemblyError(
        r.templateFile,
        r.logicalId,
        'the state machine has no DefinitionString or Definition in the template (DefinitionS3Location is not read)',
      );
    // Step Functions replaces each ${key} of DefinitionSubstitutions in the definition text.
    for (const [key, value] of Object.entries((p.DefinitionSubstitutions ?? {}) as Props)) {
      if (typeof value === 'object' && value !== null)
        throw new AssemblyError(r.templateFile, r.logicalId, `DefinitionSubstitutions.${key} did not resolve to a value`);
      definition = definition.split(`\${${key}}`).join(String(value));
    }
    const left = definition.match(/\$\{([A-Za-z0-9_]+)\}/);
    if (left) throw new AssemblyError(r.templateFile, r.logicalId, `the definition uses \${${left[1]}}, which DefinitionSubstitutions does not define`);
    return {
      logicalId: r.logicalId,
      name: r.identity.name,
      arn: r.identity.ref,
      type: p.StateMachineType === 'EXPRESS' ? ('EXPRESS' as const) : ('STANDARD' as const),
      definition,
      roleArn: String(p.RoleArn),
    };
  });

  const rules = ofType('AWS::Events::Rule').map((r) => {
    const p = r.properties;
    const pattern =
      typeof p.EventPattern === 'string' ? (JSON.parse(p.EventPattern) as Record<string, unknown>) : ((p.EventPattern ?? {}) as Record<string, unknown>);
    const targets = ((p.Targets ?? []) as Props[]).map((target) => {
      const retry = target.RetryPolicy as { MaximumRetryAttempts?: number; MaximumEventAgeInSeconds?: number } | undefined;
      const dlq = (target.DeadLetterConfig as { Arn?: string } | undefined)?.Arn;
      return {
        functionArn: String(target.Arn),
        ...(retry
          ? {
              retryPolicy: {
                ...(retry.MaximumRetryAttempts !== undefined ? { maximumRetryAttempts: Number(retry.MaximumRetryAttempts) } : {}),
                ...(retry.MaximumEventAgeInSeconds !== undefined ? { maximumEventAgeInSeconds: Number(retry.MaximumEventAgeInSeconds) } : {}),
              },
            }
          : {}),
        ...(dlq ? { deadLetterQueueArn: dlq } : {}),
      };
    });
    return {
      logicalId: r.logicalId,
      name: r.identity.name,
      arn: arnOf(r),
      eventPattern: pattern,
      durableStatusChanges: selectsDurableStatusChanges(pattern),
      targets,
    };
  });

  const queues = ofType('AWS::SQS::Queue').map((r) => {
    const p = r.properties;
    const redrive = (typeof p.RedrivePolicy === 'string' ? JSON.parse(p.RedrivePolicy) : p.RedrivePolicy) as
      | { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown }
      | undefined;
    if (redrive && (typeof redrive.deadLetterTargetArn !== 'string' || !Number.isInteger(Number(redrive.maxReceiveCount)))) {
      throw new AssemblyError(r.templateFile, r.logicalId, 'the RedrivePolicy needs a deadLetterTargetArn and a whole maxReceiveCount');
    }
    return {
      logicalId: r.logicalId,
      name: r.identity.name,
      arn: arnOf(r),
      url: r.identity.ref,
      ...(p.VisibilityTimeout === undefined ? {} : { visibilityTimeoutSeconds: Number(p.VisibilityTimeout) }),
      ...(p.MessageRetentionPeriod === undefined ? {} : { messageRetentionSeconds: Number(p.MessageRetentionPeriod) }),
      ...(redrive ? { redrive: { deadLetterTargetArn: String(redrive.deadLetterTargetArn), maxReceiveCount: Number(redrive.maxReceiveCount) } } : {}),
    };
  });

  const eventSourceMappings = ofType('AWS::Lambda::EventSourceMapping').map((r) => {
    const p = r.properties;
    const target = functionByArn(functionArn(p.FunctionName, r));
    if (!target) throw new AssemblyError(r.templateFile, r.logicalId, 'the event source mapping names a function that is not in the assembly');
    const queue = queues.find((q) => q.arn === p.EventSourceArn);
    if (!queue)
      throw new AssemblyError(
        r.templateFile,
        r.logicalId,
        `the event source ${String(p.EventSourceArn)} is not an SQS queue of the assembly (only SQS sources run locally)`,
      );
    const concurrency = (p.ScalingConfig as { MaximumConcurrency?: unknown } | undefined)?.MaximumConcurrency;
    return {
      logicalId: r.logicalId,
      functionLogicalId: target.logicalId,
      queueArn: queue.arn,
      batchSize: Number(p.BatchSize ?? 10),
      ...(concurrency === undefined ? {} : { maximumConcurrency: Number(concurrency) }),
      reportBatchItemFailures: ((p.FunctionResponseTypes ?? []) as unknown[]).includes('ReportBatchItemFailures'),
      enabled: p.Enabled !== false && p.Enabled !== 'false',
    };
  });

  const roles: DeployedRole[] = ofType('AWS::IAM::Role')
    .map((r) => {
      const inline = ((r.properties.Policies ?? []) as Array<{ PolicyName: string; PolicyDocument: DeployedRole['policyDocuments'][number]['document'] }>).map(
        (policy) => ({
          name: policy.PolicyName,
          document: policy.PolicyDocument,
        }),
      );
      return {
        logicalId: r.logicalId,
        name: r.identity.name,
        arn: arnOf(r),
        policyDocuments: inline,
        managedPolicyArns: [] as string[],
        _managed: ((r.properties.ManagedPolicyArns ?? []) as unknown[]).map(String),
      };
    })
    .map(({ _managed, ...role }) => {
      for (const arn of _managed) {
        const customer = ofType('AWS::IAM::ManagedPolicy').find((m) => m.identity.ref === arn);
        if (customer)
          role.policyDocuments.push({
            name: customer.identity.name,
            document: customer.properties.PolicyDocument as DeployedRole['policyDocuments'][number]['document'],
          });
        else role.managedPolicyArns.push(arn);
      }
      return role;
    });
  // AWS::IAM::Policy and ManagedPolicy name the roles they attach to.
  for (const r of [...ofType('AWS::IAM::Policy'), ...ofType('AWS::IAM::ManagedPolicy')]) {
    for (const roleName of ((r.properties.Roles ?? []) as unknown[]).map(String)) {
      const role = roles.find((candidate) => candidate.name === roleName || candidate.arn === roleName);
      if (!role) throw new AssemblyError(r.templateFile, r.logicalId, `the policy attaches to role ${roleName}, which is not in the assembly`);
      role.policyDocuments.push({ name: r.identity.name, document: r.properties.PolicyDocument as DeployedRole['policyDocuments'][number]['document'] });
    }
  }

  const versions = [...ofType('AWS::Lambda::Version'), ...ofType('AWS::Lambda::Alias')].map((r) => {
    const target = functionByArn(r.identity.attributes.FunctionArn ?? '');
    if (!target) throw new AssemblyError(r.templateFile, r.logicalId, 'the version names a function that is not in the assembly');
    return { arn: r.identity.ref, functionLogicalId: target.logicalId };
  });
  const aliases = ofType('AWS::Lambda::Alias').map((r) => {
    const target = functionByArn(r.identity.attributes.FunctionArn ?? '');
    if (!target) throw new AssemblyError(r.templateFile, r.logicalId, 'the alias names a function that is not in the assembly');
    return {
      logicalId: r.logicalId,
      name: String(r.properties.Name),
      arn: r.identity.ref,
      functionLogicalId: target.logicalId,
      functionVersion: String(r.properties.FunctionVersion),
    };
  });

  return {
    stackName: assembly.stackName,
    region: REGION,
    accountId: ACCOUNT_ID,
    table,
    bucket,
    secret,
    functions,
    ...(functionUrl ? { functionUrl } : {}),
    permissions,
    stateMachines,
    rules,
    queues,
    eventSourceMappings,
    roles,
    versions,
    aliases,
    outputs: assembly.outputs,
  };
}

/** DurableConfig as CloudFormation takes it: ExecutionTimeout (required, seconds) and RetentionPeriodInDays. */
function durableConfigOf(r: AssemblyResource): DeployedFunction['durable'] {
  const config = r.properties.DurableConfig as { ExecutionTimeout?: unknown; RetentionPeriodInDays?: unknown } | undefined;
  if (config === undefined) return undefined;
  const timeout = Number(config.ExecutionTimeout);
  if (!Number.isInteger(timeout) || timeout < 1)
    throw new AssemblyError(r.templateFile, r.logicalId, 'DurableConfig.ExecutionTimeout must be a whole number of seconds');
  const retention = config.RetentionPeriodInDays === undefined ? undefined : Number(config.RetentionPeriodInDays);
  return { executionTimeoutSeconds: timeout, ...(retention === undefined ? {} : { retentionDays: retention }) };
}

/** A pattern that names Lambda's durable status-change events by source and detail-type. */
function selectsDurableStatusChanges(pattern: Record<string, unknown>): boolean {
  const has = (field: unknown, value: string) => Array.isArray(field) && field.includes(value);
  return has(pattern.source, DURABLE_STATUS_CHANGE_SOURCE) && has(pattern['detail-type'], DURABLE_STATUS_CHANGE_DETAIL_TYPE);
}
