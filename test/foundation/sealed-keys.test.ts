/**
 * Signing keys at rest (docs/KEYS.md): what a database dump holds, the upgrade from plaintext keys,
 * starts with a wrong or missing KEK, rotation of a key and of the KEK, each checked from outside:
 * the dump read with SQL, the seal opened with node:crypto alone, signatures verified with jose.
 */
import { execFile } from 'node:child_process';
import { createDecipheriv, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type * as jose from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { startStack } from '../../bin/stack.js';
import { loadRuntimeConfig } from '../../lib/config/runtime.js';
import { SERVICES, type ServiceName } from '../../lib/config/services.js';
import { KeyCustodyError, KeyEncryptionKeys, readKekFile, writeKekFile } from '../../lib/keys/kek.js';
import { createTestDatabase, sqlSessions } from '../support/database.js';
import { appendEvent, createModel, createPassport, objectEvent, verifySignedJson } from '../issuer/support.js';
import { readPackIndependently } from '../support/pack-reader.js';
import { scratchFolder } from '../support/scratch-folder.js';
import { LOOPBACK_PORTS_AT_LISTEN, startTestStack, testAccessTokens, TOKENS, type TestStack } from '../support/stack.js';
import { newcomerEnv } from '../support/environment.js';

const run = promisify(execFile);
const TEST_KEK_FOR_UPGRADE = KeyEncryptionKeys.generate();
const stacks: TestStack[] = [];
// The KEK files and data folders (whose default KEK file is made beside them) of the file's tests.
const scratch = scratchFolder('sealed-keys-');
// One connection per database for the dumps and key reads, some 40 statements a scan (each new connection costs PostgreSQL ~34 ms of CPU).
const { sql, end: endSql } = sqlSessions();
afterAll(async () => {
  for (const stack of stacks) await stack.stop().catch(() => {});
  await endSql();
});

interface PrivateHalf {
  service: ServiceName;
  kid: string;
  purpose: string;
  d: Buffer;
}

interface SigningKeyRow {
  kid: string;
  purpose: string;
  alg: string;
  public_jwk: jose.JWK;
  sealed_key: Buffer | null;
  kek_id: string | null;
  secret_key: Buffer | null;
}

const keyRows = (url: string, service: ServiceName) => sql<SigningKeyRow>(url, `SELECT * FROM "${service}".signing_key ORDER BY created_at, kid`).then((result) => result.rows);

/** Every private half in the database, opened with node:crypto as docs/KEYS.md describes the seal, and checked against its public half. */
async function privateHalves(url: string, kek: KeyEncryptionKeys): Promise<PrivateHalf[]> {
  const halves: PrivateHalf[] = [];
  for (const service of SERVICES) {
    for (const row of await keyRows(url, service)) {
      let d: Buffer;
      if (row.secret_key) d = row.secret_key;
      else {
        const sealed = row.sealed_key!;
        const decipher = createDecipheriv('aes-256-gcm', kek.byId(row.kek_id!)!.bytes, sealed.subarray(1, 13));
        decipher.setAAD(Buffer.from(JSON.stringify(['passport sealed signing key', 1, service, row.kid, row.purpose])));
        decipher.setAuthTag(sealed.subarray(sealed.length - 16));
        d = Buffer.concat([decipher.update(sealed.subarray(13, sealed.length - 16)), decipher.final()]);
      }
      const derived = createPublicKey(createPrivateKey({ key: { ...row.public_jwk, d: d.toString('base64url') } as never, format: 'jwk' })).export({ format: 'jwk' });
      expect(derived.x, `${service} ${row.kid}`).toBe(row.public_jwk.x);
      halves.push({ service, kid: row.kid, purpose: row.purpose, d });
    }
  }
  return halves;
}

/** The whole database as a dump would carry it: every row of every table of every schema, each value as text, bytes also in hex and raw. */
async function dump(url: string): Promise<{ text: string; bytes: Buffer[]; tables: number }> {
  const tables = (
    await sql<{ schema: string; name: string }>(
      url,
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    )
  ).rows;
  const parts: string[] = [];
  const bytes: Buffer[] = [];
  for (const { schema, name } of tables) {
    for (const row of (await sql(url, `SELECT * FROM "${schema}"."${name}"`)).rows) {
      for (const value of Object.values(row)) {
        if (Buffer.isBuffer(value)) {
          bytes.push(value);
          parts.push(value.toString('hex'), value.toString('latin1'));
        } else parts.push(typeof value === 'object' ? JSON.stringify(value) : String(value));
      }
    }
  }
  return { text: parts.join('\n'), bytes, tables: tables.length };
}

/** Encodings a private half could be stored in: raw, hex, base64, base64url (JWK `d`), PKCS #8 DER. */
function encodings(half: PrivateHalf, publicJwk: jose.JWK): { texts: string[]; raw: Buffer[] } {
  const der = createPrivateKey({ key: { ...publicJwk, d: half.d.toString('base64url') } as never, format: 'jwk' }).export({ format: 'der', type: 'pkcs8' });
  return {
    texts: [
      half.d.toString('hex'),
      half.d.toString('hex').toUpperCase(),
      half.d.toString('base64'),
      half.d.toString('base64').replace(/=+$/, ''),
      half.d.toString('base64url'),
      der.toString('base64'),
      der.toString('hex'),
    ],
    raw: [half.d, der],
  };
}

/** What the dump gives away: the kids whose private half it holds in any encoding. */
async function derivableKids(url: string, halves: PrivateHalf[]): Promise<string[]> {
  const { text, bytes, tables } = await dump(url);
  expect(tables).toBeGreaterThanOrEqual(SERVICES.length * 3);
  const jwks = new Map<string, jose.JWK>();
  for (const service of SERVICES) for (const row of await keyRows(url, service)) jwks.set(row.kid, row.public_jwk);
  return halves
    .filter((half) => {
      const { texts, raw } = encodings(half, jwks.get(half.kid)!);
      return texts.some((needle) => text.includes(needle)) || raw.some((needle) => bytes.some((value) => value.includes(needle)));
    })
    .map((half) => `${half.service}:${half.kid}`);
}

async function keyring(stack: TestStack, service: ServiceName): Promise<(jose.JWK & { kid: string; exp?: number; purpose: string })[]> {
  const response = service === 'registry' ? await stack.rest(service, '/') : await stack.rest(service, '/keyring');
  expect(response.status).toBe(200);
  return (service === 'registry' ? response.body.keyring : response.body).keys;
}

async function health(stack: TestStack, service: ServiceName): Promise<Record<string, unknown>> {
  const response = await stack.rest(service, '/healthz');
  expect(response.status).toBe(200);
  return response.body;
}

const getJson = (url: string) => fetch(url).then((response) => response.json() as Promise<Record<string, any>>);

const npmRun = (args: string[], env: NodeJS.ProcessEnv) =>
  run(process.execPath, ['bin/run.mjs', ...args], { cwd: join(import.meta.dirname, '..', '..'), env: newcomerEnv({ HOME: process.env.HOME, ...env }) }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

async function kekInFile(keys = KeyEncryptionKeys.generate()): Promise<string> {
  const file = join(mkdtempSync(join(scratch, 'kek-')), 'kek');
  await writeKekFile(file, keys);
  return file;
}

const startWith = (databaseUrl: string, kek: KeyEncryptionKeys) => startStack({ config: { ...loadRuntimeConfig(LOOPBACK_PORTS_AT_LISTEN), databaseUrl }, tokens: testAccessTokens(), kek });

// Each test starts the platform and runs the commands as processes of their own: slow on a loaded machine.
describe('signing keys at rest', { timeout: 180_000 }, () => {
  it('leave nothing in a full database dump from which a published private key derives, also after rotation; signatures verify with jose before and after', async () => {
    const file = await kekInFile();
    const kek = readKekFile(file);
    const stack = await startTestStack({ kek });
    stacks.push(stack);
    const before = Object.fromEntries(await Promise.all(SERVICES.map(async (service) => [service, await health(stack, service)] as const)));
    for (const service of SERVICES) await verifySignedJson(before[service]!, await keyring(stack, service));

    // A rotation with the documented command, through the running service.
    const rotated = await npmRun(['bin/keys.ts', 'rotate', 'trust', 'service'], { GATEWAY_URL: stack.stack.gateway.graphqlUrl, PASSPORT_ADMIN_TOKEN: TOKENS.admin });
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const trustKeys = await keyring(stack, 'trust');
    expect(trustKeys).toHaveLength(2);
    const [old, current] = trustKeys;
    expect(old!.exp).toBeTypeOf('number');
    expect(current).toMatchObject({ purpose: 'service', signs: ['health', 'trust anchor bundles'] });
    expect(rotated.stdout).toContain(current!.kid);
    // What the old key signed still verifies; what is signed now is under the new key.
    expect((await verifySignedJson(before.trust!, trustKeys)).protectedHeader!.kid).toBe(old!.kid);
    expect((await verifySignedJson(await health(stack, 'trust'), trustKeys)).protectedHeader!.kid).toBe(current!.kid);

    const halves = await privateHalves(stack.databaseUrl, kek);
    expect(halves.map((half) => half.kid)).toEqual(expect.arrayContaining(trustKeys.map((key) => key.kid)));
    expect(halves).toHaveLength(1 + 1 + 1 + 4 + 2);
    expect(await derivableKids(stack.databaseUrl, halves)).toEqual([]);
    for (const service of SERVICES) expect((await keyRows(stack.databaseUrl, service)).every((row) => row.secret_key === null && row.kek_id === kek.current.id)).toBe(true);
  });

  it('are sealed on the first start after an upgrade, keeping every kid, so what they signed before (events, log head, pack, health) still verifies', async () => {
    const databaseUrl = await createTestDatabase();
    const platform = await startTestStack({ databaseUrl, kek: TEST_KEK_FOR_UPGRADE });
    stacks.push(platform);
    await createModel(platform, 'sealed-upgrade-battery');
    const { passport_id: id } = await createPassport(platform, 'sealed-upgrade-battery', { capability_class: 'trace' });
    expect((await appendEvent(platform, id, 'ObjectEvent', objectEvent())).status).toBe(201);
    const pack = (await platform.rest('issuer', `/passports/${id}/pack`, { method: 'POST', as: 'writer' })).body;
    const healthBefore = await health(platform, 'issuer');
    const kidsBefore = Object.fromEntries(await Promise.all(SERVICES.map(async (service) => [service, (await keyRows(databaseUrl, service)).map((row) => row.kid)] as const)));
    await platform.stop();

    // The database as a version before sealing left it: the private halves in plaintext.
    const halves = await privateHalves(databaseUrl, TEST_KEK_FOR_UPGRADE);
    for (const half of halves) {
      await sql(databaseUrl, `UPDATE "${half.service}".signing_key SET secret_key = $1, sealed_key = NULL, kek_id = NULL WHERE kid = $2`, [half.d, half.kid]);
    }
    // The scan does find plaintext keys where they are.
    expect((await derivableKids(databaseUrl, halves)).sort()).toEqual(halves.map((half) => `${half.service}:${half.kid}`).sort());
    const status = await npmRun(['bin/keys.ts', 'status'], { DATABASE_URL: databaseUrl });
    expect(status.stdout).toContain('PLAINTEXT (sealed at the next start)');

    await platform.restart();
    for (const service of SERVICES) {
      const rows = await keyRows(databaseUrl, service);
      expect(rows.map((row) => row.kid)).toEqual(kidsBefore[service]);
      expect(rows.every((row) => row.secret_key === null && row.kek_id === TEST_KEK_FOR_UPGRADE.current.id)).toBe(true);
    }
    expect(await derivableKids(databaseUrl, halves)).toEqual([]);

    // What was signed before verifies; what is signed now is under the same keys.
    const keys = await keyring(platform, 'issuer');
    const appended = await appendEvent(platform, id, 'ObjectEvent', objectEvent());
    expect(appended.status).toBe(201);
    const passport = (await platform.rest('issuer', `/passports/${id}?include_events=true`)).body;
    expect(passport.log).toHaveLength(2);
    const eventKids = await Promise.all(passport.log.map(async (event: Record<string, unknown>) => (await verifySignedJson(event, keys)).protectedHeader!.kid));
    expect(new Set(eventKids).size).toBe(1);
    await verifySignedJson(passport.log_head, keys);
    expect((await readPackIndependently(pack.text, keys)).valid).toBe(true);
    const healthKid = (await verifySignedJson(healthBefore, keys)).protectedHeader!.kid;
    expect((await verifySignedJson(await health(platform, 'issuer'), keys)).protectedHeader!.kid).toBe(healthKid);
  });

  it('end a start with a wrong KEK, a missing KEK file or a tampered seal in one sentence, and make no key over the sealed ones', async () => {
    const databaseUrl = await createTestDatabase();
    const kek = KeyEncryptionKeys.generate();
    await (await startWith(databaseUrl, kek)).stop();
    const rowsBefore = await Promise.all(SERVICES.map((service) => keyRows(databaseUrl, service)));

    const wrong = KeyEncryptionKeys.generate('/somewhere/else.kek');
    await expect(startWith(databaseUrl, wrong)).rejects.toThrow(
      new KeyCustodyError(
        `The trust signing keys are sealed under key-encryption key ${kek.current.id}, which /somewhere/else.kek does not hold (it holds ${wrong.current.id}): start with the key-encryption key file they were sealed under.`,
      ),
    );

    // The start command itself: one line on stderr, exit code 1.
    const dataDir = mkdtempSync(join(scratch, 'data-'));
    const env = { ...LOOPBACK_PORTS_AT_LISTEN, DATABASE_URL: databaseUrl, PASSPORT_DATA_DIR: dataDir };
    const wrongFile = await kekInFile(wrong);
    const startedWrong = await npmRun(['bin/start.ts'], { ...env, PASSPORT_KEK_FILE: wrongFile });
    expect(startedWrong.code).toBe(1);
    expect(startedWrong.stderr).toBe(
      `The trust signing keys are sealed under key-encryption key ${kek.current.id}, which ${wrongFile} does not hold (it holds ${wrong.current.id}): start with the key-encryption key file they were sealed under.\n`,
    );
    // At the embedded default a missing KEK file is made anew (an upgrade needs one); a lost KEK looks
    // the same, and then the stored keys do not open under the new one, which the sentence says.
    const startedLost = await npmRun(['bin/start.ts'], env);
    expect(startedLost.code).toBe(1);
    expect(startedLost.stdout).toContain(`Created the key-encryption key that seals the signing keys: ${dataDir}.kek (mode 0600).`);
    expect(startedLost.stderr).toBe(
      `The trust signing keys are sealed under key-encryption key ${kek.current.id}, which ${dataDir}.kek (created by this start: the file was missing) does not hold (it holds ${readKekFile(`${dataDir}.kek`).current.id}): start with the key-encryption key file they were sealed under.\n`,
    );
    const missing = join(dataDir, 'no-such.kek');
    const startedMissing = await npmRun(['bin/start.ts'], { ...env, PASSPORT_KEK_FILE: missing });
    expect(startedMissing.code).toBe(1);
    expect(startedMissing.stderr).toBe(`No key-encryption key at ${missing}: the signing keys are sealed under it, so restore that file or set PASSPORT_KEK_FILE to where it is kept.\n`);
    // The documented way to make a first KEK file where PASSPORT_KEK_FILE points; it never replaces one.
    const created = await npmRun(['bin/keys.ts', 'create-kek'], { PASSPORT_KEK_FILE: missing });
    expect(created.code).toBe(0);
    expect(statSync(missing).mode & 0o777).toBe(0o600);
    expect(created.stdout).toContain(`Created key-encryption key ${readKekFile(missing).current.id} in ${missing} (mode 0600)`);
    const again = await npmRun(['bin/keys.ts', 'create-kek'], { PASSPORT_KEK_FILE: missing });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`${missing} exists already; it is never replaced (rotate-kek moves to a new key).\n`);

    // One byte of one sealed key changed, as by someone with write access to the database.
    const event = rowsBefore[SERVICES.indexOf('issuer')]!.find((row) => row.purpose === 'event')!;
    const tampered = Buffer.from(event.sealed_key!);
    tampered[20]! ^= 0x80;
    await sql(databaseUrl, `UPDATE issuer.signing_key SET sealed_key = $1 WHERE kid = $2`, [tampered, event.kid]);
    await expect(startWith(databaseUrl, kek)).rejects.toThrow(
      new KeyCustodyError(
        `The sealed private key ${event.kid} (event) of the issuer service does not open under key-encryption key ${kek.current.id}: its sealed bytes, or the service, kid or purpose bound to them, were altered.`,
      ),
    );

    const rowsAfter = await Promise.all(SERVICES.map((service) => keyRows(databaseUrl, service)));
    expect(rowsAfter.map((rows) => rows.map((row) => row.kid))).toEqual(rowsBefore.map((rows) => rows.map((row) => row.kid)));
  });

  it('move to a new KEK with `npm run keys -- rotate-kek` while the platform runs and signs', async () => {
    const file = await kekInFile();
    const first = readKekFile(file);
    const stack = await startTestStack({ kek: first });
    stacks.push(stack);
    const rotation = { done: false };
    const signing = (async () => {
      const answers: number[] = [];
      const deadline = Date.now() + 60_000;
      while (!rotation.done && Date.now() < deadline) answers.push((await stack.rest('issuer', '/healthz')).status);
      return answers;
    })();
    const rotated = await npmRun(['bin/keys.ts', 'rotate-kek'], { DATABASE_URL: stack.databaseUrl, PASSPORT_KEK_FILE: file }).finally(() => (rotation.done = true));
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const answers = await signing;
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((status) => status === 200)).toBe(true);

    const second = readKekFile(file);
    expect(second.ids).toHaveLength(1);
    expect(second.current.id).not.toBe(first.current.id);
    expect(rotated.stdout).toContain(`now sealed under key-encryption key ${second.current.id}`);
    expect(rotated.stdout).toContain(`Removed from the file: ${first.current.id}`);
    for (const service of SERVICES) expect((await keyRows(stack.databaseUrl, service)).every((row) => row.kek_id === second.current.id)).toBe(true);
    expect(readFileSync(file, 'utf8')).not.toContain(first.current.bytes.toString('base64url'));

    // The running service seals a key it makes now under the new KEK, read from the file.
    const made = await stack.graphql(`mutation { archiveRotateKey(purpose: "notary") }`, {}, 'admin');
    expect(made.errors).toBeUndefined();
    expect((await keyRows(stack.databaseUrl, 'archive')).every((row) => row.kek_id === second.current.id)).toBe(true);

    await stack.stop();
    // The old KEK alone (not read from the file, which a KEK read from it follows) opens nothing now.
    await expect(startWith(stack.databaseUrl, new KeyEncryptionKeys([first.current.bytes], 'the old KEK'))).rejects.toThrow(KeyCustodyError);
    const restarted = await startWith(stack.databaseUrl, second);
    const archiveKeys = (await getJson(`${restarted.facade.baseUrls.archive}/keyring`)).keys;
    expect(archiveKeys.filter((key: { purpose: string }) => key.purpose === 'notary')).toHaveLength(2);
    expect(await privateHalves(stack.databaseUrl, second)).toHaveLength(1 + 1 + 4 + 3);
    await restarted.stop();
  });
});
