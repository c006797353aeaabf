/**
 * The results bucket: tool results too large for an operation record. Encrypted,
 * closed to the public, TLS only, and emptied by lifecycle rules once no operation can
 * still name an object: results a worker writes during a run after the longest run plus
 * the longest keepAlive; results the server spills when an operation ends (their own
 * prefix) after the longest keepAlive alone. Where two expiration rules cover an object
 * S3 honours the shorter ("How Amazon S3 handles conflicts in lifecycle configurations").
 * Grants are object actions on the `results/` prefix of this bucket alone.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { RESULT_KEY_PREFIXES } from '../lambdas/operations/result-store.ts';

/** Every result object lives under this prefix (see resultKeyFor). */
const RESULTS_PREFIX = 'results/';
const DAY_SECONDS = 24 * 3600;

export interface ResultsBucketProps {
  /**
   * How long an object may be needed: the longest run of any tool plus the longest
   * keepAlive, in seconds; `undefined` when keepAlive may be unlimited (objects are then
   * kept until the operation's record is gone and someone deletes them).
   */
  readonly maxLifetimeSeconds: number | undefined;
  /**
   * How long a result the server spills when its operation ends may be needed: the
   * longest keepAlive, in seconds. `undefined` when keepAlive may be unlimited, or when
   * not given: spilled results then follow `maxLifetimeSeconds`.
   */
  readonly spilledLifetimeSeconds?: number | undefined;
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

/** Lifecycle rules count whole days; a day more never deletes an object early. */
function expiryAfter(seconds: number): Duration {
  return Duration.days(Math.ceil(seconds / DAY_SECONDS) + 1);
}

export class ResultsBucket extends Construct {
  public readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: ResultsBucketProps) {
    super(scope, id);
    const lifetime = props.maxLifetimeSeconds;
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      lifecycleRules: [
        {
          id: 'ExpireResults',
          prefix: RESULTS_PREFIX,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
          ...(lifetime === undefined ? {} : { expiration: expiryAfter(lifetime) }),
        },
        // Written at completion, so needed for the keepAlive alone (lifetime undefined: unlimited).
        ...(lifetime === undefined || props.spilledLifetimeSeconds === undefined
          ? []
          : [{ id: 'ExpireSpilledResults', prefix: RESULT_KEY_PREFIXES.server, expiration: expiryAfter(Math.min(props.spilledLifetimeSeconds, lifetime)) }]),
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Results are transient tool outputs that only the MCP server reads, and it logs each call; access logs would need a second bucket for no added trail.',
    });
  }

  /** `s3:GetObject` on result objects (the MCP Lambda serving resources/read). */
  grantReadResults(grantee: IGrantable): Grant {
    return this.grantOnResults(grantee, ['s3:GetObject'], 'reads');
  }

  /** `s3:PutObject` on result objects (workers and the server storing large results). */
  grantWriteResults(grantee: IGrantable): Grant {
    return this.grantOnResults(grantee, ['s3:PutObject'], 'writes');
  }

  private grantOnResults(grantee: IGrantable, actions: string[], verb: string): Grant {
    const grant = Grant.addToPrincipal({ grantee, actions, resourceArns: [this.bucket.arnForObjects(`${RESULTS_PREFIX}*`)] });
    const principal: unknown = grantee.grantPrincipal;
    if (principal instanceof Construct) {
      const logicalId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
      Validations.of(principal).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/${RESULTS_PREFIX}*]`,
        reason: `Result object keys end in a per-result id; this scopes ${verb} to the results prefix of the one results bucket.`,
      });
    }
    return grant;
  }
}
