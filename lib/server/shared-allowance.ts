/**
 * How many requests each client may still make in the current window, for every process of the
 * platform together: the count is kept in PostgreSQL (the store the platform already runs), but a
 * process does not ask it for every request. It reserves a lease of allowance (a tenth of the quota)
 * for a client and admits that client's requests from the lease locally; when half of it is spent it
 * reserves the next in the background, so a steady client waits for the database at most once per
 * window. A reservation never takes the platform past the quota (it is granted what is left, and
 * then the client is refused everywhere until the window ends), so while the database answers the
 * platform admits at most the quota, and, with N processes, may refuse up to N leases early (leases
 * reserved by processes the client stopped calling). The reservations of all clients waiting at one
 * moment go in one statement, one statement at a time, so a flood of new clients costs the database
 * a statement per round trip, not one per request.
 *
 * Without the database (unreachable, or it fails) the limit holds per process: each process admits up
 * to the quota on its own count for the window (N processes: up to N quotas), and tries the database
 * again after UNAVAILABLE_RETRY_MS. A request never waits for a database that does not answer longer
 * than its connection or statement timeout (1 s), and is never refused for it.
 *
 * The table is UNLOGGED (a crash loses only the current windows' counts) and made on first use; each
 * process deletes the rows of windows that ended every ten minutes, as it reserves.
 */
import pg from 'pg';
import { withoutSchema } from '../config/database.js';
import type { RateLimitPolicy } from '../config/runtime.js';

/** What a lease is of a quota: its tenth, at least one request. */
const LEASE_FRACTION = 0.1;
/** After the database failed, how long each process counts alone before it tries it again. */
const UNAVAILABLE_RETRY_MS = 5_000;
/** How long a request may wait for a connection, or a reservation's statement may run. */
const DATABASE_TIMEOUT_MS = 1_000;
/** How often rows of windows that ended are deleted. */
const DELETE_INTERVAL_MS = 10 * 60_000;

const TABLE = 'passport_edge.rate_limit_allowance';
// Under a lock: processes starting together would otherwise race to make the same schema.
const CREATE = `
  BEGIN;
  SELECT pg_advisory_xact_lock(hashtext('${TABLE}'));
  CREATE SCHEMA IF NOT EXISTS passport_edge;
  CREATE UNLOGGED TABLE IF NOT EXISTS ${TABLE} (
    client text NOT NULL,
    window_start bigint NOT NULL,
    window_end bigint NOT NULL,
    quota integer NOT NULL,
    reserved integer NOT NULL,
    last_grant integer NOT NULL,
    PRIMARY KEY (client, window_start)
  );
  COMMIT`;
// Each row is granted what is left of its quota, up to what is asked; last_grant says how much.
const RESERVE = `
  INSERT INTO ${TABLE} AS a (client, window_start, window_end, quota, reserved, last_grant)
  SELECT client, window_start, window_end, quota, LEAST(wanted, quota), LEAST(wanted, quota)
  FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[], $5::integer[]) AS asked (client, window_start, window_end, quota, wanted)
  ON CONFLICT (client, window_start) DO UPDATE SET
    reserved = GREATEST(a.reserved, LEAST(a.reserved + EXCLUDED.last_grant, EXCLUDED.quota)),
    last_grant = GREATEST(0, LEAST(a.reserved + EXCLUDED.last_grant, EXCLUDED.quota) - a.reserved),
    quota = EXCLUDED.quota
  RETURNING client, window_start, last_grant, reserved`;

/** Whether a request is admitted, what its client has left of the window, and when the window ends. */
export interface Admission {
  admitted: boolean;
  remaining: number;
  /** Seconds until the window ends (at least 1). */
  resetSeconds: number;
}

/** One client's window, as this process knows it. */
interface Account {
  /** The window's start, in seconds since the epoch (every process cuts windows alike). */
  windowStart: number;
  windowEnd: number;
  /** Requests this process reserved, and admitted, in the window. */
  granted: number;
  spent: number;
  /** Requests reserved by all processes, as of this process's last reservation. */
  reservedByAll: number;
  /** The quota is reserved whole: no more is granted until the window ends. */
  exhausted: boolean;
  reserving?: Promise<unknown>;
}

interface Asked {
  client: string;
  account: Account;
  quota: number;
  wanted: number;
  settle(failure?: unknown): void;
}

export class SharedAllowance {
  readonly #accounts = new Map<string, Account>();
  #pool: pg.Pool | undefined;
  #tableMade: Promise<unknown> | undefined;
  #unavailableUntil = 0;
  #asked: Asked[] = [];
  #reserving = false;
  #nextSweep = 0;
  #nextDelete = 0;

  /** Whether the last reservation failed: a failure is told once per outage. */
  #failing = false;

  /** `databaseUrl`: the platform's database, asked for at the first reservation (the embedded one is started after the servers are built). */
  constructor(
    private readonly databaseUrl: () => string | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** The admission of one request of `client` under `policy`, when this process can tell at once; undefined when a reservation must come first (`reserve`). */
  admitNow(client: string, policy: RateLimitPolicy): Admission | undefined {
    const now = this.now();
    const account = this.#account(client, policy, now);
    const resetSeconds = Math.max(1, Math.ceil((account.windowEnd - now) / 1000));
    if (account.spent < account.granted) {
      account.spent += 1;
      if (!account.exhausted && !account.reserving && account.granted - account.spent < leaseOf(policy) / 2) void this.reserve(client, policy);
      return { admitted: true, remaining: Math.max(0, policy.quota - account.reservedByAll + account.granted - account.spent), resetSeconds };
    }
    if (account.exhausted) return { admitted: false, remaining: 0, resetSeconds };
    if (now < this.#unavailableUntil) {
      // Without the database: this process's own count, up to the quota.
      const admitted = account.spent < policy.quota;
      if (admitted) account.spent += 1;
      return { admitted, remaining: policy.quota - account.spent, resetSeconds };
    }
    return undefined;
  }

  /**
   * Reserves the next lease of `client`'s window; resolves when it is granted, or with the database's
   * error when it failed and had answered before (the first failure of an outage, to be logged). Never rejects.
   */
  reserve(client: string, policy: RateLimitPolicy): Promise<unknown> {
    const account = this.#account(client, policy, this.now());
    account.reserving ??= new Promise<unknown>((settle) => {
      const wanted = leaseOf(policy) + Math.max(0, account.spent - account.granted);
      this.#asked.push({ client, account, quota: policy.quota, wanted, settle });
      if (!this.#reserving) void this.#reserveAsked();
    }).finally(() => {
      account.reserving = undefined;
    });
    return account.reserving;
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.end();
  }

  #account(client: string, policy: RateLimitPolicy, now: number): Account {
    if (now >= this.#nextSweep) this.#sweep(now);
    const windowMs = policy.windowSeconds * 1000;
    let account = this.#accounts.get(client);
    if (!account || now >= account.windowEnd) {
      const windowStart = Math.floor(now / windowMs) * windowMs;
      account = { windowStart: windowStart / 1000, windowEnd: windowStart + windowMs, granted: 0, spent: 0, reservedByAll: 0, exhausted: false };
      this.#accounts.set(client, account);
    }
    return account;
  }

  /** Forgets the accounts of windows that ended, once a minute: a client that does not come back costs no memory. */
  #sweep(now: number): void {
    for (const [client, account] of this.#accounts) if (now >= account.windowEnd && !account.reserving) this.#accounts.delete(client);
    this.#nextSweep = now + 60_000;
  }

  /** One statement at a time, for every reservation asked meanwhile. */
  async #reserveAsked(): Promise<void> {
    this.#reserving = true;
    while (this.#asked.length) {
      // In one order, so that two processes' statements lock rows alike and never deadlock.
      const asked = this.#asked.splice(0).sort((a, b) => (a.client < b.client ? -1 : a.client > b.client ? 1 : a.account.windowStart - b.account.windowStart));
      let failure: unknown;
      try {
        const granted = await this.#grant(asked);
        for (const each of asked) {
          const row = granted.get(`${each.client}\n${each.account.windowStart}`);
          if (!row) continue;
          each.account.granted += row.grant;
          each.account.reservedByAll = row.reserved;
          if (row.grant < each.wanted) each.account.exhausted = true;
        }
        this.#failing = false;
      } catch (error) {
        this.#unavailableUntil = this.now() + UNAVAILABLE_RETRY_MS;
        if (!this.#failing) failure = error;
        this.#failing = true;
      }
      for (const [index, each] of asked.entries()) each.settle(index === 0 ? failure : undefined);
    }
    this.#reserving = false;
  }

  async #grant(asked: readonly Asked[]): Promise<Map<string, { grant: number; reserved: number }>> {
    const pool = this.#connect();
    this.#tableMade ??= pool.query(CREATE).catch((error: unknown) => {
      this.#tableMade = undefined;
      throw error;
    });
    await this.#tableMade;
    const { rows } = await pool.query<{ client: string; window_start: string; last_grant: number; reserved: number }>(RESERVE, [
      asked.map((each) => each.client),
      asked.map((each) => each.account.windowStart),
      asked.map((each) => each.account.windowEnd / 1000),
      asked.map((each) => each.quota),
      asked.map((each) => each.wanted),
    ]);
    const now = this.now();
    if (now >= this.#nextDelete) {
      this.#nextDelete = now + DELETE_INTERVAL_MS;
      await pool.query(`DELETE FROM ${TABLE} WHERE window_end < $1`, [Math.floor(now / 1000)]);
    }
    return new Map(rows.map((row) => [`${row.client}\n${row.window_start}`, { grant: row.last_grant, reserved: row.reserved }]));
  }

  #connect(): pg.Pool {
    if (this.#pool) return this.#pool;
    const url = this.databaseUrl();
    if (!url) throw new Error('no database is configured for the rate limits');
    const pool = new pg.Pool({
      connectionString: withoutSchema(url),
      max: 2,
      connectionTimeoutMillis: DATABASE_TIMEOUT_MS,
      query_timeout: DATABASE_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      allowExitOnIdle: true,
    });
    // A connection that fails while idle is dropped by the pool; the next reservation says so.
    pool.on('error', () => {});
    this.#pool = pool;
    return pool;
  }
}

function leaseOf(policy: RateLimitPolicy): number {
  return Math.max(1, Math.ceil(policy.quota * LEASE_FRACTION));
}
