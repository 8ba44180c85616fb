/**
 * The platform's subscriptions, each from a feed of one service: the service declares the
 * Subscription field in its schema (composed into the supergraph), notifies its change channel as it
 * appends (lib/db/change-feed.ts), and answers a query of what was appended after a cursor. Our
 * gateway serves each subscription by running that query with the subscriber's selection
 * (gateway/live/); the service serves it too, for gateways that forward subscriptions to subgraphs
 * (subgraph-subscriptions.ts): both by this one table.
 */
import type { ServiceName } from '../config/services.js';

/** The key a subscription watches to be woken by every notice of its feed, whatever key it names. */
export const ANY_KEY = '*';

/** The notices that wake a subscription: those of `feed` (lib/db/change-feed.ts) about `key`. */
export interface Watch {
  feed: string;
  key: string;
}

export interface LiveFeed {
  /** The Subscription field. */
  field: string;
  /** The service whose notices wake it. */
  service: ServiceName;
  /** The notices that wake a subscription with these arguments (the field's, coerced). */
  watches: (args: Record<string, unknown>) => Watch[];
  /**
   * The Query field that reads what came after a cursor: the Subscription field's arguments, `after`
   * (a cursor or null) and `first`; a page whose `nodes` carry `cursor`, or null when the arguments
   * name nothing.
   */
  readField: string;
  /** What a subscriber is told when the read answers null (a feed whose read answers a page whatever it is asked has none). */
  unknownKey?: (args: Record<string, unknown>) => { code: string; detail: string };
}

export const LIVE_FEEDS: readonly LiveFeed[] = [
  {
    field: 'passportEvents',
    service: 'issuer',
    watches: (args) => [{ feed: 'passport-events', key: String(args.passportId) }],
    readField: 'passportEventsAfter',
    unknownKey: (args) => ({ code: 'NOT_FOUND', detail: `No passport has id ${String(args.passportId)}.` }),
  },
  {
    field: 'passportStatusChanges',
    service: 'issuer',
    // A change is notified under its passport's operator, and under the passport's id.
    watches: (args) =>
      Array.isArray(args.passportIds)
        ? args.passportIds.map((id) => ({ feed: 'passport-status-by-passport', key: String(id) }))
        : [{ feed: 'passport-status', key: typeof args.operator === 'string' ? args.operator : ANY_KEY }],
    readField: 'passportStatusChangesAfter',
  },
  {
    field: 'passportSnapshots',
    service: 'archive',
    watches: (args) => [{ feed: 'passport-snapshots', key: String(args.passportId) }],
    readField: 'passportSnapshotsAfter',
  },
  // Revocations and trust-list changes are few: every one wakes every subscriber, whose read filters.
  {
    field: 'trustRevocationsRecorded',
    service: 'trust',
    watches: () => [{ feed: 'trust-revocations', key: ANY_KEY }],
    readField: 'trustRevocationsRecordedAfter',
  },
  {
    field: 'trustListChanges',
    service: 'trust',
    watches: () => [{ feed: 'trust-list-changes', key: ANY_KEY }],
    readField: 'trustListChangesAfter',
  },
];
