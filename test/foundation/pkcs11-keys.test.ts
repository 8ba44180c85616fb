/**
 * The PKCS#11 key vault on a real token (SoftHSM2): keys made inside it, not extractable, every
 * signature made there and verified with node:crypto and jose, and the whole platform signing
 * through it across a restart.
 */
import { execFileSync } from 'node:child_process';
import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../bin/stack.js';
import { loadRuntimeConfig } from '../../lib/config/runtime.js';
import { SERVICES } from '../../lib/config/services.js';
import { canonicalize } from '../../lib/crypto/jcs.js';
import { KeyCustodyError, KeyEncryptionKeys } from '../../lib/keys/kek.js';
import { Pkcs11KeyVault, pkcs11Settings, type Pkcs11Settings } from '../../lib/keys/pkcs11-vault.js';
import { createTestDatabase, sql } from '../support/database.js';
import { scratchFolder } from '../support/scratch-folder.js';
import { testAccessTokens } from '../support/stack.js';

const MODULE = '/usr/lib/softhsm/libsofthsm2.so';
const folder = scratchFolder('pkcs11-');
const pinFile = join(folder, 'pin');
let settings: Pkcs11Settings;
const message = new TextEncoder().encode('signed inside the token');

const softhsmConf = process.env.SOFTHSM2_CONF;
afterAll(() => {
  // The worker's next files see the environment as it was (vitest.config.ts: isolate false).
  if (softhsmConf === undefined) delete process.env.SOFTHSM2_CONF;
  else process.env.SOFTHSM2_CONF = softhsmConf;
});

beforeAll(() => {
  // SoftHSM2 reads its configuration and tokens when the library is first initialised.
  writeFileSync(join(folder, 'softhsm2.conf'), `directories.tokendir = ${join(folder, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  execFileSync('mkdir', ['-p', join(folder, 'tokens')]);
  process.env.SOFTHSM2_CONF = join(folder, 'softhsm2.conf');
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', 'passport-test', '--pin', '480213', '--so-pin', '99887766'], { stdio: 'ignore' });
  writeFileSync(pinFile, '480213\n', { mode: 0o600 });
  settings = pkcs11Settings({ PASSPORT_PKCS11_MODULE: MODULE, PASSPORT_PKCS11_TOKEN: 'passport-test', PASSPORT_PKCS11_PIN_FILE: pinFile })!;
});

describe('the PKCS#11 key vault', () => {
  it.each(['Ed25519', 'ES256'] as const)('makes a %s key in the token whose signatures node:crypto verifies; the database gets only its CKA_ID', (alg) => {
    const vault = new Pkcs11KeyVault('issuer', settings);
    try {
      const key = vault.generate('event', alg);
      expect(key.custody.holder).toBe('pkcs11:passport-test');
      expect(key.custody.bytes).toHaveLength(16);
      const publicKey = createPublicKey({ key: key.publicJwk as never, format: 'jwk' });
      const signature = vault.sign(key.kid, message);
      expect(nodeVerify(alg === 'Ed25519' ? null : 'sha256', message, alg === 'Ed25519' ? publicKey : { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
      expect(
        nodeVerify(alg === 'Ed25519' ? null : 'sha256', new TextEncoder().encode('something else'), alg === 'Ed25519' ? publicKey : { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature),
      ).toBe(false);

      // Another session (a restart) finds the key by its custody record and signs alike.
      const reopened = new Pkcs11KeyVault('issuer', settings);
      reopened.admit(key, key.custody);
      expect(nodeVerify(alg === 'Ed25519' ? null : 'sha256', message, alg === 'Ed25519' ? publicKey : { key: publicKey, dsaEncoding: 'ieee-p1363' }, reopened.sign(key.kid, message))).toBe(true);
      reopened.close();
    } finally {
      vault.close();
    }
  });

  it('refuses a custody record that names no key of the token, or a key pair other than the published one', () => {
    const vault = new Pkcs11KeyVault('archive', settings);
    try {
      const key = vault.generate('notary', 'Ed25519');
      const other = vault.generate('notary', 'Ed25519');
      expect(() => vault.admit(key, { ...key.custody, bytes: new Uint8Array(16) })).toThrow(KeyCustodyError);
      expect(() => vault.admit(key, other.custody)).toThrow(`The PKCS#11 token pkcs11:passport-test holds no key pair for the archive signing key ${key.kid} (notary).`);
      expect(() => vault.admit(key, { holder: 'kek-abc', bytes: key.custody.bytes })).toThrow(/is held by kek-abc, not by the PKCS#11 token/);
      expect(() => vault.seal()).toThrow(KeyCustodyError);
    } finally {
      vault.close();
    }
  });

  it('ends a start with one sentence for a wrong PIN, a missing token or a missing PIN file', () => {
    expect(() => new Pkcs11KeyVault('trust', { ...settings, pin: '000000' })).toThrow(new KeyCustodyError('The PKCS#11 token passport-test refused the user PIN from PASSPORT_PKCS11_PIN_FILE.'));
    expect(() => new Pkcs11KeyVault('trust', { ...settings, token: 'no-such-token' })).toThrow(
      new KeyCustodyError(`No PKCS#11 token labelled no-such-token (PASSPORT_PKCS11_TOKEN) is present in ${MODULE}.`),
    );
    expect(() => pkcs11Settings({ PASSPORT_PKCS11_MODULE: MODULE, PASSPORT_PKCS11_PIN_FILE: join(folder, 'absent') })).toThrow(/cannot be read/);
    expect(() => pkcs11Settings({ PASSPORT_PKCS11_MODULE: MODULE })).toThrow(/PASSPORT_PKCS11_PIN_FILE is not/);
    expect(pkcs11Settings({})).toBeUndefined();
  });

  it('is where the whole platform signs when PASSPORT_PKCS11_MODULE is set: jose verifies its signatures across a restart', { timeout: 120_000 }, async () => {
    Object.assign(process.env, { PASSPORT_PKCS11_MODULE: MODULE, PASSPORT_PKCS11_TOKEN: 'passport-test', PASSPORT_PKCS11_PIN_FILE: pinFile });
    try {
      const databaseUrl = await createTestDatabase();
      const env = { HOST: '127.0.0.1', FACADE_PORT: '0', GATEWAY_PORT: '0', TRUST_SUBGRAPH_PORT: '0', REGISTRY_SUBGRAPH_PORT: '0', ISSUER_SUBGRAPH_PORT: '0', ARCHIVE_SUBGRAPH_PORT: '0' };
      const start = () => startStack({ config: { ...loadRuntimeConfig(env), databaseUrl }, tokens: testAccessTokens(), kek: KeyEncryptionKeys.generate() });
      const signedHealth = async (stack: Awaited<ReturnType<typeof start>>) => {
        const kids: string[] = [];
        for (const service of SERVICES) {
          const document = (await fetch(`${stack.facade.baseUrls[service]}/healthz`).then((response) => response.json())) as Record<string, unknown>;
          const getJson = (path: string) => fetch(`${stack.facade.baseUrls[service]}${path}`).then((response) => response.json() as Promise<{ keys: jose.JWK[]; keyring: { keys: jose.JWK[] } }>);
          const keys = service === 'registry' ? (await getJson('/')).keyring.keys : (await getJson('/keyring')).keys;
          const { signature, ...plain } = document;
          const [protectedHeader, , sig] = String(signature).split('.');
          const { kid } = jose.decodeProtectedHeader(String(signature));
          const jwk = keys.find((key) => key.kid === kid);
          await jose.flattenedVerify({ protected: protectedHeader!, payload: Buffer.from(canonicalize(plain)).toString('base64url'), signature: sig! }, await jose.importJWK(jwk!, 'Ed25519'));
          kids.push(kid!);
        }
        return kids;
      };
      let stack = await start();
      const first = await signedHealth(stack);
      await stack.stop();
      // A KEK other than the first start's: keys in the token do not depend on it.
      stack = await start();
      expect(await signedHealth(stack)).toEqual(first);
      await stack.stop();
      // Started without the token, the platform says where its keys are, and makes none.
      delete process.env.PASSPORT_PKCS11_MODULE;
      await expect(start()).rejects.toThrow(
        new KeyCustodyError('The trust signing keys are held by pkcs11:passport-test, not sealed under a key-encryption key: start with PASSPORT_PKCS11_MODULE set (docs/KEYS.md).'),
      );
      for (const service of SERVICES) {
        const rows = (await sql<{ kek_id: string; sealed_key: Buffer; secret_key: Buffer | null }>(databaseUrl, `SELECT kek_id, sealed_key, secret_key FROM "${service}".signing_key`)).rows;
        expect(rows.every((row) => row.kek_id === 'pkcs11:passport-test' && row.sealed_key.length === 16 && row.secret_key === null)).toBe(true);
      }
    } finally {
      for (const name of ['PASSPORT_PKCS11_MODULE', 'PASSPORT_PKCS11_TOKEN', 'PASSPORT_PKCS11_PIN_FILE']) delete process.env[name];
    }
  });
});
