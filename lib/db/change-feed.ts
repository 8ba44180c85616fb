/**
 * A service's change notices: what wakes the platform's live subscriptions (gateway/live/). A
 * service appends to one of its append-only tables and, in the same transaction, notifies its
 * channel (PostgreSQL NOTIFY, delivered at commit, never for a rolled-back append) with the feed,
 * the key and the cursor of what it appended. A notice only wakes a reader: what happened is read
 * from the table after the reader's cursor, so a notice lost (a listener reconnecting, the database
 * restarted) loses nothing; a listener that (re)connects says so (`onResync`), and every reader reads
 * again.
 *
 * One listener per service process, one database connection, whatever the number of subscribers.
 */
import pg from 'pg';
import { activeTraceparent } from '../ops/tracing.js';
import { clientConfig, parseDatabaseUrl } from './postgres.js';

/** The channel of a service's notices: one per service schema, so that two platforms on one database do not wake each other. */
export const changeChannel = (schema: string): string => `${schema}.changes`;

/**
 * One notice: `feed` (e.g. `passport-events`), the key it concerns (a passport id), the cursor of
 * what was appended, and when (milliseconds since the epoch, the append's clock: what the gateway
 * measures its delivery lag from); with tracing on, `trace`: the appending transaction's W3C
 * `traceparent`, under which the gateway's deliveries of it are traced.
 */
export interface ChangeNotice {
  feed: string;
  key: string;
  cursor: string;
  at: number;
  trace?: string;
}

/** A W3C traceparent (version 00): trace id, parent span id, flags. */
export const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** A notice's payload: its fields separated by spaces (none holds one), the trace last when there is one. */
export const changePayload = ({ feed, key, cursor, at, trace }: ChangeNotice): string => `${feed} ${key} ${cursor} ${at}${trace ? ` ${trace}` : ''}`;

/** A payload's notice; one written before notices carried a trace (four fields) still reads. */
export function parseChangePayload(payload: string): ChangeNotice | undefined {
  const [feed, key, cursor, at, trace, ...rest] = payload.split(' ');
  if (!(feed && key && cursor && at && /^\d+$/.test(at) && rest.length === 0)) return undefined;
  if (trace !== undefined && !TRACEPARENT.test(trace)) return undefined;
  return { feed, key, cursor, at: Number(at), ...(trace ? { trace } : {}) };
}

export interface ChangeListenerEvents {
  onNotice(notice: ChangeNotice): void;
  /** Listening (again): notices may have been missed meanwhile, so every reader reads its table again. */
  onResync(): void;
}

/** How long the listener waits before connecting again after losing its connection, at most. */
const MAX_RECONNECT_MS = 5_000;

/**
 * LISTENs on a service's channel over one connection of its own (a pool's connection cannot hold a
 * LISTEN), reconnecting with backoff while the database is away.
 */
export class ChangeListener {
  readonly #url: string;
  readonly #channel: string;
  readonly #listeners = new Set<ChangeListenerEvents>();
  #client: pg.Client | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  #delayMs = 100;
  #listening = false;

  constructor(databaseUrl: string, channel: string) {
    this.#url = databaseUrl;
    this.#channel = channel;
  }

  /** Whether the listener holds its LISTEN now. */
  get listening(): boolean {
    return this.#listening;
  }

  /** Starts listening on the first subscriber; `events.onResync` is called once listening. */
  subscribe(events: ChangeListenerEvents): () => void {
    this.#listeners.add(events);
    if (this.#listening) events.onResync();
    else if (!this.#client && !this.#retry) void this.#connect();
    return () => this.#listeners.delete(events);
  }

  async #connect(): Promise<void> {
    this.#retry = undefined;
    if (this.#closed) return;
    const target = parseDatabaseUrl(this.#url);
    const client = new pg.Client({ ...clientConfig(target, target.database), keepAlive: true });
    this.#client = client;
    const lost = () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      this.#listening = false;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (this.#closed) return;
      this.#retry = setTimeout(() => void this.#connect(), this.#delayMs);
      this.#delayMs = Math.min(this.#delayMs * 2, MAX_RECONNECT_MS);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', ({ channel, payload }) => {
      const notice = channel === this.#channel && payload !== undefined ? parseChangePayload(payload) : undefined;
      if (notice) for (const listener of this.#listeners) listener.onNotice(notice);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.#channel)}`);
    } catch {
      lost();
      return;
    }
    if (this.#client !== client) return;
    this.#listening = true;
    this.#delayMs = 100;
    for (const listener of this.#listeners) listener.onResync();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    this.#listening = false;
    await client?.end().catch(() => undefined);
  }
}

/**
 * The key of the transaction-level advisory lock (`pg_advisory_xact_lock(hashtext(key))`) under which
 * an append draws a feed's cursor from its table's sequence. Held to commit, it makes rows commit in
 * cursor order: a sequence alone does not (a transaction that drew 10 may commit after one that drew
 * 11), and a reader that had read 11 would never read 10. Taken last in the appending transaction, so
 * it is held only for the insert and the commit.
 */
const feedOrderLockKey = (channel: string, feed: string): string => `${channel} ${feed}`;

/** The part of a service's Prisma transaction client an append to a feed uses (each service has its own generated client). */
export interface FeedTransaction {
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/**
 * Appends to a feed last in a transaction: takes the feed's order lock (feedOrderLockKey), runs
 * `insert` (the row, whose cursor it returns with the key it concerns) and notifies the channel, at
 * commit, with the appending request's trace (activeTraceparent); and under `also`, the other feeds
 * and keys subscribers may watch the row by.
 */
export async function appendToFeed<T>(
  tx: FeedTransaction,
  { channel, feed }: { channel: string; feed: string },
  insert: () => Promise<T>,
  noticeOf: (row: T) => { key: string; cursor: string; at?: number; also?: readonly { feed: string; key: string }[] },
): Promise<T> {
  await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(hashtext($1))', feedOrderLockKey(channel, feed));
  const row = await insert();
  const { key, cursor, at = Date.now(), also = [] } = noticeOf(row);
  const trace = activeTraceparent();
  for (const notified of [{ feed, key }, ...also]) await tx.$executeRawUnsafe('SELECT pg_notify($1, $2)', channel, changePayload({ ...notified, cursor, at, trace }));
  return row;
}

/**
 * Most items one read of a feed answers (the read fields' `first`, lib/graphql/feed-page.ts), and so
 * the most a live subscription's read asks for (gateway/live/): a subscriber behind by more reads again.
 */
export const MAX_FEED_PAGE = 100;

/** The cursor of a row of a feed's append-only table: its sequence id, in decimal. */
export const feedCursor = (id: bigint | number): string => String(id);

/** The id a feed cursor names (from 1, a PostgreSQL bigint), or undefined when the text is not a cursor. */
export function feedCursorId(cursor: string): bigint | undefined {
  if (!/^(0|[1-9]\d{0,18})$/.test(cursor)) return undefined;
  const id = BigInt(cursor);
  return id <= 2n ** 63n - 1n ? id : undefined;
}
