/**
 * The AWS managed policies a CDK app's roles commonly name, with the documents AWS publishes
 * for them. Neither the simulator nor its data package ships managed policy documents, so the
 * few an assembly uses are kept here.
 */

/** A policy document as IAM stores it. */
export interface PolicyDocument {
  Version?: string;
  Statement: unknown[];
}

const MANAGED: Record<string, PolicyDocument> = {
  // https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AWSLambdaBasicExecutionRole.html
  'service-role/AWSLambdaBasicExecutionRole': {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'], Resource: '*' }],
  },
  // https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AWSXRayDaemonWriteAccess.html
  AWSXRayDaemonWriteAccess: {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords', 'xray:GetSamplingRules', 'xray:GetSamplingTargets', 'xray:GetSamplingStatisticSummaries'],
        Resource: ['*'],
      },
    ],
  },
};

/**
 * The document of an AWS managed policy, from its ARN (`arn:aws:iam::aws:policy/<path><name>`),
 * or undefined when it is not one this runtime knows.
 */
export function managedPolicyDocument(arn: string): PolicyDocument | undefined {
  const name = /^arn:[a-z-]+:iam::aws:policy\/(.+)$/.exec(arn)?.[1];
  return name === undefined ? undefined : MANAGED[name];
}
