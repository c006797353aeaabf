/**
 * The results bucket: tool results too large for an operation record. Encrypted,
 * closed to the public, TLS only, and emptied by a lifecycle rule once no operation can
 * still name an object (its longest run plus the longest keepAlive). Grants are object
 * actions on the `results/` prefix of this bucket alone.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, CfnBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

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
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
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
          // Lifecycle rules count whole days; a day more never deletes an object early.
          ...(lifetime === undefined ? {} : { expiration: Duration.days(Math.ceil(lifetime / DAY_SECONDS) + 1) }),
        },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'Results are transient tool outputs that only the MCP server reads, and it logs each call; access logs would need a second bucket for no added trail.',
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
