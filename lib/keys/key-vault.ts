/**
 * The one way a service signs: a key vault holds the private halves and signs a message with a kid;
 * a private key never leaves it. The key store (key-store.ts) keeps only what the vault hands back
 * to be stored: the public half and an opaque `custody` record.
 *
 * Two implementations: SealedKeyVault (sealed-vault.ts, keys sealed under a key-encryption key) and
 * Pkcs11KeyVault (pkcs11-vault.ts, keys made and used inside a PKCS#11 token). A cloud KMS fits the
 * same seam: `generate` makes the key pair in the KMS and returns a custody record naming it,
 * `admit` checks that the named key is reachable, `sign` calls the KMS; `seal`/`reseal` may refuse.
 * docs/KEYS.md says more.
 */
import type { PublicJwk, SigningAlgorithm } from '../crypto/index.js';

/** What the database keeps of a private key: which holder can use it, and that holder's bytes. */
export interface KeyCustody {
  /** For the sealed local vault, the id of the key-encryption key that sealed it. */
  holder: string;
  /** For the sealed local vault, the AES-256-GCM envelope of the private key. */
  bytes: Uint8Array;
}

/** Which key a custody record belongs to: bound into the seal, so a record cannot be moved. */
export interface KeyIdentity {
  kid: string;
  purpose: string;
  alg: SigningAlgorithm;
  publicJwk: PublicJwk;
}

export interface GeneratedKey extends KeyIdentity {
  custody: KeyCustody;
}

export interface KeyVault {
  /** Makes a key pair for a purpose and admits it; only its public half and custody come out. */
  generate(purpose: string, alg: SigningAlgorithm): GeneratedKey;
  /** Takes a stored key into custody so that sign() can use it; throws KeyCustodyError when it cannot. */
  admit(key: KeyIdentity, custody: KeyCustody): void;
  /** Seals the plaintext private key of an older version (the upgrade) and admits it. */
  seal(key: KeyIdentity, plaintext: Uint8Array): KeyCustody;
  /** The custody record made afresh under the vault's current wrapping key (KEK rotation). */
  reseal(key: KeyIdentity, custody: KeyCustody): KeyCustody;
  /** Signs with an admitted key. */
  sign(kid: string, message: Uint8Array): Uint8Array;
  /** Lets go of what the vault holds open (a token session). */
  close?(): void;
}
