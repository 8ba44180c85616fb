/**
 * Issue 44 item 7: a database made by the previous release (commit 3b8a98f, before operators; made by
 * test/support/previous-release-fixture.ts with that release's own `npm start`, REST API, `npm run
 * backup` and the documented `pg_dump`) upgraded by today's platform, two ways: (1) in place, its
 * pg_dump loaded into a brand-new PostgreSQL and today's platform started on it (the migrations run
 * at the start); (2) its backup restored by today's `npm run restore` into a brand-new data folder.
 * Each then: the tokens the previous release's first start made still work (its tokens file, or the
 * one the restore writes); the operator `default` owns every passport and the issuer's signing keys; every
 * passport's read, log, pack, credential and verdict, the archive's snapshot and the registry's and
 * trust service's records answer byte for byte what the previous release served (docs/OPERATORS.md
 * names what changes by design and why); the offline verifier and jose verify them; and a new event
 * is appended and a pack minted, signed by the keys the previous release signed with, now the default
 * operator's (its credential issued anew by its credential key).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterDirectory, startEmbeddedPostgres, type RunningPostgres } from '../../lib/db/embedded-postgres.js';
import { readKekFile } from '../../lib/keys/kek.js';
import { loadAccessTokens } from '../../lib/auth/tokens.js';
import { readBackup } from '../../lib/db/backup-file.js';
import { migrationsDirectory, readMigrations } from '../../lib/db/migrate.js';
import { SERVICES } from '../../lib/config/services.js';
// The verifier's command line run in this process (its arguments, output and exit status): the
// subject is what the upgraded platform serves; the command as a process is test/verifier's.
import { runToEnd as verifierCommand } from '../../verifier/cli.js';
import { binCommand } from '../support/bin-command.js';
import { sql } from '../support/database.js';
import { DebianPostgres } from '../support/debian-postgres.js';
import { freePort } from '../support/free-port.js';
import { PREVIOUS_RELEASE, PREVIOUS_RELEASE_PUBLIC_URLS, previousRelease, previousReleaseFile, previousReleaseTokens } from '../support/previous-release.js';
import { startTestStack, type TestStack } from '../support/stack.js';

const fixture = previousRelease();
const { active, suspended, draft } = fixture.passports;
const passportPath = (id: string) => `/issuer/passports/${encodeURIComponent(id)}`;
const served = (path: string) => Buffer.from(fixture.served[path]!.base64, 'base64');

type Json = Record<string, any>;

/**
 * The answers that change by design (docs/OPERATORS.md, "Upgrading"), and how: from what the previous
 * release served, what today serves. The issuer's keyring names the operator `default` on its event,
 * carrier and credential keys (same keys, same kids); the anchor bundle and a verdict are made at each
 * request, so `issued_at` (and the bundle's signature over it) and `computed_at` are the request's.
 */
const CHANGED_BY_DESIGN = new Map<string, (before: Json, now: Json) => Json>([
  ['/issuer/keyring', (before) => ({ keys: before.keys.map((key: Json) => (key.purpose === 'service' ? key : { ...key, operator: 'default' })) })],
  ['/trust/anchor-bundle', (before, now) => ({ ...before, issued_at: now.issued_at, signature: now.signature })],
  ...[active, suspended, draft].map((id): [string, (before: Json, now: Json) => Json] => [`${passportPath(id)}/verdict`, (before, now) => ({ ...before, computed_at: now.computed_at })]),
]);

/** The tokens the previous release's first start made: its admin is today's platform admin, its writer the operator `default`'s writer. */
const tokens = previousReleaseTokens();
const as = (role: keyof typeof tokens) => ({ headers: { authorization: `Bearer ${tokens[role]}` } });

/** Starts today's platform on the upgraded database, as the previous release was configured (its public URLs and KEK) and with the tokens file `tokensEnv` names. */
const startToday = (databaseUrl: string, tokensEnv: NodeJS.ProcessEnv) =>
  startTestStack({ databaseUrl, kek: readKekFile(previousReleaseFile.kek), env: { ...PREVIOUS_RELEASE_PUBLIC_URLS }, tokens: loadAccessTokens(tokensEnv) });

async function getBytes(stack: TestStack, path: string): Promise<{ status: number; contentType: string; bytes: Buffer }> {
  const [, service, ...rest] = path.split('/');
  const response = await fetch(`${stack.base(service as 'issuer')}/${rest.join('/')}`, { headers: { 'accept-encoding': 'identity' } });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', bytes: Buffer.from(await response.arrayBuffer()) };
}

/** The assertions both paths share: ownership, the answers byte for byte, verification by the verifier and jose. */
function upgradedDatabase(context: () => { stack: TestStack; databaseUrl: string }) {
  it('makes the operator `default` own every passport and the issuer’s event, carrier and credential keys; the service keys stay the platform’s', async () => {
    const { databaseUrl } = context();
    const passports = await sql<{ operator: string; count: number }>(databaseUrl, 'SELECT operator, count(*)::int AS count FROM issuer.passport GROUP BY operator');
    expect(passports.rows).toEqual([{ operator: 'default', count: 3 }]);
    const keys = await sql<{ purpose: string; operator: string | null }>(databaseUrl, 'SELECT DISTINCT purpose, operator FROM issuer.signing_key ORDER BY purpose');
    expect(keys.rows).toEqual([
      { purpose: 'carrier', operator: 'default' },
      { purpose: 'credential', operator: 'default' },
      { purpose: 'event', operator: 'default' },
      { purpose: 'service', operator: null },
    ]);
    // In every service's admin log the writer's entries are the operator's, the admin's (the register's seed) the platform's.
    const log = await sql<{ service: string; role: string; operator: string | null }>(
      databaseUrl,
      `${SERVICES.map((service) => `SELECT DISTINCT '${service}' AS service, role, operator FROM ${service}.admin_log`).join(' UNION ')} ORDER BY service, role`,
    );
    expect(log.rows).toEqual([
      { service: 'archive', role: 'writer', operator: 'default' },
      { service: 'issuer', role: 'writer', operator: 'default' },
      { service: 'registry', role: 'admin', operator: null },
      { service: 'registry', role: 'writer', operator: 'default' },
      { service: 'trust', role: 'writer', operator: 'default' },
    ]);
    const operators = await sql(databaseUrl, 'SELECT id, status FROM identity.operator');
    expect(operators.rows).toEqual([{ id: 'default', status: 'active' }]);
  });

  it('takes the tokens the previous release made: its admin as the platform admin, its writer as a writer of the operator `default`', async () => {
    const { stack } = context();
    const listed = await stack.rest('issuer', '/admin/tokens', as('admin'));
    expect(listed.status, listed.text).toBe(200);
    const writer = await stack.rest('issuer', '/admin/tokens', as('writer'));
    expect([writer.status, writer.body.code]).toEqual([403, 'INSUFFICIENT_ROLE']);
    expect((await stack.rest('issuer', '/admin/tokens', { headers: { authorization: `Bearer ${tokens.admin}x` } })).status).toBe(401);
  });

  it('answers every passport, log, pack, credential, verdict, keyring, snapshot and record byte for byte as the previous release served them, but what changes by design', async () => {
    const { stack } = context();
    for (const [path, before] of Object.entries(fixture.served)) {
      const now = await getBytes(stack, path);
      expect([now.status, now.contentType], path).toEqual([before.status, before.contentType]);
      const change = CHANGED_BY_DESIGN.get(path);
      // latin1: one character per byte, so the comparison is exact and a difference still reads.
      if (!change) expect(now.bytes.toString('latin1'), path).toBe(served(path).toString('latin1'));
      else {
        const answer = JSON.parse(now.bytes.toString('utf8'));
        expect(answer, path).toEqual(change(JSON.parse(served(path).toString('utf8')), answer));
      }
    }
  });

  it('verifies with the offline verifier: each passport’s log and pack and the snapshot against the keyrings pinned before the upgrade, and the default operator’s event key by the path platform → operator', async () => {
    const { stack } = context();
    const work = await mkdtemp(join(tmpdir(), 'previous-release-verify-'));
    try {
      // Pinned before the upgrade: the keyrings the previous release served.
      const pinned = async (path: string) => {
        const file = join(work, `pinned-${path.split('/')[1]}-keyring.json`);
        await writeFile(file, served(path));
        return file;
      };
      const [issuer, archive, trust] = await Promise.all(['/issuer/keyring', '/archive/keyring', '/trust/keyring'].map(pinned));
      // What today serves.
      const today = async (path: string) => {
        const file = join(work, `today-${createHash('sha256').update(path).digest('hex').slice(0, 12)}`);
        await writeFile(file, (await getBytes(stack, path)).bytes);
        return file;
      };
      const packOf = async (id: string) => JSON.parse((await getBytes(stack, passportPath(id))).bytes.toString('utf8')).latest_pack as string;
      const eventKey = JSON.parse(served('/issuer/keyring').toString('utf8')).keys.find((key: Json) => key.purpose === 'event').kid;
      const runs = [
        ...(await Promise.all([active, suspended].map(async (id) => ['log', await today(`${passportPath(id)}?include_events=true`), '--pin', issuer!]))),
        ...(await Promise.all([active, suspended].map(async (id) => ['pack', await packOf(id), '--pin', issuer!]))),
        [
          'snapshot',
          await today(`/archive/snapshots/${fixture.snapshot}`),
          '--notarization',
          await today(`/archive/snapshots/${fixture.snapshot}/notarization`),
          '--pin',
          archive!,
          '--pin',
          issuer!,
          '--pin',
          trust!,
        ],
        // The default operator's event key by today's trust graph, from the platform's root.
        ['path', await today('/trust/graph'), '--to', 'operator:default', '--kid', eventKey, '--anchors', await today('/trust/anchor-bundle'), '--pin', trust!],
      ];
      const outcomes = await Promise.all(runs.map((args) => verifierCommand(args)));
      for (const [index, outcome] of outcomes.entries()) expect(outcome.code, `${runs[index]![0]}: ${outcome.stdout}${outcome.stderr}`).toBe(0);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('serves credentials jose verifies with the key today’s DID document names', async () => {
    const { stack } = context();
    for (const id of [active, suspended, draft]) await joseVerifiedCredential(stack, id);
  });
}

/** A passport's credential as today serves it, verified by jose with the key of today's DID document its header names; its kid. */
async function joseVerifiedCredential(stack: TestStack, id: string): Promise<string | undefined> {
  const did = JSON.parse((await getBytes(stack, '/issuer/did.json')).bytes.toString('utf8'));
  const credential = (await getBytes(stack, `${passportPath(id)}/credential`)).bytes.toString('utf8');
  const { kid } = decodeProtectedHeader(credential);
  const method = did.verificationMethod.find((candidate: { id: string }) => candidate.id === kid);
  expect(method, `${id}: ${kid}`).toBeDefined();
  const { payload } = await compactVerify(credential, await importJWK(method.publicKeyJwk, method.publicKeyJwk.alg));
  expect(JSON.parse(new TextDecoder().decode(payload)).issuer.id).toBe(did.id);
  return kid;
}

/**
 * After the upgrade an event is appended and a pack minted: signed with the keys the previous release
 * signed with, now the default operator's (event, carrier, and the credential issued anew); the log
 * verifies against the keyring pinned before the upgrade.
 */
async function expectAppendSignedByDefault(stack: TestStack): Promise<void> {
  const keyOf = (purpose: string) => (JSON.parse(served('/issuer/keyring').toString('utf8')).keys as Json[]).find((key) => key.purpose === purpose)!.kid as string;
  const owned = ((await stack.rest('issuer', '/keyring')).body.keys as Json[]).filter((key) => key.operator === 'default' && key.exp === undefined).map((key) => [key.purpose, key.kid]);
  expect(owned.sort()).toEqual(['carrier', 'credential', 'event'].map((purpose) => [purpose, keyOf(purpose)]));
  const path = passportPath(active).slice('/issuer'.length);
  const appended = await stack.rest('issuer', `${path}/events`, {
    ...as('writer'),
    body: {
      type: 'ObjectEvent',
      payload: { eventTime: '2026-12-01T00:00:00.000Z', eventTimeZoneOffset: '+00:00', action: 'OBSERVE', bizStep: 'receiving', epcList: ['https://id.gs1.org/01/09520123456788/21/UPG-1'] },
    },
  });
  expect(appended.status, appended.text).toBe(201);
  expect([appended.body.event.seq, appended.body.event.kid]).toEqual([3, keyOf('event')]);
  const pack = await stack.rest('issuer', `${path}/pack`, { ...as('writer'), body: {} });
  expect(pack.status, pack.text).toBe(201);
  expect(pack.body.kid).toBe(keyOf('carrier'));
  expect(await joseVerifiedCredential(stack, active)).toMatch(new RegExp(`#${keyOf('credential')}$`));
  const work = await mkdtemp(join(tmpdir(), 'previous-release-append-'));
  try {
    await writeFile(join(work, 'keyring.json'), served('/issuer/keyring'));
    await writeFile(join(work, 'log.json'), (await stack.rest('issuer', `${path}?include_events=true`)).text);
    await writeFile(join(work, 'pack.txt'), pack.body.text);
    const outcomes = await Promise.all([
      verifierCommand(['log', join(work, 'log.json'), '--pin', join(work, 'keyring.json')]),
      verifierCommand(['pack', `@${join(work, 'pack.txt')}`, '--pin', join(work, 'keyring.json')]),
    ]);
    for (const outcome of outcomes) expect(outcome.code, outcome.stdout + outcome.stderr).toBe(0);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

describe('the fixture', () => {
  it('is of the previous release: its backup names the four services’ schemas, none of the operators’ migrations, and the release’s KEK', async () => {
    const manifest = await readBackup(previousReleaseFile.backup);
    expect(Object.keys(manifest.services).sort()).toEqual(['archive', 'issuer', 'registry', 'trust']);
    const migrations = Object.values(manifest.services).flatMap((service) => service.migrations.map((migration) => migration.name));
    const today = new Set(await Promise.all(SERVICES.map((service) => readMigrations(migrationsDirectory(service)))).then((all) => all.flat().map((migration) => migration.name)));
    expect(migrations.every((name) => today.has(name))).toBe(true);
    expect(migrations.filter((name) => /operator/.test(name))).toEqual([]);
    expect(manifest.kekIds).toEqual(readKekFile(previousReleaseFile.kek).ids);
  });
});

describe(`a database of the previous release (${PREVIOUS_RELEASE.slice(0, 7)}) upgraded in place`, () => {
  let server: DebianPostgres;
  let stack: TestStack;

  beforeAll(async () => {
    server = await DebianPostgres.start('previous-release-in-place');
    await server.client('pg_restore', ['--single-transaction', '--exit-on-error', `--dbname=${server.url()}`, previousReleaseFile.dump]);
    // Its data folder's tokens file stays where it was.
    stack = await startToday(server.url(), { PASSPORT_TOKENS_FILE: previousReleaseFile.tokensFile });
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    await server?.remove();
  });

  upgradedDatabase(() => ({ stack, databaseUrl: server.url() }));

  it('takes appends and packs at once, signed by the keys the previous release signed with, now the default operator’s', () => expectAppendSignedByDefault(stack));
});

describe(`a backup of the previous release (${PREVIOUS_RELEASE.slice(0, 7)}) restored by npm run restore into a fresh data folder`, () => {
  let work: string;
  let postgres: RunningPostgres;
  let stack: TestStack;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'previous-release-restore-'));
    const dataDir = join(work, 'data');
    const port = await freePort();
    const restored = await binCommand('bin/restore.ts', [previousReleaseFile.backup], { PASSPORT_DATA_DIR: dataDir, PASSPORT_KEK_FILE: previousReleaseFile.kek, EMBEDDED_PG_PORT: String(port) });
    expect(restored.code, restored.stderr).toBe(0);
    postgres = await startEmbeddedPostgres({ dataDir, port });
    // The tokens file the restore wrote from the backup's token hashes.
    stack = await startToday(postgres.url, { PASSPORT_DATA_DIR: dataDir });
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    await postgres?.stop();
    if (!work) return;
    // As root the cluster is placed outside the data folder (README, "as root").
    const cluster = dirname(await clusterDirectory(join(work, 'data')));
    if (cluster !== join(work, 'data')) await rm(cluster, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  });

  upgradedDatabase(() => ({ stack, databaseUrl: postgres.url }));

  it('holds appends until an admin acknowledges the restore, then takes them and packs, signed by the keys the previous release signed with, now the default operator’s', async () => {
    expect((await stack.rest('issuer', `${passportPath(active).slice('/issuer'.length)}/events`, { ...as('writer'), body: { type: 'ObjectEvent', payload: {} } })).status).toBe(503);
    expect((await stack.rest('issuer', '/admin/restore/acknowledgement', { method: 'POST', ...as('admin') })).status).toBe(200);
    await expectAppendSignedByDefault(stack);
  });
});
