/**
 * The physical names and ARNs CloudFormation gives resources: the name the template sets
 * (`FunctionName`, `TableName`, ...), else `<stack>-<logicalId>-<suffix>` cut to the service's
 * limit, the suffix derived from the stack and logical id so every read of one assembly names
 * a resource the same (a redeploy keeps its names, as CloudFormation's update does).
 */
import { createHash } from 'node:crypto';

export const ACCOUNT_ID = '000000000000';
export const REGION = 'us-east-1';
const SCOPE = `${REGION}:${ACCOUNT_ID}`;

/** What `Ref` and `Fn::GetAtt` give for one resource. */
export interface ResourceIdentity {
  name: string;
  ref: string;
  attributes: Record<string, string>;
}

/** Property holding an explicit physical name, per type. */
const NAME_PROPERTY: Record<string, string> = {
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::S3::Bucket': 'BucketName',
  'AWS::SecretsManager::Secret': 'Name',
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::IAM::Policy': 'PolicyName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::StepFunctions::StateMachine': 'StateMachineName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::Events::Rule': 'Name',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
};

/** The property that names `type`'s resource explicitly, if it has one. */
export function nameProperty(type: string): string | undefined {
  return NAME_PROPERTY[type];
}

/** 12 upper-case letters and digits from the stack and logical id, like CloudFormation's random suffix. */
export function nameSuffix(stackName: string, logicalId: string, length = 12): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const digest = createHash('sha256').update(`${stackName}/${logicalId}`).digest();
  return Array.from(digest.subarray(0, length), (byte) => alphabet[byte % alphabet.length]).join('');
}

/** `<stack>-<logicalId>-<suffix>`, the prefix cut so the whole fits `maxLength`. */
export function generatedName(stackName: string, logicalId: string, maxLength: number, lowerCase = false): string {
  const suffix = nameSuffix(stackName, logicalId);
  const prefix = `${stackName}-${logicalId}`.slice(0, Math.max(1, maxLength - suffix.length - 1));
  const name = `${prefix}-${suffix}`;
  return lowerCase ? name.toLowerCase() : name;
}

/**
 * `Ref` and the attributes of one resource. `explicitName` is the resolved name property,
 * `properties` the raw ones (a version or alias reads which function it names).
 */
export function resourceIdentity(
  type: string,
  stackName: string,
  logicalId: string,
  explicitName: string | undefined,
  functionArnOf: (reference: unknown) => string | undefined,
  properties: Record<string, unknown>,
): ResourceIdentity {
  const named = (maxLength: number, lowerCase = false) => explicitName ?? generatedName(stackName, logicalId, maxLength, lowerCase);
  switch (type) {
    case 'AWS::DynamoDB::Table': {
      const name = named(255);
      const arn = `arn:aws:dynamodb:${SCOPE}:table/${name}`;
      return { name, ref: name, attributes: { Arn: arn, StreamArn: `${arn}/stream/1970-01-01T00:00:00.000` } };
    }
    case 'AWS::S3::Bucket': {
      const name = named(63, true);
      return {
        name,
        ref: name,
        attributes: {
          Arn: `arn:aws:s3:::${name}`,
          DomainName: `${name}.s3.amazonaws.com`,
          RegionalDomainName: `${name}.s3.${REGION}.amazonaws.com`,
          DualStackDomainName: `${name}.s3.dualstack.${REGION}.amazonaws.com`,
          WebsiteURL: `http://${name}.s3-website-${REGION}.amazonaws.com`,
        },
      };
    }
    case 'AWS::SecretsManager::Secret': {
      // Secrets Manager appends six random characters to the name in the ARN; Ref is the ARN.
      const name = explicitName ?? `${logicalId}-${nameSuffix(stackName, logicalId)}`;
      const arn = `arn:aws:secretsmanager:${SCOPE}:secret:${name}-${nameSuffix(stackName, `${logicalId}/arn`, 6).toLowerCase()}`;
      return { name, ref: arn, attributes: { Id: arn } };
    }
    case 'AWS::IAM::Role': {
      const name = named(64);
      const path = typeof properties.Path === 'string' ? properties.Path : '/';
      return { name, ref: name, attributes: { Arn: `arn:aws:iam::${ACCOUNT_ID}:role${path}${name}`, RoleId: `AROA${nameSuffix(stackName, logicalId, 17)}` } };
    }
    case 'AWS::IAM::ManagedPolicy': {
      const name = named(128);
      const arn = `arn:aws:iam::${ACCOUNT_ID}:policy/${name}`;
      return { name, ref: arn, attributes: { PolicyArn: arn } };
    }
    case 'AWS::IAM::Policy': {
      const name = explicitName ?? logicalId;
      return { name, ref: `${stackName.slice(0, 5)}-${nameSuffix(stackName, logicalId)}`, attributes: {} };
    }
    case 'AWS::Logs::LogGroup': {
      const name = named(512);
      return { name, ref: name, attributes: { Arn: `arn:aws:logs:${SCOPE}:log-group:${name}:*` } };
    }
    case 'AWS::Lambda::Function': {
      const name = named(64);
      return { name, ref: name, attributes: { Arn: `arn:aws:lambda:${SCOPE}:function:${name}`, 'SnapStartResponse.ApplyOn': 'None' } };
    }
    case 'AWS::Lambda::Url': {
      const target = functionArnOf(properties.TargetFunctionArn) ?? '';
      const id = nameSuffix(stackName, logicalId, 32).toLowerCase();
      return { name: id, ref: target, attributes: { FunctionArn: target, FunctionUrl: `https://${id}.lambda-url.${REGION}.on.aws/` } };
    }
    case 'AWS::Lambda::Version':
    case 'AWS::Lambda::Alias': {
      // The version number is filled in by the reader, which counts the versions of each function.
      const target = functionArnOf(properties.FunctionName) ?? '';
      return { name: logicalId, ref: target, attributes: { FunctionArn: target } };
    }
    case 'AWS::StepFunctions::StateMachine': {
      const name = explicitName ?? `${logicalId}-${nameSuffix(stackName, logicalId)}`.slice(0, 80);
      const arn = `arn:aws:states:${SCOPE}:stateMachine:${name}`;
      return { name, ref: arn, attributes: { Arn: arn, Name: name, StateMachineRevisionId: arn } };
    }
    case 'AWS::SQS::Queue': {
      const name = named(80);
      const url = `https://sqs.${REGION}.amazonaws.com/${ACCOUNT_ID}/${name}`;
      return { name, ref: url, attributes: { Arn: `arn:aws:sqs:${SCOPE}:${name}`, QueueName: name, QueueUrl: url } };
    }
    case 'AWS::SNS::Topic': {
      const name = named(256);
      const arn = `arn:aws:sns:${SCOPE}:${name}`;
      return { name, ref: arn, attributes: { TopicArn: arn, TopicName: name } };
    }
    case 'AWS::Events::Rule': {
      const name = named(64);
      return { name, ref: name, attributes: { Arn: `arn:aws:events:${SCOPE}:rule/${name}` } };
    }
    case 'AWS::CloudWatch::Alarm': {
      const name = named(255);
      return { name, ref: name, attributes: { Arn: `arn:aws:cloudwatch:${SCOPE}:alarm:${name}` } };
    }
    case 'AWS::CloudFormation::Stack': {
      const name = generatedName(stackName, logicalId, 128);
      return { name, ref: stackArn(name), attributes: {} };
    }
    default: {
      const name = explicitName ?? generatedName(stackName, logicalId, 128);
      return { name, ref: name, attributes: {} };
    }
  }
}

/** The ARN of a stack named `name`, its id derived from the name. */
export function stackArn(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  return `arn:aws:cloudformation:${SCOPE}:stack/${name}/${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
