/**
 * The subscriptions the gateway serves, each from a feed of one service: the service declares the
 * Subscription field in its schema (composed into the supergraph), notifies its change channel as it
 * appends (lib/db/change-feed.ts), and answers a query of what was appended after a cursor, which
 * the gateway runs with the subscriber's selection (live-subscription.ts).
 */
import type { ServiceName } from '../../lib/config/services.js';

export interface LiveFeed {
  /** The Subscription field. */
  field: string;
  /** The service whose notices wake it. */
  service: ServiceName;
  /** The feed its notices name (lib/db/change-feed.ts). */
  feed: string;
  /** The argument whose value is the key notices carry. */
  keyArgument: string;
  /**
   * The Query field that reads what came after a cursor: the Subscription field's arguments, `after`
   * (a cursor or null) and `first`; a page whose `nodes` carry `cursor`, or null when the key names
   * nothing.
   */
  readField: string;
  /** What a subscriber is told when the key names nothing. */
  unknownKey: (key: string) => { code: string; detail: string };
}

export const LIVE_FEEDS: readonly LiveFeed[] = [
  {
    field: 'passportEvents',
    service: 'issuer',
    feed: 'passport-events',
    keyArgument: 'passportId',
    readField: 'passportEventsAfter',
    unknownKey: (id) => ({ code: 'NOT_FOUND', detail: `No passport has id ${id}.` }),
  },
];
