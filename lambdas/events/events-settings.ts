/**
 * What a deployment may tune about the Events extension, with the defaults the docs name
 * (docs/mcp-events.md). Every field has a default, so `{}` is a working configuration.
 */
import { APPEND_ATTEMPT_MS, INDEX_LAG_MS } from './event-log.ts';

export interface EventsSettings {
  /** `false` answers every `events/*` request with -32601. @default true */
  readonly enabled: boolean;
  /** How long the log keeps an occurrence. @default 24 */
  readonly retentionHours: number;
  /** The longest webhook subscription TTL granted. @default 3600, at most 86400 */
  readonly maxSubscriptionTtlSeconds: number;
  /** The shortest: a shorter suggestion is clamped up to it ("to protect itself from refresh storms"). @default 60 */
  readonly minSubscriptionTtlSeconds: number;
  /** Whether `ttlMs: null` may be granted as no expiry. @default false */
  readonly allowNoExpiry: boolean;
  /** Live webhook subscriptions one principal may hold. @default 25 */
  readonly maxSubscriptionsPerPrincipal: number;
  /** Open `events/stream` requests one principal may hold. @default 10 */
  readonly maxStreamsPerPrincipal: number;
  /**
   * How far behind now a read stops, for writes still landing and the index's lag: no write
   * lands further behind its position than APPEND_ATTEMPT_MS, and INDEX_LAG_MS covers the
   * index. @default 3000
   */
  readonly settleMs: number;
  /** The `nextPollMs` a poll answers, and how often a push stream reads. @default 5000 and 1000 */
  readonly nextPollMs: number;
  readonly streamReadMs: number;
  /** A push stream's heartbeat interval ("at least every 30 seconds"). @default 15000 */
  readonly heartbeatMs: number;
  /** The longest one push stream stays open; the invocation's deadline may end it sooner. @default 840000 */
  readonly maxStreamMs: number;
  /** A push stream ends this long before the invocation's deadline. @default 5000 */
  readonly deadlineMarginMs: number;
  /** After a secret rotation, how long deliveries are signed with the old secret too. @default 300 */
  readonly secretGraceSeconds: number;
  /** Retries of one delivery: exponential backoff from `baseDelaySeconds`, capped, `maxAttempts` in all. */
  readonly delivery: { readonly baseDelaySeconds: number; readonly maxDelaySeconds: number; readonly maxAttempts: number };
  /** Delivery is suspended when, within `windowMs`, at least `minAttempts` tries failed at more than `failureRate`. */
  readonly suspension: { readonly windowMs: number; readonly minAttempts: number; readonly failureRate: number };
}

/** The longest TTL a deployment may configure (a day, the SEP's "about a day"). */
export const MAX_SUBSCRIPTION_TTL_CEILING_SECONDS = 86_400;

export const EVENTS_DEFAULTS: EventsSettings = {
  enabled: true,
  retentionHours: 24,
  maxSubscriptionTtlSeconds: 3600,
  minSubscriptionTtlSeconds: 60,
  allowNoExpiry: false,
  maxSubscriptionsPerPrincipal: 25,
  maxStreamsPerPrincipal: 10,
  settleMs: APPEND_ATTEMPT_MS + INDEX_LAG_MS,
  nextPollMs: 5000,
  streamReadMs: 1000,
  heartbeatMs: 15_000,
  maxStreamMs: 14 * 60_000,
  deadlineMarginMs: 5000,
  secretGraceSeconds: 300,
  // 30 s, 1, 2, 4 min: five tries over about eight minutes ("3 to 5 attempts spread over no more than 10 to 15 minutes").
  delivery: { baseDelaySeconds: 30, maxDelaySeconds: 900, maxAttempts: 5 },
  // "a delivery failure rate above 95% over a rolling 60-minute window with a minimum of 100 delivery attempts".
  suspension: { windowMs: 3_600_000, minAttempts: 100, failureRate: 0.95 },
};

/** A partial configuration over the defaults; nested groups merge field by field. */
export type EventsSettingsInput = Partial<Omit<EventsSettings, 'delivery' | 'suspension'>> & {
  delivery?: Partial<EventsSettings['delivery']>;
  suspension?: Partial<EventsSettings['suspension']>;
};

/** The settings `input` asks for, over the defaults; a TTL past a day is refused. */
export function resolveEventsSettings(input: EventsSettingsInput = {}): EventsSettings {
  const defined = <T extends object>(value: T | undefined): Partial<T> =>
    Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
  const settings: EventsSettings = {
    ...EVENTS_DEFAULTS,
    ...defined(input),
    delivery: { ...EVENTS_DEFAULTS.delivery, ...defined(input.delivery) },
    suspension: { ...EVENTS_DEFAULTS.suspension, ...defined(input.suspension) },
  };
  if (settings.maxSubscriptionTtlSeconds > MAX_SUBSCRIPTION_TTL_CEILING_SECONDS) {
    throw new RangeError(`maxSubscriptionTtlSeconds is at most ${MAX_SUBSCRIPTION_TTL_CEILING_SECONDS} (a day)`);
  }
  if (settings.minSubscriptionTtlSeconds > settings.maxSubscriptionTtlSeconds) {
    throw new RangeError('minSubscriptionTtlSeconds must not exceed maxSubscriptionTtlSeconds');
  }
  return settings;
}

/** The retention in milliseconds. */
export function retentionMsOf(settings: Pick<EventsSettings, 'retentionHours'>): number {
  return settings.retentionHours * 3_600_000;
}
