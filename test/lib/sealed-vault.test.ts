import { createDecipheriv, createPrivateKey, createPublicKey, verify as nodeVerify } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import { KeyCustodyError, KeyEncryptionKeys, loadOrCreateKek, readKekFile, writeKekFile } from '../../lib/keys/kek.js';
import type { KeyCustody, KeyIdentity } from '../../lib/keys/key-vault.js';
import { SealedKeyVault } from '../../lib/keys/sealed-vault.js';
import { scratchFolder } from '../support/scratch-folder.js';

const message = new TextEncoder().encode('a message to sign');
const scratch = scratchFolder('kek-');
const folder = () => mkdtempSync(join(scratch, 'kek-'));

/** Opens a sealed key with node:crypto alone, as the format in sealed-vault.ts describes it. */
function openIndependently(kek: Buffer, service: string, key: KeyIdentity, custody: KeyCustody): Buffer {
  const sealed = Buffer.from(custody.bytes);
  expect(sealed[0]).toBe(1);
  const decipher = createDecipheriv('aes-256-gcm', kek, sealed.subarray(1, 13));
  decipher.setAAD(Buffer.from(JSON.stringify(['passport sealed signing key', 1, service, key.kid, key.purpose])));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(13, sealed.length - 16)), decipher.final()]);
}

describe('the sealed key vault', () => {
  const kek = KeyEncryptionKeys.generate();

  it.each(['Ed25519', 'ES256'] as const)('seals a new %s key as AES-256-GCM under the KEK, and signs what node:crypto and jose verify', async (alg) => {
    const vault = new SealedKeyVault('issuer', kek);
    const key = vault.generate('event', alg);
    expect(key.custody.holder).toBe(kek.current.id);
    const secret = openIndependently(kek.current.bytes, 'issuer', key, key.custody);
    expect(secret).toHaveLength(32);
    // The opened private half is the one the published JWK names.
    const privateKey = createPrivateKey({ key: { ...key.publicJwk, d: secret.toString('base64url') } as never, format: 'jwk' });
    expect(createPublicKey(privateKey).export({ format: 'jwk' })).toMatchObject({ x: key.publicJwk.x });

    const signature = vault.sign(key.kid, message);
    const publicKey = createPublicKey({ key: key.publicJwk as never, format: 'jwk' });
    expect(nodeVerify(alg === 'Ed25519' ? null : 'sha256', message, alg === 'Ed25519' ? publicKey : { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
    const jws = `${Buffer.from(JSON.stringify({ alg: alg === 'Ed25519' ? 'EdDSA' : 'ES256' })).toString('base64url')}.${Buffer.from(message).toString('base64url')}`;
    const compact = `${jws}.${Buffer.from(vault.sign(key.kid, new TextEncoder().encode(jws))).toString('base64url')}`;
    await expect(jose.compactVerify(compact, await jose.importJWK(key.publicJwk as jose.JWK, alg === 'Ed25519' ? 'EdDSA' : 'ES256'))).resolves.toBeDefined();
  });

  it('opens what it sealed in a new process (another vault, same KEK) and signs alike', () => {
    const key = new SealedKeyVault('archive', kek).generate('notary', 'Ed25519');
    const reopened = new SealedKeyVault('archive', kek);
    reopened.admit(key, key.custody);
    const publicKey = createPublicKey({ key: key.publicJwk as never, format: 'jwk' });
    expect(nodeVerify(null, message, publicKey, reopened.sign(key.kid, message))).toBe(true);
  });

  it('refuses a sealed key with any byte changed: version, nonce, ciphertext or tag', () => {
    const key = new SealedKeyVault('trust', kek).generate('service', 'Ed25519');
    const length = key.custody.bytes.length;
    for (const index of [0, 1, 12, 13, 30, length - 16, length - 1]) {
      const tampered = new Uint8Array(key.custody.bytes);
      tampered[index]! ^= 0x01;
      expect(() => new SealedKeyVault('trust', kek).admit(key, { ...key.custody, bytes: tampered }), `byte ${index}`).toThrow(/does not open under key-encryption key .*altered/);
    }
    expect(() => new SealedKeyVault('trust', kek).admit(key, { ...key.custody, bytes: key.custody.bytes.subarray(0, 20) })).toThrow(KeyCustodyError);
  });

  it('binds service, kid and purpose: a sealed key moved to another of them does not open', () => {
    const key = new SealedKeyVault('issuer', kek).generate('event', 'Ed25519');
    const other = new SealedKeyVault('issuer', kek).generate('event', 'Ed25519');
    expect(() => new SealedKeyVault('archive', kek).admit(key, key.custody)).toThrow(/archive service does not open/);
    expect(() => new SealedKeyVault('issuer', kek).admit({ ...key, purpose: 'carrier' }, key.custody)).toThrow(/\(carrier\) of the issuer service does not open/);
    expect(() => new SealedKeyVault('issuer', kek).admit(other, key.custody)).toThrow(KeyCustodyError);
  });

  it('names the KEK a key needs when it is given another, and keeps the key out of the message', () => {
    const key = new SealedKeyVault('issuer', kek).generate('event', 'Ed25519');
    const wrong = KeyEncryptionKeys.generate('/etc/passport/kek');
    let error: unknown;
    try {
      new SealedKeyVault('issuer', wrong).admit(key, key.custody);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(KeyCustodyError);
    expect((error as Error).message).toBe(
      `The issuer signing keys are sealed under key-encryption key ${kek.current.id}, which /etc/passport/kek does not hold (it holds ${wrong.current.id}): start with the key-encryption key file they were sealed under.`,
    );
    for (const secret of [kek.current.bytes, wrong.current.bytes]) {
      expect((error as Error).message).not.toContain(secret.toString('base64url'));
      expect((error as Error).message).not.toContain(secret.toString('hex'));
    }
  });

  it('re-seals under a new current KEK and still opens the old seal while the old KEK is held', () => {
    const old = new SealedKeyVault('trust', kek).generate('service', 'Ed25519');
    const rotated = kek.withCurrent(KeyEncryptionKeys.generate());
    const vault = new SealedKeyVault('trust', rotated);
    vault.admit(old, old.custody);
    const resealed = vault.reseal(old, old.custody);
    expect(resealed.holder).toBe(rotated.current.id);
    expect(resealed.holder).not.toBe(kek.current.id);
    new SealedKeyVault('trust', rotated.only([rotated.current.id])).admit(old, resealed);
    expect(() => new SealedKeyVault('trust', rotated.only([rotated.current.id])).admit(old, old.custody)).toThrow(KeyCustodyError);
  });

  it('refuses a plaintext key to seal that is not the private half of the published kid', () => {
    const key = new SealedKeyVault('issuer', kek).generate('event', 'Ed25519');
    expect(() => new SealedKeyVault('issuer', kek).seal(key, new Uint8Array(32).fill(7))).toThrow(/is not the private half of that published key/);
  });

  it('signs only with keys it holds', () => {
    expect(() => new SealedKeyVault('issuer', kek).sign('no-such-kid', message)).toThrow(/holds no signing key no-such-kid/);
  });
});

describe('the key-encryption key file', () => {
  it('is created at the embedded default beside the data folder, mode 0600, and read back the same', async () => {
    const dataDir = join(folder(), 'data');
    const first = await loadOrCreateKek({ PASSPORT_DATA_DIR: dataDir });
    expect(first.created).toBe(true);
    expect(first.keys.file).toBe(`${dataDir}.kek`);
    // Should stored keys not open under it, the message says the file was missing and made anew.
    expect(first.keys.source).toBe(`${dataDir}.kek (created by this start: the file was missing)`);
    expect(statSync(`${dataDir}.kek`).mode & 0o777).toBe(0o600);
    const again = await loadOrCreateKek({ PASSPORT_DATA_DIR: dataDir });
    expect(again.created).toBe(false);
    expect(again.keys.ids).toEqual(first.keys.ids);
  });

  it('is never created where PASSPORT_KEK_FILE points: a missing file ends the start with one sentence', async () => {
    const file = join(folder(), 'kek');
    await expect(loadOrCreateKek({ PASSPORT_KEK_FILE: file, PASSPORT_DATA_DIR: folder() })).rejects.toThrow(
      new KeyCustodyError(`No key-encryption key at ${file}: the signing keys are sealed under it, so restore that file or set PASSPORT_KEK_FILE to where it is kept.`),
    );
  });

  it('refuses a file not in the expected form without quoting it', () => {
    const file = join(folder(), 'kek');
    writeFileSync(file, 'hunter2-not-a-key\n');
    expect(() => readKekFile(file)).toThrow(`The key-encryption key file ${file} is not in the expected form: each key line must be 32 bytes in base64url.`);
    writeFileSync(file, '# only a comment\n');
    expect(() => readKekFile(file)).toThrow(`The key-encryption key file ${file} holds no key.`);
  });

  it('keeps several keys, the first sealing, and never shows them when logged or serialised', async () => {
    const file = join(folder(), 'kek');
    const keys = KeyEncryptionKeys.generate().withCurrent(KeyEncryptionKeys.generate());
    await writeKekFile(file, keys);
    const read = readKekFile(file);
    expect(read.ids).toEqual(keys.ids);
    expect(read.current.id).toBe(keys.current.id);
    for (const shown of [JSON.stringify(read), inspect(read), String(read), inspect({ nested: { read } })]) {
      for (const id of read.ids) expect(shown).not.toContain(read.byId(id)!.bytes.toString('base64url'));
    }
    expect(readFileSync(file, 'utf8')).toContain(keys.current.bytes.toString('base64url'));
  });
});
