/**
 * A service's signing keys, kept in its own database so they survive restarts. Each purpose (event
 * signing, carrier signing, notarisation…) has one current key; rotation retires the old key with an
 * `exp` and keeps it in the keyring so that what it signed stays verifiable. Private halves live in
 * a key vault (key-vault.ts): the database holds them sealed, and signing goes through the vault.
 */
import type { KeyResolver, PublicJwk, Signer, SigningAlgorithm } from '../crypto/index.js';
import { KeyCustodyError } from './kek.js';
import type { KeyCustody, KeyVault } from './key-vault.js';

export interface KeyPurpose {
  purpose: string;
  alg: SigningAlgorithm;
  /** What the key signs, as the keyring tells verifiers (`signs`). */
  signs: readonly string[];
}

export interface StoredKey {
  kid: string;
  purpose: string;
  alg: SigningAlgorithm;
  publicJwk: PublicJwk;
  /** The sealed private half; null only for a key of a version before sealing, not yet sealed. */
  custody: KeyCustody | null;
  /** The private half in plaintext, as a version before sealing stored it; sealed on first start. */
  plaintextKey?: Uint8Array | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  revocationReason: string | null;
}

/**
 * A published key: RFC 7517 members, OpenID Federation's historical-key members, and its purpose.
 * POST /trust/nodes takes it as it is (lib/formats/trust/keys.ts names each member): a member added
 * here is added there.
 */
export interface KeyringEntry extends PublicJwk {
  kid: string;
  alg: SigningAlgorithm;
  use: 'sig';
  /** The key store's purpose name: `service`, `event`, `carrier`, `notary`. */
  purpose: string;
  /** The artefacts the key signs. */
  signs: string[];
  iat: number;
  exp?: number;
  revoked?: { revoked_at: number; reason: string };
}

export interface JwkSet {
  keys: KeyringEntry[];
}

export interface KeyRepository {
  all(): Promise<StoredKey[]>;
  add(key: StoredKey): Promise<void>;
  /** Adds the new key and retires the old one in one transaction. */
  rotate(next: StoredKey, retiredKid: string, at: Date): Promise<void>;
  revoke(kid: string, at: Date, reason: string): Promise<void>;
  /** Stores new custody records for these keys (and forgets any plaintext) in one transaction. */
  storeCustody(records: readonly { kid: string; custody: KeyCustody }[]): Promise<void>;
}

function newStoredKey(vault: KeyVault, purpose: KeyPurpose, now = new Date()): StoredKey {
  return { ...vault.generate(purpose.purpose, purpose.alg), createdAt: now, expiresAt: null, revokedAt: null, revocationReason: null };
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

export class KeyStore {
  #keys: StoredKey[];

  private constructor(
    private readonly repository: KeyRepository,
    private readonly vault: KeyVault,
    readonly purposes: readonly KeyPurpose[],
    keys: StoredKey[],
  ) {
    this.#keys = keys;
  }

  /**
   * Loads the keys into the vault, sealing in one transaction any that an older version kept in
   * plaintext, then creates a first key for each purpose that has none. A key the vault cannot open
   * ends the start (KeyCustodyError) before anything is written, so no fresh key is ever made over
   * sealed ones.
   */
  static async open(repository: KeyRepository, vault: KeyVault, purposes: readonly KeyPurpose[]): Promise<KeyStore> {
    const keys = await repository.all();
    const sealedNow: { kid: string; custody: KeyCustody }[] = [];
    for (const key of keys) {
      if (key.custody) vault.admit(key, key.custody);
      else if (key.plaintextKey) sealedNow.push({ kid: key.kid, custody: vault.seal(key, key.plaintextKey) });
      else throw new KeyCustodyError(`The signing key ${key.kid} (${key.purpose}) has no private half stored, sealed or otherwise.`);
    }
    if (sealedNow.length) await repository.storeCustody(sealedNow);
    const store = new KeyStore(repository, vault, purposes, keys);
    for (const purpose of purposes) {
      if (!store.#currentKey(purpose.purpose)) await repository.add(newStoredKey(vault, purpose));
    }
    store.#keys = await repository.all();
    return store;
  }

  #currentKey(purpose: string, at = new Date()): StoredKey | undefined {
    return this.#keys.filter((key) => key.purpose === purpose && !key.revokedAt && (!key.expiresAt || key.expiresAt > at)).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
  }

  #purpose(purpose: string): KeyPurpose {
    const found = this.purposes.find((candidate) => candidate.purpose === purpose);
    if (!found) throw new Error(`this service has no key purpose "${purpose}"`);
    return found;
  }

  /** Signs with the current key of a purpose, through the vault. */
  signer(purpose: string): Signer {
    this.#purpose(purpose);
    const key = this.#currentKey(purpose);
    if (!key) throw new Error(`no current key for "${purpose}"`);
    const { kid, alg } = key;
    return { kid, alg, sign: (data) => this.vault.sign(kid, data) };
  }

  /** The JWK Set verifiers pin: every key ever used, with `iat`, `exp`, `revoked` and its purpose. */
  keyring(): JwkSet {
    return {
      keys: [...this.#keys]
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.kid.localeCompare(b.kid))
        .map((key) => ({
          ...key.publicJwk,
          kid: key.kid,
          alg: key.alg,
          use: 'sig' as const,
          purpose: key.purpose,
          signs: [...(this.purposes.find((candidate) => candidate.purpose === key.purpose)?.signs ?? [])],
          iat: seconds(key.createdAt),
          // Rounded up: a document signed in the same second before the key was retired must still
          // fall before exp (a verifier checks signed_at < exp, both in seconds).
          ...(key.expiresAt ? { exp: Math.ceil(key.expiresAt.getTime() / 1000) } : {}),
          ...(key.revokedAt ? { revoked: { revoked_at: seconds(key.revokedAt), reason: key.revocationReason ?? 'unspecified' } } : {}),
        })),
    };
  }

  /** Resolves any key of the keyring by `kid`, retired ones included. */
  readonly resolveKey: KeyResolver = (header) => {
    const key = this.#keys.find((candidate) => candidate.kid === header.kid);
    return key ? { ...key.publicJwk, kid: key.kid } : undefined;
  };

  /** Makes a new current key for the purpose; the previous one stays published with `exp` = now. */
  async rotate(purpose: string): Promise<KeyringEntry> {
    const next = newStoredKey(this.vault, this.#purpose(purpose));
    const previous = this.#currentKey(purpose);
    if (previous) await this.repository.rotate(next, previous.kid, next.createdAt);
    else await this.repository.add(next);
    this.#keys = await this.repository.all();
    return this.keyring().keys.find((key) => key.kid === next.kid)!;
  }

  /** Marks a key revoked; a revoked current key is replaced at once so signing goes on. */
  async revoke(kid: string, reason: string): Promise<KeyringEntry | undefined> {
    const key = this.#keys.find((candidate) => candidate.kid === kid);
    if (!key) return undefined;
    if (!key.revokedAt) await this.repository.revoke(kid, new Date(), reason);
    this.#keys = await this.repository.all();
    if (!this.#currentKey(key.purpose)) {
      await this.repository.add(newStoredKey(this.vault, this.#purpose(key.purpose)));
      this.#keys = await this.repository.all();
    }
    return this.keyring().keys.find((entry) => entry.kid === kid);
  }
}
