/**
 * The backup drill as someone from outside ran it (issue 42): a platform whose database has seen
 * thousands of transactions, as one in use has, with a trust graph (nodes, one with a second document,
 * delegations, a revocation) and passports; backed up by `bin/backup.ts` with links planted where its
 * staging file would be; restored by `bin/restore.ts` into a brand-new embedded cluster (a fresh data
 * folder, whose transaction counter starts low), refused first under another key-encryption key; and,
 * by pg_dump and pg_restore of the server's version, into another server (Debian's PostgreSQL 15,
 * whose client tools match it). On the restored platforms the API tokens issued before take effect as
 * before (a revoked one stays refused), GET /trust/graph lists every node, edge and
 * revocation at once (after pg_restore, as the trust service adopts the rows at its start), and appends
 * wait for an admin to acknowledge the restore (after pg_restore, once `--mark-restored` records it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { lstat, mkdtemp, readdir, rm, stat, symlink, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../lib/auth/tokens.js';
import { clusterDirectory, startEmbeddedPostgres, type RunningPostgres } from '../../lib/db/embedded-postgres.js';
import { KeyEncryptionKeys, writeKekFile } from '../../lib/keys/kek.js';
import { issuePassport, registryModel, type RestCaller } from '../archive/support/issuer-fixture.js';
import { binCommand } from '../support/bin-command.js';
import { createTestDatabase, spendTransactionIds, sql } from '../support/database.js';
import { DebianPostgres } from '../support/debian-postgres.js';
import { drillTrustGraph } from '../support/drill-trust-graph.js';
import { freePort } from '../support/free-port.js';
import { startTestStack, TEST_KEK, TOKENS, type TestStack } from '../support/stack.js';
import { newKey } from '../trust/support.js';

/** Transactions the source database has run before the graph is written: a fresh cluster's counter (about 750 after initdb and a restore) stays far below them. */
const TRANSACTIONS_BEFORE = 3000;

/** The schemas docs/OPERATIONS.md has pg_dump take: the four services' and the identity store's (its operators and issued API tokens). */
const DUMPED_SCHEMAS = ['trust', 'registry', 'issuer', 'archive', 'identity'];

/** Links planted for the process ids after the test's own: the backup process gets one of them (the shared machine starts other processes meanwhile). */
const PLANTED_PIDS = 5000;

const INSPECTION = () => ({ eventTime: new Date().toISOString(), eventTimeZoneOffset: '+00:00', action: 'OBSERVE', bizStep: 'inspecting', epcList: ['https://id.gs1.org/01/09520123456788/21/SN-1'] });

/** What a restored platform is checked against: the graph as GET /trust/graph sent it before the backup, the passports, and API tokens issued (one revoked). */
interface Pinned {
  graph: { nodes: { id: string }[]; edges: unknown[]; revocations: unknown[] };
  passports: { id: string; events: number }[];
  tokens: { live: string; revoked: string; listed: unknown[] };
}

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** Two API tokens the platform admin issues to the operator `default` (identity store, docs/OPERATORS.md), one then revoked, and their list. */
async function issuedTokens(stack: TestStack): Promise<Pinned['tokens']> {
  const issue = async (label: string) => {
    const issued = await stack.rest('issuer', '/admin/tokens', { as: 'admin', body: { operator: 'default', role: 'admin', label } });
    expect(issued.status, issued.text).toBe(201);
    return issued.body as { id: string; secret: string };
  };
  const live = await issue('drill admin');
  const revoked = await issue('drill admin, revoked');
  expect((await stack.rest('issuer', `/admin/tokens/${revoked.id}/revocation`, { method: 'POST', headers: bearer(live.secret) })).status).toBe(200);
  const listed = await stack.rest('issuer', '/admin/tokens', { headers: bearer(live.secret) });
  expect(listed.status, listed.text).toBe(200);
  return { live: live.secret, revoked: revoked.secret, listed: listed.body.tokens };
}

/** The restored platform takes the issued token and lists the tokens as before; the revoked one stays refused. */
async function expectIssuedTokens(restored: TestStack, pinned: Pinned): Promise<void> {
  const listed = await restored.rest('issuer', '/admin/tokens', { headers: bearer(pinned.tokens.live) });
  expect(listed.status, listed.text).toBe(200);
  expect(listed.body.tokens).toEqual(pinned.tokens.listed);
  expect((await restored.rest('issuer', '/admin/tokens', { headers: bearer(pinned.tokens.revoked) })).status).toBe(401);
}

/** The drill's data on a platform: the trust graph, three passports of three events each, and issued API tokens. */
async function drillData(stack: TestStack): Promise<Pinned> {
  await drillTrustGraph(stack);
  const rest: RestCaller = (service, path, init) => stack.rest(service, path, init);
  const model = await registryModel(rest);
  const passports = [];
  for (let i = 0; i < 3; i += 1) passports.push(await issuePassport(rest, { traceEvents: 2, serial: `R${process.pid}-${Date.now() % 1e9}-${i}`, model }));
  const graph = await stack.rest('trust', '/graph');
  expect(graph.status).toBe(200);
  expect(graph.body.nodes.map((node: { id: string }) => node.id)).toEqual(expect.arrayContaining(['drill-root', 'drill-authority', 'drill-issuer-0', 'drill-issuer-1', 'drill-issuer-2']));
  // The drill's four delegations, beside the platform's own to the default operator's node (issue 44, docs/OPERATORS.md).
  const edges = graph.body.edges as { iss: string; sub: string }[];
  expect(edges.filter((edge) => edge.iss.startsWith('drill-'))).toHaveLength(4);
  expect(edges.filter((edge) => !edge.iss.startsWith('drill-')).map((edge) => [edge.iss, edge.sub])).toEqual([['platform', 'operator:default']]);
  expect(graph.body.revocations.length).toBeGreaterThanOrEqual(1);
  return { graph: graph.body, passports, tokens: await issuedTokens(stack) };
}

/** The restored platform as a client meets it: the whole graph at once, the same as before the backup, and the revocations of a node. */
async function expectWholeGraph(restored: TestStack, pinned: Pinned): Promise<void> {
  const graph = await restored.rest('trust', '/graph');
  expect(graph.status).toBe(200);
  expect(graph.body).toEqual(pinned.graph);
  const revocations = await restored.rest('trust', '/revocations?subject=drill-issuer-1');
  expect(revocations.status).toBe(200);
  expect(revocations.body.revocations).toHaveLength(1);
}

/** A node changed after the restore: listed with its new document. */
async function expectNodeChangeListed(restored: TestStack): Promise<void> {
  const [authority] = (await restored.rest('trust', '/graph')).body.nodes.filter((node: { id: string }) => node.id === 'drill-authority');
  const added = { ...(await newKey()).jwk, iat: Math.floor(Date.now() / 1000) - 60 };
  expect((await restored.rest('trust', '/nodes', { as: 'admin', body: { id: 'drill-authority', keys: [added] } })).status).toBe(200);
  const after = (await restored.rest('trust', '/graph')).body.nodes.find((node: { id: string }) => node.id === 'drill-authority');
  expect(after.keys.map((key: { kid: string }) => key.kid)).toEqual([...authority.keys.map((key: { kid: string }) => key.kid), added.kid]);
}

const appendTo = (stack: TestStack, id: string) => stack.rest('issuer', `/passports/${encodeURIComponent(id)}/events`, { as: 'writer', body: { type: 'ObjectEvent', payload: INSPECTION() } });

let work: string;
let platform: TestStack;
let pinned: Pinned;
let file: string;
let rightKek: string;
const tokensFile = () => join(work, 'tokens.json');

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'restore-new-cluster-'));
  platform = await startTestStack();
  await spendTransactionIds(platform.databaseUrl, TRANSACTIONS_BEFORE);
  pinned = await drillData(platform);
  writeFileSync(tokensFile(), JSON.stringify([{ name: 'admin', role: 'admin', sha256: hashToken(TOKENS.admin) }]));
  rightKek = join(work, 'right.kek');
  await writeKekFile(rightKek, TEST_KEK);
}, 240_000);

afterAll(async () => {
  await platform?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('npm run backup', () => {
  it('writes its file where links planted for the next process ids and at the file itself cannot redirect it: a file of its own, mode 0600', async () => {
    file = join(work, 'platform.backup');
    const staged = join(work, 'victim-of-the-staging-file');
    const renamed = join(work, 'victim-of-the-rename');
    writeFileSync(staged, 'not the backup’s\n');
    writeFileSync(renamed, 'not the backup’s either\n');
    const { pid } = spawnSync('true');
    const planted = Array.from({ length: PLANTED_PIDS }, (_, i) => `${file}.${pid + 1 + i}.partial`);
    await Promise.all(planted.map((link) => symlink(staged, link)));
    await symlink(renamed, file);

    const result = await binCommand('bin/backup.ts', [file], { DATABASE_URL: platform.databaseUrl, PASSPORT_TOKENS_FILE: tokensFile() });
    expect(result.code, result.stderr).toBe(0);
    expect((await lstat(file)).isFile()).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(readFileSync(staged, 'utf8')).toBe('not the backup’s\n');
    expect(readFileSync(renamed, 'utf8')).toBe('not the backup’s either\n');
    await Promise.all(planted.map((link) => unlink(link)));
    // Nothing of the staging left behind.
    expect((await readdir(work)).filter((name) => name.includes('.partial'))).toEqual([]);
  }, 120_000);
});

describe('npm run restore into a fresh data folder', () => {
  const ports = async () => ({ EMBEDDED_PG_PORT: String(await freePort()) });

  it('is refused under another key-encryption key, in one sentence naming the one the backup needs, and leaves nothing behind', async () => {
    const wrong = join(work, 'wrong.kek');
    await writeKekFile(wrong, KeyEncryptionKeys.generate());
    for (const kek of [wrong, join(work, 'absent.kek')]) {
      const dataDir = join(work, 'refused-data');
      const refused = await binCommand('bin/restore.ts', [file], { PASSPORT_DATA_DIR: dataDir, PASSPORT_KEK_FILE: kek, ...(await ports()) });
      expect(refused.code).toBe(1);
      const sentence = refused.stderr.trim();
      expect(sentence.split('\n')).toHaveLength(1);
      expect(sentence).toMatch(
        new RegExp(
          `^The backup's signing keys are sealed under key-encryption key ${TEST_KEK.current.id}, which (${wrong} does not hold|no file at ${kek} holds): put the key-encryption key file kept apart from the backups there \\(or set PASSPORT_KEK_FILE to it\\) and restore again\\.$`,
        ),
      );
      // No cluster made, no tokens file written.
      expect(existsSync(dataDir)).toBe(false);
    }
    // Into a database of one's own: it stays empty.
    const database = await createTestDatabase({ empty: true });
    const refused = await binCommand('bin/restore.ts', [file], { DATABASE_URL: database, PASSPORT_KEK_FILE: wrong, PASSPORT_DATA_DIR: join(work, 'refused-data') });
    expect([refused.code, refused.stderr.trim().split('\n').length]).toEqual([1, 1]);
    expect((await sql(database, "SELECT nspname FROM pg_namespace WHERE nspname IN ('trust', 'registry', 'issuer', 'archive')")).rowCount).toBe(0);
  }, 60_000);

  describe('under the right key-encryption key', () => {
    let dataDir: string;
    let output: string;
    let postgres: RunningPostgres;
    let restored: TestStack;

    beforeAll(async () => {
      dataDir = join(work, 'restored-data');
      const env = { PASSPORT_DATA_DIR: dataDir, PASSPORT_KEK_FILE: rightKek, ...(await ports()) };
      const result = await binCommand('bin/restore.ts', [file], env);
      expect(result.code, result.stderr).toBe(0);
      output = result.stdout;
      postgres = await startEmbeddedPostgres({ dataDir, port: Number(env.EMBEDDED_PG_PORT) });
      restored = await startTestStack({ databaseUrl: postgres.url });
    }, 180_000);

    afterAll(async () => {
      await restored?.stop();
      await postgres?.stop();
      if (!dataDir) return;
      // As root the cluster is placed outside the data folder, for the postgres user to reach (README, "as root").
      const cluster = dirname(await clusterDirectory(dataDir));
      if (cluster !== dataDir) await rm(cluster, { recursive: true, force: true });
    });

    it('lists every node, edge and revocation of GET /trust/graph at once, as before the backup', async () => {
      // The restored cluster's counter is far below the transactions that wrote the rows.
      const counter = await sql<{ xid: string }>(postgres.url, 'SELECT pg_current_xact_id()::text AS xid');
      expect(Number(counter.rows[0]!.xid)).toBeLessThan(TRANSACTIONS_BEFORE);
      await expectWholeGraph(restored, pinned);
    });

    it('lists a node changed after the restore with its new document', () => expectNodeChangeListed(restored));

    it('takes the API tokens issued before the backup, lists them as before, and still refuses the revoked one', () => expectIssuedTokens(restored, pinned));

    it('names the last sequence number of each restored passport, and holds appends (503 RESTORE_UNACKNOWLEDGED) until an admin acknowledges the restore', async () => {
      expect(output).toContain('Appends are held (503 RESTORE_UNACKNOWLEDGED) until an admin acknowledges the restore');
      for (const passport of pinned.passports) expect(output).toContain(`  ${passport.id}  ${passport.events - 1}\n`);

      const [first] = pinned.passports;
      const held = await appendTo(restored, first!.id);
      expect(held.status).toBe(503);
      expect(held.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(held.headers.get('retry-after')).toBe('60');
      expect(held.body).toMatchObject({ code: 'RESTORE_UNACKNOWLEDGED', retry_after: 60 });
      expect(held.body.detail).toMatch(
        /^The platform was restored at .* to a backup as of .*, and appends are held until an admin acknowledges the restore \(POST \/admin\/restore\/acknowledgement\)/,
      );
      const graphql = await restored.graphql('mutation Append($id: ID!) { appendPassportEvent(passportId: $id, type: "ObjectEvent", payload: {}) { logHead } }', { id: first!.id }, 'writer');
      expect(graphql.errors?.[0]?.extensions?.code).toBe('RESTORE_UNACKNOWLEDGED');

      const acknowledge = (as: 'admin' | 'writer') => restored.rest('issuer', '/admin/restore/acknowledgement', { method: 'POST', as });
      expect((await acknowledge('writer')).status).toBe(403);
      const acknowledged = await acknowledge('admin');
      expect(acknowledged.status, acknowledged.text).toBe(200);
      expect(acknowledged.body.acknowledged).toEqual([
        expect.objectContaining({ backup: file, passports: 3, acknowledged_by: 'test-admin', snapshot_at: expect.stringMatching(/^\d{4}-/), acknowledged_at: expect.stringMatching(/^\d{4}-/) }),
      ]);
      // Acknowledged once: again, none.
      const again = await acknowledge('admin');
      expect([again.status, again.body]).toEqual([200, { acknowledged: [] }]);

      const appended = await appendTo(restored, first!.id);
      expect(appended.status, appended.text).toBe(201);
      expect(appended.body.event.seq).toBe(first!.events);
      const log = await restored.rest('issuer', '/admin/log', { as: 'admin' });
      const entries = log.body.entries.filter((entry: { action: string }) => entry.action === 'acknowledgeRestore').map((entry: { outcome: string; actor: string }) => [entry.actor, entry.outcome]);
      // In any order: the facade reports its refusals in batches (rest-facade/refusal-reports.ts), so the writer's may be logged after the admin's calls.
      expect(entries.sort()).toEqual([
        ['test-admin', 'ok'],
        ['test-admin', 'ok'],
        ['test-writer', 'INSUFFICIENT_ROLE'],
      ]);
    });
  });
});

describe('pg_dump and pg_restore into another server', () => {
  let source: DebianPostgres;
  let target: DebianPostgres;
  let pinnedThere: Pinned;
  let restored: TestStack;

  beforeAll(async () => {
    [source, target] = (await DebianPostgres.startSeveral(['pg-dump-source', 'pg-dump-target'])) as [DebianPostgres, DebianPostgres];
    const original = await startTestStack({ databaseUrl: source.url() });
    try {
      await spendTransactionIds(source.url(), TRANSACTIONS_BEFORE);
      pinnedThere = await drillData(original);
    } finally {
      await original.stop();
    }
    const dump = join(work, 'passport.dump');
    // As docs/OPERATIONS.md writes them.
    await source.client('pg_dump', ['--format=custom', '--serializable-deferrable', ...DUMPED_SCHEMAS.map((schema) => `--schema=${schema}`), `--file=${dump}`, source.url()]);
    await target.client('pg_restore', ['--single-transaction', '--exit-on-error', `--dbname=${target.url()}`, dump]);
    restored = await startTestStack({ databaseUrl: target.url() });
  }, 240_000);

  afterAll(async () => {
    await restored?.stop();
    await Promise.all([source?.remove(), target?.remove()]);
  });

  it('lists every node, edge and revocation of GET /trust/graph at once, as before the dump', async () => {
    const counter = await target.sql('passport', 'SELECT pg_current_xact_id()::text AS xid');
    expect(Number(counter.rows[0]!.xid)).toBeLessThan(TRANSACTIONS_BEFORE);
    await expectWholeGraph(restored, pinnedThere);
  });

  it('lists a node changed after the restore with its new document', () => expectNodeChangeListed(restored));

  it('takes the API tokens issued before the dump, lists them as before, and still refuses the revoked one', () => expectIssuedTokens(restored, pinnedThere));

  it('holds appends once npm run restore -- --mark-restored has recorded the restore, and lists the last sequence numbers', async () => {
    const marked = await binCommand('bin/restore.ts', ['--mark-restored'], { DATABASE_URL: target.url() });
    expect(marked.code, marked.stderr).toBe(0);
    expect(marked.stdout).toContain('Appends are held (503 RESTORE_UNACKNOWLEDGED) until an admin acknowledges the restore');
    for (const passport of pinnedThere.passports) expect(marked.stdout).toContain(`  ${passport.id}  ${passport.events - 1}\n`);
    const [first] = pinnedThere.passports;
    expect((await appendTo(restored, first!.id)).status).toBe(503);
    const acknowledged = await restored.rest('issuer', '/admin/restore/acknowledgement', { method: 'POST', as: 'admin' });
    expect(acknowledged.status, acknowledged.text).toBe(200);
    expect(acknowledged.body.acknowledged).toEqual([expect.objectContaining({ snapshot_at: null, backup: null, passports: 3 })]);
    expect((await appendTo(restored, first!.id)).status).toBe(201);
  });
});
