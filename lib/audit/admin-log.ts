/**
 * The admin log of a service (DESIGN §3): every request that changes state, who made it, what it
 * was, when, and how it ended. Entries are appended, never changed.
 *
 * A mutation that writes has its entry written in the write's own transaction (recordInTransaction,
 * the last step of each write transaction of the data layer), so the change and its entry commit or
 * roll back together; a crash cannot leave a change without its entry. A mutation that ends without
 * writing (a refusal, a restatement that changes nothing) has its entry written after it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, createContextKey } from '@opentelemetry/api';
import { tracingContextInstalled } from '../ops/tracing.js';

export interface AdminLogRecord {
  actor: string;
  role: string;
  /** The operator the actor acted for; null (or absent) for the platform itself or an anonymous caller. */
  operator?: string | null;
  action: string;
  target?: string | null;
  /** `ok`, or the problem code the request ended with. */
  outcome: string;
  detail?: object | null;
}

export interface AdminLogEntry extends AdminLogRecord {
  id: string;
  at: Date;
}

interface AdminLogRow {
  id: bigint;
  at: Date;
  actor: string;
  role: string;
  operator: string | null;
  action: string;
  target: string | null;
  outcome: string;
  detail: unknown;
}

/** The part of a service's generated Prisma client the admin log needs. */
export interface AdminLogClient {
  adminLogEntry: {
    create(args: { data: { actor: string; role: string; operator: string | null; action: string; target: string | null; outcome: string; detail?: object } }): Promise<unknown>;
    createMany(args: { data: { at: Date; actor: string; role: string; operator: string | null; action: string; target: string | null; outcome: string; detail: object }[] }): Promise<unknown>;
    findMany(args: { where?: { id?: { lt: bigint }; operator?: string }; orderBy: { id: 'desc' }; take: number }): Promise<AdminLogRow[]>;
  };
}

export interface AdminLogPage {
  entries: AdminLogEntry[];
  /** Cursor for the next (older) page, when there is one. */
  next: string | null;
}

/**
 * PostgreSQL text and jsonb cannot hold U+0000, which a request may well carry (a path segment
 * `%00`), nor can jsonb hold a lone UTF-16 surrogate (JSON's `"\ud800"` is valid JSON, and the
 * entry was lost with "invalid input syntax for type json"); the log keeps such a character as
 * U+FFFD rather than failing to record the request.
 */
const withoutNul = (text: string) => text.replaceAll('\u0000', '\uFFFD').replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\uFFFD');

export class AdminLog {
  constructor(private readonly client: AdminLogClient) {}

  async record(entry: AdminLogRecord): Promise<void> {
    const target = entry.target == null ? null : withoutNul(entry.target);
    const detail = entry.detail ? (JSON.parse(JSON.stringify(entry.detail, (_, value: unknown) => (typeof value === 'string' ? withoutNul(value) : value))) as object) : undefined;
    await this.client.adminLogEntry.create({
      data: { actor: entry.actor, role: entry.role, operator: entry.operator ?? null, action: entry.action, target, outcome: entry.outcome, ...(detail ? { detail } : {}) },
    });
  }

  /** Newest first; `before` is the cursor a previous page returned; with `operator`, only the entries of what was done for it. */
  async page(limit: number, before?: string, operator?: string): Promise<AdminLogPage> {
    const rows = await this.client.adminLogEntry.findMany({
      where: { ...(before ? { id: { lt: BigInt(before) } } : {}), ...(operator !== undefined ? { operator } : {}) },
      orderBy: { id: 'desc' },
      take: limit + 1,
    });
    const entries = rows.slice(0, limit).map((row) => ({ ...row, id: row.id.toString(), detail: (row.detail as object | null) ?? null }));
    return { entries, next: rows.length > limit ? entries[entries.length - 1]!.id : null };
  }
}

/** The entry of a mutation being resolved, until it is written. */
export class PendingEntry {
  /** Set once a write's transaction has taken the entry (outcome `ok`). */
  inTransaction = false;
  constructor(readonly entry: Omit<AdminLogRecord, 'outcome' | 'detail'>) {}
}

const pendingEntries = new AsyncLocalStorage<PendingEntry>();
/** The pending entry's key in OpenTelemetry's context, where it is kept when tracing is on (tracingContextInstalled). */
const PENDING_ENTRY = createContextKey('passport.admin-log.pending-entry');

/** Runs a mutation's resolver with its pending entry at hand for the write's transaction. */
export function withPendingEntry<T>(pending: PendingEntry | undefined, run: () => T): T {
  if (!pending) return run();
  // With tracing on, the context that already follows every request carries it: one storage, not two.
  return tracingContextInstalled() ? context.with(context.active().setValue(PENDING_ENTRY, pending), run) : pendingEntries.run(pending, run);
}

function pendingEntry(): PendingEntry | undefined {
  return tracingContextInstalled() ? (context.active().getValue(PENDING_ENTRY) as PendingEntry | undefined) : pendingEntries.getStore();
}

/**
 * The last step of a write transaction: the entry of the mutation being resolved is written in it,
 * outcome `ok`. Outside a mutation (start-up, the platform's own seeding) there is no entry, and
 * nothing is written.
 */
export async function recordInTransaction(tx: AdminLogClient): Promise<void> {
  const pending = pendingEntry();
  if (!pending) return;
  await new AdminLog(tx).record({ ...pending.entry, outcome: 'ok' });
  pending.inTransaction = true;
}
