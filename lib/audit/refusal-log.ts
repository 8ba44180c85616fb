/**
 * Refused requests in a service's admin log (DESIGN §3: every refused write or admin request is
 * logged), in a way a flood of them can neither fill the disk nor hide its size. Refusals are kept
 * apart by who was refused (actor and role), what they asked (action) and why (outcome); of each
 * such kind, the first REFUSAL_LIMITS.itemsPerKind of a window are itemised, one entry each, and
 * no more than REFUSAL_LIMITS.itemsPerWindow of all kinds together; the rest are counted, and
 * written as one entry per kind whose `detail.count` says how many refusals it stands for (an
 * itemised entry stands for one), made between `detail.first_at` and `detail.last_at`. Counts are written
 * at the end of their window, before the log is read (so a reader sees every refusal made before
 * the read) and when the service stops. An entry that cannot be written is counted instead, and
 * counts that cannot be written are kept for the next try: they are lost only if the process ends
 * without reaching its database.
 *
 * Itemised entries of concurrent requests are written together, one INSERT for all of them.
 */
import type { AdminLogClient } from './admin-log.js';

/** One refusal, as the admin log keeps it. */
export interface Refusal {
  /** The principal's name, or `anonymous`. */
  actor: string;
  /** The principal's role, or `none`. */
  role: string;
  /** The operator the principal acts for (null: the platform itself, or an anonymous caller): its admin reads the refusals (docs/OPERATORS.md). */
  operator?: string | null;
  /** The field of the graph the request would have run. */
  action: string;
  /** The refusal's problem code (MISSING_TOKEN, INVALID_TOKEN, INSUFFICIENT_ROLE, …). */
  outcome: string;
  status: number;
  detail: string;
}

/** Refusals of one kind made by one request, or gathered by the REST facade (rest-facade/refusal-reports.ts). */
export interface RefusalsOfAKind {
  refusal: Refusal;
  /** How many. */
  count: number;
  /** When the first of them were made, oldest first (at least one, at most REFUSAL_LIMITS.itemsPerKind): those that may be itemised. */
  times: readonly Date[];
  /** When the last was made. */
  last: Date;
}

export const REFUSAL_LIMITS = {
  windowMs: 60_000,
  /** Entries itemised per kind and window. */
  itemsPerKind: 10,
  /** Entries itemised per window, all kinds together. */
  itemsPerWindow: 100,
};

interface Counted {
  refusal: Refusal;
  /** Entries of this kind itemised in the current window. */
  itemised: number;
  /** Refusals counted and not written yet. */
  count: number;
  first?: Date;
  last?: Date;
}

type Row = Parameters<AdminLogClient['adminLogEntry']['createMany']>[0]['data'][number];

const kindOf = ({ actor, role, action, outcome }: Refusal) => `${actor}\n${role}\n${action}\n${outcome}`;

const itemRow = (refusal: Refusal, at: Date): Row => ({
  at,
  actor: refusal.actor,
  role: refusal.role,
  operator: refusal.operator ?? null,
  action: refusal.action,
  target: null,
  outcome: refusal.outcome,
  detail: { status: refusal.status, detail: refusal.detail },
});

export class RefusalLog {
  readonly #kinds = new Map<string, Counted>();
  #windowStart = 0;
  #itemisedInWindow = 0;
  #windowEnd: NodeJS.Timeout | undefined;
  /** Itemised rows waiting for the INSERT in flight, if any, with their requests' callbacks. */
  #waiting: { rows: Row[]; settle(error?: unknown): void }[] = [];
  #writing = false;
  /** The last write of counts, in flight or done: the next waits for it. */
  #countsWritten: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: AdminLogClient,
    private readonly limits = REFUSAL_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records refusals; resolves once those itemised are written (rejects if they could not be, and counts them instead). */
  record(refusals: readonly RefusalsOfAKind[]): Promise<void> {
    this.#startWindowAt(this.now());
    const rows: Row[] = [];
    for (const { refusal, count, times, last } of refusals) {
      const kind = this.#kind(refusal);
      const items = Math.min(times.length, count, this.limits.itemsPerKind - kind.itemised, this.limits.itemsPerWindow - this.#itemisedInWindow);
      for (const at of times.slice(0, items)) rows.push(itemRow(refusal, at));
      kind.itemised += items;
      this.#itemisedInWindow += items;
      // Those not itemised came after the itemised ones: from the first time left, or the last one known.
      if (count > items) this.#count(kind, count - items, times[items] ?? times.at(-1)!, last);
    }
    return rows.length ? this.#write(rows) : Promise.resolve();
  }

  /**
   * Writes the counts gathered so far, one entry per kind; counts that cannot be written are kept.
   * Resolves once every count gathered before the call is in the log: after a write already in flight
   * (the window's end) too, which holds counts this call no longer sees.
   */
  writeCounts(): Promise<void> {
    const written = this.#countsWritten.catch(() => {}).then(() => this.#writeCounts());
    this.#countsWritten = written;
    return written;
  }

  async #writeCounts(): Promise<void> {
    const rows: Row[] = [];
    for (const kind of this.#kinds.values()) {
      if (kind.count === 0) continue;
      const { refusal, count, first, last } = kind;
      rows.push({ ...itemRow(refusal, last!), detail: { status: refusal.status, detail: refusal.detail, count, first_at: first!.toISOString(), last_at: last!.toISOString() } });
      kind.count = 0;
      kind.first = kind.last = undefined;
    }
    if (!rows.length) return;
    try {
      await this.client.adminLogEntry.createMany({ data: rows });
    } catch (error) {
      for (const row of rows) {
        const { count, first_at, last_at } = row.detail as { count: number; first_at: string; last_at: string };
        this.#count(this.#kind(refusalOf(row)), count, new Date(first_at), new Date(last_at));
      }
      throw error;
    }
  }

  /** Writes what is counted and stops the window's timer: the service is stopping. */
  async close(): Promise<void> {
    clearTimeout(this.#windowEnd);
    this.#windowEnd = undefined;
    await this.writeCounts();
  }

  #kind(refusal: Refusal): Counted {
    const key = kindOf(refusal);
    let kind = this.#kinds.get(key);
    if (!kind) this.#kinds.set(key, (kind = { refusal, itemised: 0, count: 0 }));
    return kind;
  }

  /** Counts refusals of a kind; the window's end writes them, if nothing does before. */
  #count(kind: Counted, count: number, first: Date, last: Date): void {
    kind.count += count;
    if (!kind.first || first < kind.first) kind.first = first;
    if (!kind.last || last > kind.last) kind.last = last;
    if (this.#windowEnd) return;
    this.#windowEnd = setTimeout(() => this.#closeWindow(), Math.max(0, this.#windowStart + this.limits.windowMs - this.now()));
    // The service's stop writes the counts: the timer holds no process open.
    this.#windowEnd.unref();
  }

  /** A refusal at `now` after the window ended opens a new one (its counts are written when the timer comes). */
  #startWindowAt(now: number): void {
    if (now < this.#windowStart + this.limits.windowMs) return;
    this.#windowStart = now - (now % this.limits.windowMs);
    this.#itemisedInWindow = 0;
    for (const [key, kind] of this.#kinds) {
      if (kind.count === 0) this.#kinds.delete(key);
      else kind.itemised = 0;
    }
  }

  #closeWindow(): void {
    this.#windowEnd = undefined;
    // A failure keeps the counts, which the next window's end (or a read of the log) writes.
    this.writeCounts().catch(() => {});
    this.#startWindowAt(this.now());
  }

  /** One INSERT at a time: rows that come while one is in flight go together in the next. */
  #write(rows: Row[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ rows, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!this.#writing) void this.#writeWaiting();
    });
  }

  async #writeWaiting(): Promise<void> {
    this.#writing = true;
    while (this.#waiting.length) {
      const batch = this.#waiting.splice(0);
      const rows = batch.flatMap((waiting) => waiting.rows);
      try {
        await this.client.adminLogEntry.createMany({ data: rows });
        for (const waiting of batch) waiting.settle();
      } catch (error) {
        for (const row of rows) this.#count(this.#kind(refusalOf(row)), 1, row.at, row.at);
        for (const waiting of batch) waiting.settle(error);
      }
    }
    this.#writing = false;
  }
}

function refusalOf(row: Row): Refusal {
  const { status, detail } = row.detail as { status: number; detail: string };
  return { actor: row.actor, role: row.role, operator: row.operator ?? null, action: row.action, outcome: row.outcome, status, detail };
}
