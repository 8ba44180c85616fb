/**
 * Registry records in bulk: every record and its versions in two INSERT … SELECT statements,
 * generated inside PostgreSQL, as a register of that size would have been filled over years (shared
 * by bench/registry.ts and the national-scale builder).
 */
import type pg from 'pg';

/** The kinds records are spread over, round robin from record 1. */
export const REGISTRY_KINDS = ['item', 'service', 'cross_register_mapping', 'generic'] as const;

export interface RegistryRecordRange {
  /** Records `from` ≤ n ≤ `to`. */
  from: number;
  to: number;
  versions: number;
  /** SQL of record n's id, over the column `n` (e.g. `'bench-' || lpad(n::text, 6, '0')`). */
  idSql: string;
}

/** Inserts the records of the range and all their versions, in one transaction. */
export async function insertRegistryRecords(client: pg.Client, { from, to, versions, idSql }: RegistryRecordRange): Promise<void> {
  const kinds = `(ARRAY[${REGISTRY_KINDS.map((kind) => `'${kind}'`).join(',')}])[((n - 1) % ${REGISTRY_KINDS.length}) + 1]`;
  await client.query('BEGIN');
  try {
    await client.query(`
      INSERT INTO registry.record (id, kind, operator, current_version, status, created_at, updated_at)
      SELECT ${idSql}, ${kinds}, 'default', ${versions}, 'active',
             now() - interval '${versions} days', now() - interval '1 day'
      FROM generate_series(${from}, ${to}) AS n`);
    await client.query(`
      INSERT INTO registry.record_version (id, version, kind, status, body, created_at, supersedes, scoped)
      SELECT ${idSql}, v, ${kinds}, 'active',
             json_build_object(
               'title', 'Benchmark record ' || n,
               'description', 'A record of the benchmark register, version ' || v || ', with a body of realistic size.',
               'code', 'B' || n, 'revision', v,
               'links', json_build_array(json_build_object('rel', 'related', 'href', 'https://register.example/records/' || n)),
               'attributes', json_build_object('category', 'battery.ev', 'jurisdiction', 'EU', 'tags', json_build_array('bench', 'v' || v))
             ),
             now() - make_interval(days => ${versions} - v + 1), CASE WHEN v = 1 THEN NULL ELSE v - 1 END, false
      FROM generate_series(${from}, ${to}) AS n, generate_series(1, ${versions}) AS v`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
