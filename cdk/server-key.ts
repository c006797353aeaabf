/**
 * The server's secret key in Secrets Manager: it signs state handed to clients (the
 * 2026-07-28 `requestState`), so any instance can check what another one issued.
 * CloudFormation generates the value at deploy time; it never appears in the template.
 */
import { Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { MIN_SECRET_KEY_BYTES } from '../lambdas/aws/secrets-manager-key.ts';

/** Characters generated: letters and digits (about 5.95 bits each), so 64 give about 380 bits, well over HMAC-SHA-256's 256. */
export const SERVER_KEY_LENGTH = 64;

export class ServerKey extends Construct {
  public readonly secret: Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    if (SERVER_KEY_LENGTH < MIN_SECRET_KEY_BYTES) throw new Error(`The server key must be at least ${MIN_SECRET_KEY_BYTES} characters`);
    this.secret = new Secret(this, 'Secret', {
      description: 'async-mcp server key: signs state the MCP server hands to clients (requestState)',
      generateSecretString: { passwordLength: SERVER_KEY_LENGTH, excludePunctuation: true, includeSpace: false },
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The key only signs short-lived requestState values; a scheduled rotation would need a rotation Lambda and would refuse every requestState in flight. ' +
        'Rotate it by hand (put-secret-value with a new random value of at least 32 characters) when needed: new containers read it at their first signed request.',
    });
  }

  /** GetSecretValue on this secret alone (its AWS managed key needs no grant of its own). */
  public grantRead(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({ grantee, actions: ['secretsmanager:GetSecretValue'], resourceArns: [this.secret.secretArn] });
  }
}
