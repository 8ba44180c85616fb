/**
 * Large tables in seconds, for tests whose subject is size, not signatures (the plans of the hot
 * statements, the heap after many distinct passports, the cost charged for a long log): copies of one real passport, its events and
 * one real snapshot, made inside PostgreSQL with INSERT … SELECT. Each copy has its own id (the
 * national builder's nationalPassportId(n), computed here in SQL), identity and status index; its
 * events, log head and snapshot bytes are the template's, so their signatures are those of another
 * passport and do NOT verify for the copy. The benchmark builds signed passports instead (build.ts).
 */
import type pg from 'pg';

/** SQL of nationalPassportId(n) (layout.ts), over the column `n`. */
const ID_SQL = `(SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-a' || substr(h, 18, 3) || '-' || substr(h, 21, 12)
  FROM (SELECT encode(sha256(convert_to('national passport ' || n, 'UTF8')), 'hex') AS h) AS digest)`;

export interface ShapeCopies {
  /** Copies `from` ≤ n < `to`. */
  from: number;
  to: number;
  /** The passport (with its events) every copy is made of. */
  templatePassportId: string;
  /** One copy in this many gets a copy of the template snapshot (none without one). */
  snapshotEvery?: number;
  templateSnapshotId?: string;
}

/** Inserts the copies (passports, their events, a snapshot of every `snapshotEvery`-th), in one transaction, then ANALYZEs. */
export async function insertShapeCopies(db: pg.Client, copies: ShapeCopies): Promise<void> {
  const { from, to, templatePassportId } = copies;
  await db.query('BEGIN');
  try {
    const { rows } = await db.query<{ base: number }>('SELECT coalesce(max(status_index), 0) + 1 AS base FROM issuer.passport');
    const base = rows[0]!.base - from;
    await db.query(
      `INSERT INTO issuer.passport (id, identity, digital_link, granularity, type_ref_id, type_ref_version, config_vector, capability_class, profile_id, claims, status,
                                    core, log_size, frontier, last_event, log_head, empty_log_head, latest_pack, status_index, latest_pack_at, created_at, updated_at, operator)
       SELECT copy.id, copy.identity, copy.identity, t.granularity, t.type_ref_id, t.type_ref_version, t.config_vector, t.capability_class, t.profile_id, t.claims, t.status,
              jsonb_set(t.core, '{passport_id}', to_jsonb(copy.id)), t.log_size, t.frontier, t.last_event, t.log_head, t.empty_log_head, t.latest_pack, $3::int + copy.n,
              t.latest_pack_at, t.created_at, t.updated_at, t.operator
       FROM issuer.passport AS t,
            LATERAL (SELECT n, ${ID_SQL} AS id, 'https://id.gs1.org/01/09520123456788/21/NAT-' || n AS identity FROM generate_series($1::int, $2::int - 1) AS n) AS copy
       WHERE t.id = $4`,
      [from, to, base, templatePassportId],
    );
    await db.query(
      `INSERT INTO issuer.passport_event (passport_id, seq, type, recorded_at, kid, canonical, log_head)
       SELECT ${ID_SQL}, e.seq, e.type, e.recorded_at, e.kid, e.canonical, e.log_head
       FROM generate_series($1::int, $2::int - 1) AS n, issuer.passport_event AS e WHERE e.passport_id = $3
       ORDER BY e.seq, n`,
      [from, to, templatePassportId],
    );
    await db.query(`SELECT setval(pg_get_serial_sequence('issuer.passport', 'status_index'), (SELECT max(status_index) FROM issuer.passport))`);
    await db.query(
      `INSERT INTO issuer.status_list (purpose, list, bits, updated_at)
       SELECT purpose, list, decode(repeat('00', 16384), 'hex'), now()
       FROM unnest(ARRAY['revocation', 'suspension']) AS purpose, generate_series(0, (SELECT max(status_index) FROM issuer.passport) / 131072) AS list
       ON CONFLICT DO NOTHING`,
    );
    if (copies.snapshotEvery && copies.templateSnapshotId) {
      const every = copies.snapshotEvery;
      await db.query(
        `INSERT INTO archive.snapshot (id, passport_id, created_at, size, sha512, tagmanifest_sha512, payload_oxum, chunk_size, chunk_count, notarization, notary_kid)
         SELECT s.id || '-' || n, ${ID_SQL}, s.created_at, s.size, s.sha512, s.tagmanifest_sha512, s.payload_oxum, s.chunk_size, s.chunk_count, s.notarization, s.notary_kid
         FROM generate_series($1::int, $2::int - 1) AS n, archive.snapshot AS s WHERE s.id = $3 AND n % ${every} = 0`,
        [from, to, copies.templateSnapshotId],
      );
      await db.query(
        `INSERT INTO archive.snapshot_chunk (snapshot_id, seq, bytes, sha512)
         SELECT c.snapshot_id || '-' || n, c.seq, c.bytes, c.sha512
         FROM generate_series($1::int, $2::int - 1) AS n, archive.snapshot_chunk AS c WHERE c.snapshot_id = $3 AND n % ${every} = 0`,
        [from, to, copies.templateSnapshotId],
      );
    }
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK');
    throw error;
  }
  for (const table of ['issuer.passport', 'issuer.passport_event', 'issuer.status_list', 'archive.snapshot', 'archive.snapshot_chunk']) await db.query(`ANALYZE ${table}`);
}
