/**
 * The national-scale builder: grows, in the platform's own database, passports with ten signed
 * events each (real Ed25519 signatures and signed log heads under the issuer's own keys, made by the
 * domain code the issuer runs: passport-signer.ts), registry records and a trust graph in bulk SQL,
 * and archive snapshots through the archive's own API. Shared by bench/national-scale.ts and the
 * tests that need large tables (test/issuer/hot-plans.test.ts, test/gateway/heap-bound.test.ts).
 *
 * Passports are loaded with COPY by worker threads (one per core by default), which sign the next
 * batch while PostgreSQL takes the previous one. A load that at least doubles a table drops its
 * indexes and constraints first and makes them again after, from the definitions PostgreSQL holds
 * (pg_get_indexdef, pg_get_constraintdef: the migrations' own), then ANALYZEs: the tables are the
 * logged tables the platform uses, never UNLOGGED copies.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import type { KeyEncryptionKeys } from '../../../lib/keys/kek.js';
import { SyntheticTrustGraph } from '../synthetic-trust-graph.js';
import { nationalPassportId, type PassportTemplate, type SignerJob, type SignerSetup } from './layout.js';
import { insertRegistryRecords, REGISTRY_KINDS } from './registry-records.js';

export { EVENTS_PER_PASSPORT, nationalIdentity, nationalPassportId, type PassportTemplate } from './layout.js';

/** One passport in SNAPSHOT_EVERY has an archive snapshot (10,000 of 1,000,000). */
export const SNAPSHOT_EVERY = 100;
/** Versions of each registry record. */
export const RECORD_VERSIONS = 2;
export const recordId = (n: number) => `nat-${String(n).padStart(7, '0')}`;
/** Registry record n's kind: the kinds in turn from n = 1 (items are 1, 5, 9, …). */
export const recordKind = (n: number) => REGISTRY_KINDS[(n - 1) % REGISTRY_KINDS.length]!;

export interface NationalBuilderOptions {
  /** The services' database, without a schema. */
  databaseUrl: string;
  /** The key-encryption keys the platform's signing keys are sealed under. */
  kek: KeyEncryptionKeys;
  /** What every passport shares with one created through the API (see templateFrom). */
  template: PassportTemplate;
  /** Makes one archive snapshot of a passport through the archive's API (none are made without it). */
  snapshot?: (passportId: string) => Promise<void>;
  /** Snapshots made at once. */
  snapshotConcurrency?: number;
  workers?: number;
  /** Passports per COPY. */
  jobSize?: number;
  log?: (line: string) => void;
}

export interface GrowthTimes {
  passportsMs: number;
  indexesMs: number;
  registryMs: number;
  trustMs: number;
  snapshotsMs: number;
  analyzeMs: number;
  totalMs: number;
}

const since = (start: number) => performance.now() - start;

/** The template of a passport row created through the API: model, class, claims and the core's issuer. */
export async function templateFrom(db: pg.Client, passportId: string): Promise<PassportTemplate> {
  const { rows } = await db.query<{
    type_ref_id: string;
    type_ref_version: number;
    config_vector: string;
    capability_class: string;
    profile_id: string | null;
    claims: string;
    core: Record<string, unknown>;
  }>('SELECT type_ref_id, type_ref_version, config_vector::text AS config_vector, capability_class, profile_id, claims::text AS claims, core FROM issuer.passport WHERE id = $1', [passportId]);
  const row = rows[0];
  if (!row) throw new Error(`no passport ${passportId} to take the template from`);
  const { passport_id, identity, created_at, ...core } = row.core;
  return {
    typeRefId: row.type_ref_id,
    typeRefVersion: row.type_ref_version,
    configVector: row.config_vector,
    capabilityClass: row.capability_class,
    profileId: row.profile_id,
    claims: row.claims,
    core,
  };
}

/**
 * Drops the indexes and constraints of `tables` (schema-qualified), runs `load`, and makes them
 * again from PostgreSQL's own definitions; foreign keys last, each checked in one pass.
 */
export async function withoutIndexes(db: pg.Client, tables: readonly string[], load: () => Promise<void>): Promise<number> {
  const { rows: constraints } = await db.query<{ relation: string; name: string; type: string; definition: string }>(
    `SELECT conrelid::regclass::text AS relation, conname AS name, contype AS type, pg_get_constraintdef(oid) AS definition
     FROM pg_constraint WHERE conrelid = ANY($1::regclass[]) AND contype IN ('p', 'u', 'f')
     ORDER BY contype = 'f' DESC`,
    [tables],
  );
  // Foreign keys that point at these tables from elsewhere depend on their keys too.
  const { rows: inbound } = await db.query<{ relation: string; name: string; type: string; definition: string }>(
    `SELECT conrelid::regclass::text AS relation, conname AS name, contype AS type, pg_get_constraintdef(oid) AS definition
     FROM pg_constraint WHERE confrelid = ANY($1::regclass[]) AND contype = 'f' AND NOT conrelid = ANY($1::regclass[])`,
    [tables],
  );
  const { rows: indexes } = await db.query<{ name: string; definition: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name, pg_get_indexdef(i.indexrelid) AS definition
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE i.indrelid = ANY($1::regclass[]) AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype IN ('p', 'u'))`,
    [tables],
  );
  for (const constraint of [...inbound, ...constraints]) await db.query(`ALTER TABLE ${constraint.relation} DROP CONSTRAINT ${pg.escapeIdentifier(constraint.name)}`);
  for (const index of indexes) await db.query(`DROP INDEX ${index.name}`);
  await load();
  const started = performance.now();
  await db.query(`SET maintenance_work_mem = '512MB'`);
  for (const constraint of constraints.filter((c) => c.type !== 'f'))
    await db.query(`ALTER TABLE ${constraint.relation} ADD CONSTRAINT ${pg.escapeIdentifier(constraint.name)} ${constraint.definition}`);
  for (const index of indexes) await db.query(index.definition);
  for (const constraint of [...constraints.filter((c) => c.type === 'f'), ...inbound]) {
    await db.query(`ALTER TABLE ${constraint.relation} ADD CONSTRAINT ${pg.escapeIdentifier(constraint.name)} ${constraint.definition}`);
  }
  await db.query('RESET maintenance_work_mem');
  return since(started);
}

export class NationalBuilder {
  /** Passports built so far (ids nationalPassportId(0 … size-1)). */
  size = 0;
  records = 0;
  readonly graph: SyntheticTrustGraph;
  readonly #db: pg.Client;
  readonly #options: NationalBuilderOptions;
  #statusIndexBase = 0;

  private constructor(db: pg.Client, options: NationalBuilderOptions) {
    this.#db = db;
    this.#options = options;
    this.graph = new SyntheticTrustGraph(db);
  }

  static async open(options: NationalBuilderOptions): Promise<NationalBuilder> {
    const db = new pg.Client({ connectionString: options.databaseUrl });
    // A connection ended by PostgreSQL's stop fails the query in flight, if any; it is no crash of its own.
    db.on('error', () => {});
    await db.connect();
    const builder = new NationalBuilder(db, options);
    const { rows } = await db.query<{ max: number | null }>('SELECT max(status_index) AS max FROM issuer.passport');
    builder.#statusIndexBase = (rows[0]!.max ?? 0) + 1;
    return builder;
  }

  /** The ids of the passports that have a snapshot. */
  snapshotted(): string[] {
    const ids: string[] = [];
    for (let n = 0; n < this.size; n += SNAPSHOT_EVERY) ids.push(nationalPassportId(n));
    return ids;
  }

  /** Record ids of a kind among those built. */
  recordIds(kind: string): string[] {
    const ids: string[] = [];
    for (let n = 1; n <= this.records; n += 1) if (recordKind(n) === kind) ids.push(recordId(n));
    return ids;
  }

  /** Grows the passports to `passports`, and the snapshots to one in SNAPSHOT_EVERY of them. */
  async growTo(passports: number): Promise<GrowthTimes> {
    const started = performance.now();
    const times: GrowthTimes = { passportsMs: 0, indexesMs: 0, registryMs: 0, trustMs: 0, snapshotsMs: 0, analyzeMs: 0, totalMs: 0 };
    const from = this.size;
    if (passports <= from) return times;
    const rebuild = passports - from >= from;
    const loadPassports = async () => {
      const loading = performance.now();
      await this.#signAndLoad(from, passports);
      times.passportsMs = since(loading);
    };
    if (rebuild) times.indexesMs = await withoutIndexes(this.#db, ['issuer.passport', 'issuer.passport_event'], loadPassports);
    else await loadPassports();
    await this.#statusLists(passports);
    this.size = passports;
    const analyzing = performance.now();
    for (const table of ['issuer.passport', 'issuer.passport_event', 'issuer.status_list']) await this.#db.query(`ANALYZE ${table}`);
    times.analyzeMs = since(analyzing);
    if (this.#options.snapshot) {
      const step = performance.now();
      await this.#snapshots(from, passports);
      await this.#db.query('ANALYZE archive.snapshot');
      await this.#db.query('ANALYZE archive.snapshot_chunk');
      times.snapshotsMs = since(step);
    }
    times.totalMs = since(started);
    return times;
  }

  /** Grows the registry to `count` records (of RECORD_VERSIONS versions) and the trust graph to `count` nodes. */
  async growRecords(count: number): Promise<{ registryMs: number; trustMs: number }> {
    let step = performance.now();
    if (count > this.records) {
      await insertRegistryRecords(this.#db, { from: this.records + 1, to: count, versions: RECORD_VERSIONS, idSql: `'nat-' || lpad(n::text, 7, '0')` });
      this.records = count;
      for (const table of ['registry.record', 'registry.record_version']) await this.#db.query(`ANALYZE ${table}`);
    }
    const registryMs = since(step);
    step = performance.now();
    if (count > this.graph.size) {
      await this.graph.growTo(count);
      for (const table of ['trust.trust_node', 'trust.delegation_edge']) await this.#db.query(`ANALYZE ${table}`);
    }
    return { registryMs, trustMs: since(step) };
  }

  async close(): Promise<void> {
    await this.#db.end();
  }

  async #snapshots(from: number, to: number): Promise<void> {
    const ids: string[] = [];
    for (let n = Math.ceil(from / SNAPSHOT_EVERY) * SNAPSHOT_EVERY; n < to; n += SNAPSHOT_EVERY) ids.push(nationalPassportId(n));
    let next = 0;
    const snapshot = this.#options.snapshot!;
    await Promise.all(
      Array.from({ length: this.#options.snapshotConcurrency ?? 4 }, async () => {
        while (next < ids.length) await snapshot(ids[next++]!);
      }),
    );
  }

  /** The status lists every new status index falls in, all clear, as a creation makes them; and the sequence past the indexes taken. */
  async #statusLists(passports: number): Promise<void> {
    const last = this.#statusIndexBase + passports - 1;
    await this.#db.query(
      `INSERT INTO issuer.status_list (purpose, list, bits, updated_at)
       SELECT purpose, list, decode(repeat('00', 16384), 'hex'), now()
       FROM unnest(ARRAY['revocation', 'suspension']) AS purpose, generate_series(0, $1::int / 131072) AS list
       ON CONFLICT DO NOTHING`,
      [last],
    );
    await this.#db.query(`SELECT setval(pg_get_serial_sequence('issuer.passport', 'status_index'), greatest($1::int, (SELECT max(status_index) FROM issuer.passport)))`, [last]);
  }

  /** Passports `from` ≤ n < `to`, signed and loaded by the workers, one job per worker at a time. */
  async #signAndLoad(from: number, to: number): Promise<void> {
    const count = Math.max(1, Math.min(this.#options.workers ?? availableParallelism(), Math.ceil((to - from) / 100)));
    const jobSize = this.#options.jobSize ?? 2_000;
    const setup: SignerSetup = {
      databaseUrl: this.#options.databaseUrl,
      kek: this.#options.kek.ids.map((id) => new Uint8Array(this.#options.kek.byId(id)!.bytes)),
      template: this.#options.template,
    };
    let next = from;
    let loaded = 0;
    const log = this.#options.log;
    let reported = performance.now();
    const runWorker = () =>
      new Promise<void>((resolve, reject) => {
        // The worker loads TypeScript through tsx's loader, registered in the worker itself (a worker does not inherit it, under node --import tsx or vitest).
        const entry = new URL('./passport-signer.ts', import.meta.url).href;
        const worker = new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, { eval: true, workerData: setup });
        let outstanding = 0;
        const give = () => {
          if (next >= to) {
            if (outstanding === 0) worker.postMessage('stop');
            return;
          }
          const job: SignerJob = { from: next, to: Math.min(to, next + jobSize), statusIndexBase: this.#statusIndexBase };
          next = job.to;
          outstanding += 1;
          worker.postMessage(job);
        };
        worker.on('message', (message: { ready?: string; built?: number; loaded?: number; error?: string }) => {
          if (message.error) {
            reject(new Error(`passport signer: ${message.error}`));
            void worker.terminate();
          } else if (message.ready) give();
          else if (message.built) give();
          else if (message.loaded) {
            outstanding -= 1;
            loaded += message.loaded;
            if (log && performance.now() - reported > 10_000) {
              reported = performance.now();
              log(`  ${(from + loaded).toLocaleString('en')} passports loaded`);
            }
            if (next >= to && outstanding === 0) worker.postMessage('stop');
          }
        });
        worker.once('error', reject);
        worker.once('exit', () => resolve());
      });
    await Promise.all(Array.from({ length: count }, runWorker));
    if (loaded !== to - from) throw new Error(`the signers loaded ${loaded} passports of ${to - from}`);
  }
}
