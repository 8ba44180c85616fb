/**
 * Snapshots of every table of every service schema (row count and an MD5 of the contents), to show
 * that refused or malformed requests change nothing.
 */
import pg from 'pg';
import { SERVICES } from '../../lib/config/services.js';

export interface TableState {
  rows: number;
  md5: string;
}

/** `schema.table` → its state. */
export type TablesSnapshot = Map<string, TableState>;

export interface TableWatcher {
  snapshot(): Promise<TablesSnapshot>;
  /** Admin-log rows of every service with an id above those in `since`, for checking their outcomes. */
  adminLogSince(since: TablesSnapshot): Promise<AdminLogRow[]>;
  close(): Promise<void>;
}

export interface AdminLogRow {
  service: string;
  action: string;
  target: string | null;
  outcome: string;
  role: string;
  /** How many refusals the entry stands for: `detail.count` of a counted one, else 1 (lib/audit/refusal-log.ts). */
  count: number;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Every table of `schemas` (default: the services'; add `identity` for operators and tokens). */
export async function watchTables(databaseUrl: string, schemas: readonly string[] = SERVICES): Promise<TableWatcher> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const listed = await client.query<{ schema: string; table: string }>(
    `SELECT table_schema AS schema, table_name AS table FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema = ANY($1) ORDER BY 1, 2`,
    [[...schemas]],
  );
  const tables = listed.rows;
  if (tables.length === 0) throw new Error(`no tables in the schemas ${schemas.join(', ')}`);
  // The highest admin-log id per service, kept beside the hashes so new entries can be read back.
  const maxIds = new WeakMap<TablesSnapshot, Map<string, string>>();
  return {
    async snapshot() {
      const result: TablesSnapshot = new Map();
      const ids = new Map<string, string>();
      // One repeatable-read transaction: every table as of the same instant.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      try {
        for (const { schema, table } of tables) {
          const name = `${quote(schema)}.${quote(table)}`;
          const row = await client.query<{ rows: number; md5: string | null }>(`SELECT count(*)::int AS rows, md5(string_agg(t::text, '' ORDER BY t::text)) AS md5 FROM ${name} t`);
          result.set(`${schema}.${table}`, { rows: row.rows[0]!.rows, md5: row.rows[0]!.md5 ?? 'empty' });
          if (table === 'admin_log') {
            const max = await client.query<{ max: string | null }>(`SELECT max(id)::text AS max FROM ${name}`);
            ids.set(schema, max.rows[0]!.max ?? '0');
          }
        }
      } finally {
        await client.query('COMMIT');
      }
      maxIds.set(result, ids);
      return result;
    },
    async adminLogSince(since) {
      const ids = maxIds.get(since);
      if (!ids) throw new Error('not a snapshot of this watcher');
      const entries = [];
      for (const [service, max] of ids) {
        const rows = await client.query<Omit<AdminLogRow, 'service'>>(
          `SELECT action, target, outcome, role, coalesce((detail->>'count')::int, 1) AS count FROM ${quote(service)}.admin_log WHERE id > $1::bigint ORDER BY id`,
          [max],
        );
        entries.push(...rows.rows.map((row) => ({ service, ...row })));
      }
      return entries;
    },
    close: () => client.end(),
  };
}

/** Tables whose rows or contents differ, each as `schema.table: rows a → b` (and whether the contents changed). */
export function changedTables(before: TablesSnapshot, after: TablesSnapshot, ignore: readonly string[] = []): string[] {
  const changes: string[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    if (ignore.includes(name)) continue;
    const a = before.get(name);
    const b = after.get(name);
    if (!a || !b) changes.push(`${name}: ${a ? 'dropped' : 'created'}`);
    else if (a.rows !== b.rows || a.md5 !== b.md5) changes.push(`${name}: ${a.rows} → ${b.rows} rows${a.rows === b.rows ? ', contents changed' : ''}`);
  }
  return changes;
}

/** The admin-log tables (`<service>.admin_log`). */
export const ADMIN_LOG_TABLES = SERVICES.map((service) => `${service}.admin_log`);
