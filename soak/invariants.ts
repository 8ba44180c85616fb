/**
 * What must hold after crashes and races, checked as a verifier would: every acknowledged event is in
 * its passport's log with the signature it was acknowledged with, the log is contiguous and verifies
 * under the pinned keys, and every snapshot is whole (in the database) and verifies (its bytes).
 */
import pg from 'pg';
import { logExportFrom, verifyLogExport } from '../verifier/log.js';
import type { PinSet } from '../verifier/pins.js';
import { verifySnapshot } from '../verifier/snapshot.js';
import type { FailureLog } from './report.js';
import type { RestClient } from '../test/support/rest-client.js';

/** Acknowledged events: passport id → seq → signature, as the 201 answers gave them. */
export class Acknowledged {
  readonly events = new Map<string, Map<number, string>>();
  count = 0;

  /** Records a 201 answer of POST /passports/{id}/events; a second answer for one seq is a failure. */
  record(passportId: string, answer: { event: { seq: number; signature: string } }, failures: FailureLog): void {
    const log = this.events.get(passportId) ?? new Map<number, string>();
    this.events.set(passportId, log);
    if (log.has(answer.event.seq)) failures.add(`${passportId}: seq ${answer.event.seq} acknowledged twice`);
    log.set(answer.event.seq, answer.event.signature);
    this.count += 1;
  }
}

export interface LogAudit {
  passports: number;
  eventsInLogs: number;
  acknowledgedMissing: number;
  logsInvalid: number;
}

/** Reads back every passport of `acknowledged` and checks each log against what was acknowledged. */
export async function auditLogs(client: RestClient, pins: PinSet, acknowledged: Acknowledged, failures: FailureLog, passportIds: Iterable<string> = acknowledged.events.keys()): Promise<LogAudit> {
  const audit: LogAudit = { passports: 0, eventsInLogs: 0, acknowledgedMissing: 0, logsInvalid: 0 };
  for (const passportId of passportIds) {
    const passport = await client.passportWithEvents(passportId);
    audit.passports += 1;
    audit.eventsInLogs += passport.log.length;
    passport.log.forEach((event, index) => {
      if (event.seq !== index) failures.add(`${passportId}: event at position ${index} has seq ${String(event.seq)}`);
    });
    for (const [seq, signature] of acknowledged.events.get(passportId) ?? []) {
      if (passport.log[seq]?.signature !== signature) {
        audit.acknowledgedMissing += 1;
        failures.add(`${passportId}: acknowledged event ${seq} is ${passport.log[seq] ? 'different' : 'missing'} in the log of ${passport.log.length}`);
      }
    }
    const report = await verifyLogExport(logExportFrom(passport), pins);
    if (report.verdict !== 'valid') {
      audit.logsInvalid += 1;
      const finding = report.findings.find((item) => item.status !== 'ok' && item.status !== 'info');
      failures.add(`${passportId}: log ${report.verdict}: ${finding ? `${finding.check} ${finding.message}` : ''}`);
    }
  }
  return audit;
}

export interface SnapshotAudit {
  snapshots: number;
  acknowledgedMissing: number;
  halfWritten: number;
  invalid: number;
}

/**
 * Every snapshot the archive lists is whole in the database (its chunks add up to its size, none is
 * without its snapshot row) and its bytes verify with their notarization; every acknowledged one is listed.
 */
export async function auditSnapshots(client: RestClient, pins: PinSet, databaseUrl: string, acknowledgedIds: ReadonlySet<string>, failures: FailureLog): Promise<SnapshotAudit> {
  const listed = await client.snapshots();
  const audit: SnapshotAudit = { snapshots: listed.length, acknowledgedMissing: 0, halfWritten: 0, invalid: 0 };
  const ids = new Set(listed.map((snapshot) => snapshot.id));
  for (const id of acknowledgedIds) {
    if (!ids.has(id)) {
      audit.acknowledgedMissing += 1;
      failures.add(`acknowledged snapshot ${id} is not listed`);
    }
  }
  const database = new pg.Client({ connectionString: databaseUrl });
  await database.connect();
  try {
    const broken = await database.query<{ id: string; why: string }>(`
      SELECT s.id, 'chunks do not add up to the stored size' AS why
        FROM archive.snapshot s
        LEFT JOIN (SELECT snapshot_id, count(*) AS n, sum(length(bytes)) AS bytes FROM archive.snapshot_chunk GROUP BY snapshot_id) c ON c.snapshot_id = s.id
       WHERE coalesce(c.n, 0) <> s.chunk_count OR coalesce(c.bytes, 0) <> s.size
      UNION ALL
      SELECT DISTINCT snapshot_id, 'chunks without a snapshot' FROM archive.snapshot_chunk WHERE snapshot_id NOT IN (SELECT id FROM archive.snapshot)`);
    audit.halfWritten = broken.rowCount ?? 0;
    for (const row of broken.rows) failures.add(`snapshot ${row.id}: ${row.why}`);
  } finally {
    await database.end();
  }
  for (const snapshot of listed) {
    const archive = await client.bytes(`/archive/snapshots/${encodeURIComponent(snapshot.id)}`);
    const notarization = await client.expect(200, 'GET', `/archive/snapshots/${encodeURIComponent(snapshot.id)}/notarization`);
    const report = await verifySnapshot(archive, notarization, pins);
    if (report.verdict !== 'valid') {
      audit.invalid += 1;
      const finding = report.findings.find((item) => item.status === 'failed' || item.status === 'not_checked');
      failures.add(`snapshot ${snapshot.id}: ${report.verdict}: ${finding ? `${finding.check} ${finding.message}` : ''}`);
    }
  }
  return audit;
}

/** A kind of change and the admin-log entries that must match it one for one. */
export interface EntryCheck {
  service: string;
  action: string;
  /** SQL counting the stored changes of this kind. */
  changes: string;
}

/**
 * Every stored change has exactly one admin-log entry with outcome ok, and every such entry its
 * change: the two are written in one transaction, so not even a SIGKILL between them can part them.
 */
export async function auditAdminLogs(databaseUrl: string, checks: readonly EntryCheck[], failures: FailureLog): Promise<{ changes: number; mismatched: number }> {
  const database = new pg.Client({ connectionString: databaseUrl });
  await database.connect();
  let changes = 0;
  let mismatched = 0;
  try {
    for (const check of checks) {
      const { rows } = await database.query<{ changes: string; entries: string }>(
        `SELECT (${check.changes}) AS changes, (SELECT count(*) FROM "${check.service}".admin_log WHERE action = $1 AND outcome = 'ok') AS entries`,
        [check.action],
      );
      const counted = { changes: Number(rows[0]!.changes), entries: Number(rows[0]!.entries) };
      changes += counted.changes;
      if (counted.changes !== counted.entries) {
        mismatched += 1;
        failures.add(`${check.service}: ${counted.changes} changes stored, ${counted.entries} ${check.action} entries with outcome ok`);
      }
    }
  } finally {
    await database.end();
  }
  return { changes, mismatched };
}
