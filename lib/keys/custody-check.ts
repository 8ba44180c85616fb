/**
 * A start's early look at its stored signing keys: the sealed ones opened under the key-encryption key
 * as KeyStore.open admits them, from rows read on the migration session, before the servers' code is
 * loaded (most of what a start costs). A wrong or lost KEK then ends the start at once, with the
 * sentence the key store would say; everything else (plaintext keys of an older version, keys to make)
 * is left to KeyStore.open.
 */
import type pg from 'pg';
import type { KeyEncryptionKeys } from './kek.js';
import type { StoredKey } from './key-store.js';
import { type SigningKeyRow, toStoredKey } from './prisma-key-repository.js';
import { SealedKeyVault } from './sealed-vault.js';

/** A service's signing keys as KeyStore.open reads them (oldest first), on a session whose search_path is the service's schema. */
export async function storedKeys(client: pg.ClientBase): Promise<StoredKey[]> {
  const { rows } = await client.query<SigningKeyRow>(
    `SELECT kid, purpose, alg, public_jwk AS "publicJwk", sealed_key AS "sealedKey", kek_id AS "kekId", secret_key AS "plaintextKey",
            created_at AS "createdAt", expires_at AS "expiresAt", revoked_at AS "revokedAt", revocation_reason AS "revocationReason"
     FROM signing_key ORDER BY created_at ASC`,
  );
  return rows.map(toStoredKey);
}

/**
 * Throws the KeyCustodyError KeyStore.open would throw first for these keys under `kek`: each sealed
 * key in its order is admitted by a vault of its own; at the first key without a seal it stops, as
 * KeyStore.open would go on to seal that one (a failure there is KeyStore.open's to report).
 */
export function checkSealedKeys(service: string, kek: KeyEncryptionKeys, keys: readonly StoredKey[]): void {
  const vault = new SealedKeyVault(service, kek);
  for (const key of keys) {
    if (!key.custody) return;
    vault.admit(key, key.custody);
  }
}
