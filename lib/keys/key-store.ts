/**
 * A service's signing keys, kept in its own database so they survive restarts. Each purpose (event
 * signing, carrier signing, notarisation…) has one current key, or, for a purpose whose keys sign
 * for an operator (the issuer's event, carrier and credential keys), one current key per operator;
 * rotation retires the old key with an `exp` and keeps it in the keyring so that what it signed stays
 * verifiable. Private halves live in a key vault (key-vault.ts): the database holds them sealed, and
 * signing goes through the vault.
 */
import type { KeyResolver, PublicJwk, Signer, SigningAlgorithm } from '../crypto/index.js';
import { DEFAULT_OPERATOR } from '../auth/operators.js';
import { KeyCustodyError } from './kek.js';
import type { KeyCustody, KeyVault } from './key-vault.js';

export interface KeyPurpose {
  purpose: string;
  alg: SigningAlgorithm;
  /** What the key signs, as the keyring tells verifiers (`signs`). */
  signs: readonly string[];
  /** Each operator has its own key of this purpose (docs/OPERATORS.md); otherwise the key is the platform's. */
  perOperator?: boolean;
}

export interface StoredKey {
  kid: string;
  purpose: string;
  /** The operator the key signs for; null for the platform's own keys. */
  operator: string | null;
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
  /** The operator the key signs for (its node in the trust graph is `operator:<id>`); absent for the platform's own keys. */
  operator?: string;
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
  /** Adds the keys in one transaction. */
  add(...keys: StoredKey[]): Promise<void>;
  /** Adds the new key and retires the old one in one transaction. */
  rotate(next: StoredKey, retiredKid: string, at: Date): Promise<void>;
  revoke(kid: string, at: Date, reason: string): Promise<void>;
  /** Stores new custody records for these keys (and forgets any plaintext) in one transaction. */
  storeCustody(records: readonly { kid: string; custody: KeyCustody }[]): Promise<void>;
}

function newStoredKey(vault: KeyVault, purpose: KeyPurpose, operator: string | null, now = new Date()): StoredKey {
  return { ...vault.generate(purpose.purpose, purpose.alg), operator, createdAt: now, expiresAt: null, revokedAt: null, revocationReason: null };
}

/**
 * The operator a purpose's keys sign for: for a per-operator purpose the given one, else the default
 * operator (whose keys were the service's before operators: `keys rotate issuer event` rotates its);
 * for any other purpose the platform (null).
 */
function ownerOf(purpose: KeyPurpose, operator: string | undefined): string | null {
  return purpose.perOperator ? (operator ?? DEFAULT_OPERATOR) : null;
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
   * plaintext, then creates a first key for each purpose that has none (for the default operator,
   * each per-operator purpose). A key the vault cannot open ends the start (KeyCustodyError) before
   * anything is written, so no fresh key is ever made over sealed ones.
   */
  static async open(repository: KeyRepository, vault: KeyVault, purposes: readonly KeyPurpose[]): Promise<KeyStore> {
    const keys = await repository.all();
    const store = new KeyStore(repository, vault, purposes, []);
    const sealedNow = store.#admit(keys);
    if (sealedNow.length) await repository.storeCustody(sealedNow);
    store.#keys = keys;
    for (const purpose of purposes) {
      const operator = ownerOf(purpose, undefined);
      if (!store.#currentKey(purpose.purpose, operator)) await repository.add(newStoredKey(vault, purpose, operator));
    }
    store.#keys = await repository.all();
    return store;
  }

  /** Takes keys into the vault; returns the custody records of those an older version kept in plaintext, sealed now. */
  #admit(keys: readonly StoredKey[]): { kid: string; custody: KeyCustody }[] {
    const sealedNow: { kid: string; custody: KeyCustody }[] = [];
    for (const key of keys) {
      if (key.custody) this.vault.admit(key, key.custody);
      else if (key.plaintextKey) sealedNow.push({ kid: key.kid, custody: this.vault.seal(key, key.plaintextKey) });
      else throw new KeyCustodyError(`The signing key ${key.kid} (${key.purpose}) has no private half stored, sealed or otherwise.`);
    }
    return sealedNow;
  }

  #currentKey(purpose: string, operator: string | null, at = new Date()): StoredKey | undefined {
    return this.#keys
      .filter((key) => key.purpose === purpose && key.operator === operator && !key.revokedAt && (!key.expiresAt || key.expiresAt > at))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
  }

  #purpose(purpose: string): KeyPurpose {
    const found = this.purposes.find((candidate) => candidate.purpose === purpose);
    if (!found) throw new Error(`this service has no key purpose "${purpose}"`);
    return found;
  }

  /** Signs with the current key of a purpose (of `operator`, for a per-operator purpose), through the vault. */
  signer(purpose: string, operator?: string): Signer {
    const owner = ownerOf(this.#purpose(purpose), operator);
    const key = this.#currentKey(purpose, owner);
    if (!key) throw new Error(`no current key for "${purpose}"${owner === null ? '' : ` of operator ${owner}`}`);
    const { kid, alg } = key;
    return { kid, alg, sign: (data) => this.vault.sign(kid, data) };
  }

  /** Whether the operator has a current key of every per-operator purpose, as this store last read them. */
  hasOperator(operator: string): boolean {
    return this.purposes.every((purpose) => !purpose.perOperator || this.#currentKey(purpose.purpose, operator) !== undefined);
  }

  /** Reads the keys anew (another instance may have made an operator's keys), taking new ones into the vault. */
  async reload(): Promise<void> {
    const keys = await this.repository.all();
    const known = new Set(this.#keys.map((key) => key.kid));
    this.#admit(keys.filter((key) => !known.has(key.kid) && key.custody));
    this.#keys = keys;
  }

  /**
   * Makes the operator's first key of every per-operator purpose it has none of, all in one
   * transaction: an operator has all its keys or none. Repeating it changes nothing.
   */
  async addOperator(operator: string): Promise<KeyringEntry[]> {
    await this.reload();
    const missing = this.purposes.filter((purpose) => purpose.perOperator && !this.#currentKey(purpose.purpose, operator));
    if (missing.length) await this.repository.add(...missing.map((purpose) => newStoredKey(this.vault, purpose, operator)));
    this.#keys = await this.repository.all();
    return this.keyring().keys.filter((key) => key.operator === operator);
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
          ...(key.operator === null ? {} : { operator: key.operator }),
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

  /** Makes a new current key for the purpose (of `operator`, for a per-operator purpose); the previous one stays published with `exp` = now. */
  async rotate(purpose: string, operator?: string): Promise<KeyringEntry> {
    const kind = this.#purpose(purpose);
    const owner = ownerOf(kind, operator);
    const next = newStoredKey(this.vault, kind, owner);
    const previous = this.#currentKey(purpose, owner);
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
    if (!this.#currentKey(key.purpose, key.operator)) {
      await this.repository.add(newStoredKey(this.vault, this.#purpose(key.purpose), key.operator));
      this.#keys = await this.repository.all();
    }
    return this.keyring().keys.find((entry) => entry.kid === kid);
  }
}
