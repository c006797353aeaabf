/**
 * The CloudWatch Logs actions Step Functions needs to deliver a state machine's logs, which AWS
 * authorizes only on Resource "*" (CDK grants them to every machine role with logging).
 */
export const STATE_MACHINE_LOG_DELIVERY_ACTIONS = [
  'logs:CreateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:DescribeLogGroups',
  'logs:DescribeResourcePolicies',
  'logs:GetLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:UpdateLogDelivery',
] as const;
