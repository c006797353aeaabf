/** A STANDARD execution's ARN is derivable from its state machine and name (no Step Functions client needed). */
export function executionArnFor(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}
