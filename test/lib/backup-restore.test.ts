/**
 * The backup drill (docs/OPERATIONS.md, "Backup and restore"): a platform with 200 passports (events,
 * packs; snapshots of 50) and a trust graph with delegations and revocations is backed up by
 * `bin/backup.ts` as its own process while appends go on; restored by `bin/restore.ts` into an empty
 * database and into a fresh data folder; and then checked against what was pinned before the backup:
 * every log by the offline verifier, every snapshot byte for byte, every chain extended by a new
 * append once an admin acknowledged the restore; a platform started by `bin/start.ts` on the restored
 * folder (a new cluster) serves the whole trust graph and takes the old tokens, and refuses to start
 * under another key-encryption key.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../lib/auth/tokens.js';
import { clusterDirectory } from '../../lib/db/embedded-postgres.js';
import { KeyEncryptionKeys, writeKekFile } from '../../lib/keys/kek.js';
import { logExportFrom, verifyLogExport } from '../../verifier/log.js';
import { pinsFrom, type PinSet } from '../../verifier/pins.js';
import { activatePassportBatch, createPassportBatch, type GraphqlCaller, registryModel, type RestCaller } from '../archive/support/issuer-fixture.js';
import { binCommand, type CommandOutcome } from '../support/bin-command.js';
import { drillTrustGraph } from '../support/drill-trust-graph.js';
import { sql, createTestDatabase, spendTransactionIds } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { LOOPBACK_PORTS_AT_LISTEN, startTestStack, TEST_KEK, TOKENS, type TestStack } from '../support/stack.js';
import { processEnv } from '../support/environment.js';

/** At least 200, as the drill is specified (issue 28); made, read and appended to a batch per GraphQL operation. */
const PASSPORTS = 200;
const sha512 = (bytes: Uint8Array) => createHash('sha512').update(bytes).digest('hex');

/** Runs `items` through `work`, `width` at a time. */
async function pool<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

/** `items` in runs of `size`. */
const chunks = <T>(items: readonly T[], size: number): T[][] => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/** A GraphQL operation on `stack`'s gateway that must answer without errors. */
async function graphql<T = any>(stack: TestStack, query: string, variables: Record<string, unknown>, as?: keyof typeof TOKENS): Promise<T> {
  const answer = await stack.graphql<T>(query, variables, as);
  expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
  return answer.data!;
}

interface PassportLog {
  id: string;
  events: unknown[];
  logHead: { size: number };
}

/**
 * Every passport's log as the offline verifier takes it (`passport(id) { id events logHead }`, the
 * export of the graph), read 50 passports a query: the cost limit counts each log as one of 300
 * events (docs/ONE-GRAPH.md, "What a request may cost").
 */
async function logsOf(stack: TestStack, ids: readonly string[]): Promise<PassportLog[]> {
  const logs: PassportLog[] = [];
  for (let start = 0; start < ids.length; start += 50) {
    const some = ids.slice(start, start + 50);
    const { passports } = await graphql<{ passports: (PassportLog | null)[] }>(stack, 'query Logs($ids: [ID!]!) { passports(ids: $ids) { id events logHead } }', { ids: some });
    expect(passports.map((passport) => passport?.id)).toEqual(some);
    logs.push(...(passports as PassportLog[]));
  }
  return logs;
}

let platform: TestStack;
let work: string;
let file: string;
let pins: PinSet;
const passports: { id: string; snapshot?: { id: string; sha512: string } }[] = [];
const tokensFile = () => join(work, 'tokens.json');
/** The key-encryption key file the backup's keys are sealed under, kept apart from it (docs/KEYS.md). */
const rightKek = () => join(work, 'right.kek');
/** GET /trust/graph before the backup. */
let graphBefore: unknown;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'backup-drill-'));
  platform = await startTestStack();
  const rest: RestCaller = (service, path, init) => platform.rest(service, path, init);
  const model = await registryModel(rest);

  // As a database in use has (the restored cluster counts transactions anew), then the trust graph.
  await spendTransactionIds(platform.databaseUrl, 3000);
  await drillTrustGraph(platform);
  graphBefore = (await platform.rest('trust', '/graph')).body;
  await writeKekFile(rightKek(), TEST_KEK);

  // The passports, made by one createPassports (one transaction), then each given its events and a
  // pack, a batch per operation; a snapshot of every fourth, 15 an operation (a snapshot weighs
  // 10,000 of the cost limit's 200,000: docs/ONE-GRAPH.md).
  const serials = Array.from({ length: PASSPORTS }, (_, i) => `DRILL-${process.pid}-${i}`);
  const writer: GraphqlCaller = (query, variables, as) => platform.graphql(query, variables, as);
  const ids = await createPassportBatch(writer, { serials, model });
  const made = serials.map((serial, i) => ({ serial, id: ids[i]! }));
  await pool(chunks(made, 15), 3, (batch) => activatePassportBatch(writer, batch));
  const snapshotted = ids.filter((_, i) => i % 4 === 0);
  const snapshots = (
    await pool(chunks(snapshotted, 15), 2, async (batch) => {
      const indexes = batch.map((_, i) => i);
      const made = await graphql<Record<string, { id: string; sha512: string }>>(
        platform,
        `mutation Snapshots(${indexes.map((i) => `$p${i}: ID!`).join(', ')}) { ${indexes.map((i) => `s${i}: createSnapshot(passportId: $p${i}) { id sha512 }`).join(' ')} }`,
        Object.fromEntries(batch.map((id, i) => [`p${i}`, id])),
        'writer',
      );
      return indexes.map((i) => made[`s${i}`]!);
    })
  ).flat();
  const issued = ids.map((id, i) => (i % 4 ? { id } : { id, snapshot: snapshots[i / 4]! }));
  passports.push(...issued);

  // Pins taken before the backup: the keyrings and the anchor bundle, as an operator saves them.
  const keyring = async (service: 'issuer' | 'archive' | 'trust') => (await platform.rest(service, '/keyring')).body;
  pins = pinsFrom({ keySets: [await keyring('issuer'), await keyring('archive'), await keyring('trust')], anchorBundle: (await platform.rest('trust', '/anchor-bundle')).body });
  // The data folder's tokens file, as npm start keeps it: hashes only.
  writeFileSync(
    tokensFile(),
    JSON.stringify([
      { name: 'admin', role: 'admin', sha256: hashToken(TOKENS.admin) },
      { name: 'writer', role: 'writer', sha256: hashToken(TOKENS.writer) },
    ]),
  );
}, 600_000);

afterAll(async () => {
  await platform?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const exported = async (stack: TestStack, id: string) => {
  const response = await stack.rest('issuer', `/passports/${encodeURIComponent(id)}?include_events=true`);
  expect(response.status, response.text).toBe(200);
  return response.body;
};

/** A restore's settings besides the database: the right KEK file, and a data folder of the test's own for the file of the restored passports' heads. */
const restoreEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ PASSPORT_KEK_FILE: rightKek(), PASSPORT_DATA_DIR: join(work, 'restore-folder'), ...env });

/** An inspection now, as the drill appends it. */
const INSPECTION = () => ({ eventTime: new Date().toISOString(), eventTimeZoneOffset: '+00:00', action: 'OBSERVE', bizStep: 'inspecting', epcList: ['https://id.gs1.org/01/09520123456788/21/SN-1'] });

const appendTo = (stack: TestStack, id: string) => stack.rest('issuer', `/passports/${encodeURIComponent(id)}/events`, { as: 'writer', body: { type: 'ObjectEvent', payload: INSPECTION() } });

/** The data folder restored from the backup and started by npm start (the last test). */
const freshDataDir = () => join(work, 'restored-data');
/** Its settings: the servers take the ports the system chooses as they listen; PostgreSQL needs one named ahead. */
let freshEnv: Promise<NodeJS.ProcessEnv> | undefined;
/** A key-encryption key file that is not the one the backup's keys are sealed under. */
const wrongKek = () => join(work, 'wrong.kek');

/**
 * The restore into a fresh data folder (initdb, the backup loaded, PostgreSQL stopped), then a start of
 * it under the wrong key-encryption key: processes of their own, begun once the backup is written so
 * that they run beside the tests on the restored database; the last test reads their outcome.
 */
let freshRestore: Promise<{ restoredRun: CommandOutcome; refused: CommandOutcome }> | undefined;
const restoreIntoFreshFolder = () => {
  freshRestore ??= (async () => {
    freshEnv = (async () => ({ PASSPORT_DATA_DIR: freshDataDir(), EMBEDDED_PG_PORT: String(await freePort()), ...LOOPBACK_PORTS_AT_LISTEN }))();
    const env = await freshEnv;
    const restoredRun = await binCommand('bin/restore.ts', [file], { ...env, PASSPORT_KEK_FILE: rightKek() });
    await writeKekFile(wrongKek(), KeyEncryptionKeys.generate());
    const refused = await binCommand('bin/start.ts', [], { ...env, PASSPORT_KEK_FILE: wrongKek() });
    return { restoredRun, refused };
  })();
  return freshRestore;
};

describe('a backup taken while appends go on', () => {
  let backupOutput: string;
  let appendsDuring = 0;
  let restoredUrl: string;
  let restored: TestStack;
  /** Each passport's export from the restored database, as first read: the next test appends to it. */
  const restoredCopies = new Map<string, PassportLog>();

  it('is one file, written by npm run backup while the platform keeps taking writes', async () => {
    file = join(work, 'platform.backup');
    let writing = true;
    let backingUp = true;
    const appends = pool([0, 1], 2, async (lane) => {
      for (let i = lane; writing; i += 2) {
        const response = await appendTo(platform, passports[i % PASSPORTS]!.id);
        expect(response.status, response.text).toBe(201);
        if (backingUp) appendsDuring += 1;
      }
    });
    const started = performance.now();
    const result = await binCommand('bin/backup.ts', [file], { DATABASE_URL: platform.databaseUrl, PASSPORT_TOKENS_FILE: tokensFile() });
    const seconds = (performance.now() - started) / 1000;
    backingUp = false;
    writing = false;
    await appends;
    expect(result.code, result.stderr).toBe(0);
    backupOutput = result.stdout;
    expect(backupOutput).toMatch(/^Backed up \d+ rows of the four services as of /);
    expect(backupOutput).toContain(TEST_KEK.current.id);
    // Writes were not held up by the snapshot: appends committed while it was being read.
    expect(appendsDuring).toBeGreaterThan(0);
    console.log(`drill: ${PASSPORTS} passports; backup ${(await stat(file)).size} bytes in ${seconds.toFixed(1)} s (process included), ${appendsDuring} appends meanwhile`);
    // Awaited, and its failures reported, by the last test.
    restoreIntoFreshFolder().catch(() => {});
  }, 120_000);

  it('restores into an empty database, where every log verifies against the pins and is a prefix of the live one', async () => {
    restoredUrl = await createTestDatabase({ empty: true });
    const result = await binCommand('bin/restore.ts', [file], restoreEnv({ DATABASE_URL: restoredUrl, PASSPORT_TOKENS_FILE: join(work, 'restored-tokens.json') }));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('The token hashes of the backup are in the tokens file');
    expect(JSON.parse(readFileSync(join(work, 'restored-tokens.json'), 'utf8'))).toEqual(JSON.parse(readFileSync(tokensFile(), 'utf8')));
    // The KEK is not in the backup: the restore names the one the keys need, which the KEK file holds.
    expect(result.stdout).toContain(`sealed under ${TEST_KEK.current.id}, which ${rightKek()} holds`);
    restored = await startTestStack({ databaseUrl: restoredUrl });
    const ids = passports.map((passport) => passport.id);
    const copies = await logsOf(restored, ids);
    // More passports than the output lists: each one's last sequence number is in a file, for its clients.
    const headsFile = /is in (\S+\.csv) \(passport_id, log_size, last_seq\)\.$/m.exec(result.stdout)![1]!;
    const heads = readFileSync(headsFile, 'utf8').trim().split('\n');
    expect(heads[0]).toBe('passport_id,log_size,last_seq');
    expect(heads.slice(1).sort()).toEqual(copies.map((copy) => `${copy.id},${copy.events.length},${copy.events.length - 1}`).sort());
    const lives = await logsOf(platform, ids);
    for (const [index, copy] of copies.entries()) {
      restoredCopies.set(copy.id, copy);
      const report = await verifyLogExport(logExportFrom(copy), pins);
      expect(report.verdict, JSON.stringify(report.findings.filter((finding) => finding.status !== 'ok'))).toBe('valid');
      expect(copy.events.length).toBeGreaterThanOrEqual(2);
      expect(copy.events).toEqual(lives[index]!.events.slice(0, copy.events.length));
    }
    // The export of the graph is the REST export's log and head, as an operator downloads it.
    const downloaded = await exported(restored, ids[0]!);
    expect({ events: downloaded.log, logHead: downloaded.log_head }).toEqual({ events: copies[0]!.events, logHead: copies[0]!.logHead });
  }, 180_000);

  it('serves every snapshot with the same bytes (SHA-512) as before the backup', async () => {
    const snapshots = passports.flatMap((passport) => (passport.snapshot ? [passport.snapshot] : []));
    expect(snapshots).toHaveLength(PASSPORTS / 4);
    await pool(snapshots, 6, async (snapshot) => {
      const response = await fetch(`${restored.base('archive')}/snapshots/${encodeURIComponent(snapshot.id)}`);
      expect(response.status).toBe(200);
      expect(sha512(new Uint8Array(await response.arrayBuffer()))).toBe(snapshot.sha512);
    });
  }, 120_000);

  it('extends every chain once an admin acknowledges the restore: a new event appended after it verifies and moves the head on', async () => {
    // Appends are held until then (test/lib/restore-into-new-cluster.test.ts has the hold itself).
    const acknowledged = await graphql(restored, 'mutation { acknowledgeRestore { passports } }', {}, 'admin');
    expect(acknowledged.acknowledgeRestore).toEqual([{ passports: PASSPORTS }]);
    // One ObjectEvent appended to each passport, 50 aliased appends per operation.
    const ids = passports.map((passport) => passport.id);
    await pool(chunks(ids, 50), 2, async (batch) => {
      const indexes = batch.map((_, i) => i);
      const appended = await graphql<Record<string, { logHead: { size: number } }>>(
        restored,
        `mutation Appends($event: JSONObject!, ${indexes.map((i) => `$p${i}: ID!`).join(', ')}) { ${indexes.map((i) => `a${i}: appendPassportEvent(passportId: $p${i}, type: "ObjectEvent", payload: $event) { logHead }`).join(' ')} }`,
        { event: INSPECTION(), ...Object.fromEntries(batch.map((id, i) => [`p${i}`, id])) },
        'writer',
      );
      for (const [i, id] of batch.entries()) expect(appended[`a${i}`]!.logHead.size).toBe(restoredCopies.get(id)!.events.length + 1);
    });
    for (const after of await logsOf(restored, ids)) {
      // As the previous test read it: nothing was written to the restored database since.
      const before = restoredCopies.get(after.id)!;
      expect(after.events.length).toBe(before.events.length + 1);
      expect(after.events.slice(0, -1)).toEqual(before.events);
      expect(after.logHead.size).toBe(before.events.length + 1);
      const report = await verifyLogExport(logExportFrom(after), pins);
      expect(report.verdict).toBe('valid');
    }
    await restored.stop();
  }, 180_000);

  it('is refused by a database that already holds the schemas, unless --force', async () => {
    const result = await binCommand('bin/restore.ts', [file], restoreEnv({ DATABASE_URL: restoredUrl }));
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/already holds schema .*add --force to replace them\.$/m);
    // --force replaces the schemas: the appends made on the restored database are gone again.
    const appended = await sql<{ n: number }>(restoredUrl, 'SELECT count(*)::int AS n FROM issuer.passport_event');
    const forced = await binCommand('bin/restore.ts', [file, '--force'], restoreEnv({ DATABASE_URL: restoredUrl }));
    expect(forced.code, forced.stderr).toBe(0);
    const replaced = await sql<{ n: number }>(restoredUrl, 'SELECT count(*)::int AS n FROM issuer.passport_event');
    expect(replaced.rows[0]!.n).toBe(appended.rows[0]!.n - PASSPORTS);
  }, 60_000);

  it('is refused whole when truncated, writing nothing', async () => {
    const cut = join(work, 'truncated.backup');
    writeFileSync(cut, readFileSync(file));
    await truncate(cut, (await stat(cut)).size - 200);
    const target = await createTestDatabase({ empty: true });
    const result = await binCommand('bin/restore.ts', [cut], { DATABASE_URL: target });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/^\S+ is not a whole backup \(.*\): use an intact copy of the file\.$/);
    expect((await sql(target, "SELECT nspname FROM pg_namespace WHERE nspname IN ('trust', 'registry', 'issuer', 'archive')")).rowCount).toBe(0);
  }, 60_000);
});

describe('a restore into a fresh data folder, started by npm start', () => {
  afterAll(async () => {
    // The restore (begun with the backup) may have placed its cluster before it failed.
    await freshRestore?.catch(() => {});
    if (!freshEnv) return;
    const cluster = dirname(await clusterDirectory(freshDataDir()));
    if (cluster !== freshDataDir()) await rm(cluster, { recursive: true, force: true });
  });

  it('refuses to start under another key-encryption key, in one sentence, and starts under the right one with the old tokens and the whole trust graph', async () => {
    const { restoredRun, refused } = await restoreIntoFreshFolder();
    const env = await freshEnv!;
    expect(restoredRun.code, restoredRun.stderr).toBe(0);

    expect(refused.code).toBe(1);
    const sentence = refused.stderr.trim();
    expect(sentence.split('\n')).toHaveLength(1);
    expect(sentence).toMatch(
      new RegExp(`sealed under key-encryption key ${TEST_KEK.current.id}, which ${wrongKek()} does not hold .*: start with the key-encryption key file they were sealed under\\.$`),
    );

    const child = spawn(process.execPath, ['bin/run.mjs', 'bin/start.ts'], { env: processEnv({ ...env, PASSPORT_KEK_FILE: rightKek() }), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await Promise.race([
        new Promise<void>((resolve) => {
          const check = setInterval(() => {
            if (!output.includes('Passport services are running.')) return;
            clearInterval(check);
            resolve();
          }, 100);
        }),
        exited.then((code) => Promise.reject(new Error(`npm start ended (${code}): ${output}`))),
      ]);
      const base = (service: string) => new RegExp(`^ {2}${service} REST +(\\S+)`, 'm').exec(output)![1]!;
      const issuer = base('issuer');
      // A new cluster, whose transaction counter is behind the one that wrote the graph: all of it at once.
      expect(await (await fetch(`${base('trust')}/graph`)).json()).toEqual(graphBefore);
      const append = (token: string) =>
        fetch(`${issuer}/passports/${encodeURIComponent(passports[0]!.id)}/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'ObjectEvent', payload: INSPECTION() }),
        });
      expect((await append(TOKENS.writer)).status).toBe(503);
      const acknowledged = await fetch(`${issuer}/admin/restore/acknowledgement`, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.admin}` } });
      expect(acknowledged.status).toBe(200);
      expect((await append(TOKENS.writer)).status).toBe(201);
      expect((await append('not-a-token-of-this-platform')).status).toBe(401);
      expect((await fetch(`${issuer}/admin/log`, { headers: { authorization: `Bearer ${TOKENS.admin}` } })).status).toBe(200);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  }, 240_000);
});
