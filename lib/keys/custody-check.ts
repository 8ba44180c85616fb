/**
 * A start's early look at its stored signing keys: the sealed ones opened under the key-encryption key
 * as KeyStore.open admits them, from rows read on the migration session, before the servers' code is
 * loaded (most of what a start costs). A wrong or lost KEK then ends the start at once, with the
 * sentence the key store would say; everything else (plaintext keys of an older version, keys to make)
 * is left to KeyStore.open.
 */
import type pg from 'pg';
import type { PublicJwk, SigningAlgorithm } from '../crypto/index.js';
import type { KeyEncryptionKeys } from './kek.js';
import type { KeyCustody, KeyIdentity } from './key-vault.js';
import { SealedKeyVault } from './sealed-vault.js';

export interface StoredCustody extends KeyIdentity {
  /** Absent for a key without a seal (plaintext of an older version, or nothing stored). */
  custody?: KeyCustody;
}

/** A service's signing keys as KeyStore.open reads them (oldest first), on a session whose search_path is the service's schema. */
export async function storedCustody(client: pg.ClientBase): Promise<StoredCustody[]> {
  const { rows } = await client.query<{ kid: string; purpose: string; alg: string; public_jwk: PublicJwk; sealed_key: Buffer | null; kek_id: string | null }>(
    'SELECT kid, purpose, alg, public_jwk, sealed_key, kek_id FROM signing_key ORDER BY created_at ASC',
  );
  return rows.map((row) => ({
    kid: row.kid,
    purpose: row.purpose,
    alg: row.alg as SigningAlgorithm,
    publicJwk: row.public_jwk,
    ...(row.sealed_key && row.kek_id ? { custody: { holder: row.kek_id, bytes: new Uint8Array(row.sealed_key) } } : {}),
  }));
}

/**
 * Throws the KeyCustodyError KeyStore.open would throw first for these keys under `kek`: each sealed
 * key in its order is admitted by a vault of its own; at the first key without a seal it stops, as
 * KeyStore.open would go on to seal that one (a failure there is KeyStore.open's to report).
 */
export function checkSealedKeys(service: string, kek: KeyEncryptionKeys, keys: readonly StoredCustody[]): void {
  const vault = new SealedKeyVault(service, kek);
  for (const key of keys) {
    if (!key.custody) return;
    vault.admit(key, key.custody);
  }
}
