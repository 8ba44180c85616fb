/**
 * The local key vault: private keys sealed with AES-256-GCM under the key-encryption key (kek.ts),
 * opened into this process's memory at start, and used only through sign(). The seal binds the
 * service, kid and purpose as associated data, so a sealed key copied to another row, purpose or
 * service does not open.
 *
 * Sealed form: version byte 1 ‖ 12-byte nonce ‖ ciphertext ‖ 16-byte tag.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ed25519PublicJwk, generateSecretKey, jwkThumbprint, p256PublicJwk, publicKeyOf, signBytes, type SigningAlgorithm } from '../crypto/index.js';
import { isKekId, KeyCustodyError, type KeyEncryptionKeys } from './kek.js';
import type { GeneratedKey, KeyCustody, KeyIdentity, KeyVault } from './key-vault.js';

const FORMAT = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

function associatedData(service: string, key: KeyIdentity): Buffer {
  return Buffer.from(JSON.stringify(['passport sealed signing key', FORMAT, service, key.kid, key.purpose]), 'utf8');
}

function kidOf(alg: SigningAlgorithm, secretKey: Uint8Array): { kid: string; publicJwk: KeyIdentity['publicJwk'] } {
  const publicKey = publicKeyOf(alg, secretKey);
  const publicJwk = alg === 'Ed25519' ? ed25519PublicJwk(publicKey) : p256PublicJwk(publicKey);
  return { kid: jwkThumbprint(publicJwk), publicJwk };
}

export class SealedKeyVault implements KeyVault {
  /** Opened private keys by kid. Nothing reads them out: they go to signBytes only. */
  readonly #opened = new Map<string, { alg: SigningAlgorithm; secretKey: Uint8Array }>();

  constructor(
    readonly service: string,
    readonly keys: KeyEncryptionKeys,
  ) {}

  generate(purpose: string, alg: SigningAlgorithm): GeneratedKey {
    const secretKey = generateSecretKey(alg);
    const identity = { ...kidOf(alg, secretKey), purpose, alg };
    const custody = this.#sealWith(identity, secretKey);
    this.#opened.set(identity.kid, { alg, secretKey });
    return { ...identity, custody };
  }

  admit(key: KeyIdentity, custody: KeyCustody): void {
    this.#opened.set(key.kid, { alg: key.alg, secretKey: this.#open(key, custody) });
  }

  seal(key: KeyIdentity, plaintext: Uint8Array): KeyCustody {
    this.#checkPair(key, plaintext);
    const custody = this.#sealWith(key, plaintext);
    this.#opened.set(key.kid, { alg: key.alg, secretKey: new Uint8Array(plaintext) });
    return custody;
  }

  reseal(key: KeyIdentity, custody: KeyCustody): KeyCustody {
    return this.#sealWith(key, this.#open(key, custody));
  }

  sign(kid: string, message: Uint8Array): Uint8Array {
    const key = this.#opened.get(kid);
    if (!key) throw new KeyCustodyError(`The ${this.service} service holds no signing key ${kid}.`);
    return signBytes(key.alg, key.secretKey, message);
  }

  #sealWith(key: KeyIdentity, secretKey: Uint8Array): KeyCustody {
    const kek = this.keys.latest().current;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', kek.bytes, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData(this.service, key));
    const ciphertext = Buffer.concat([cipher.update(secretKey), cipher.final()]);
    return { holder: kek.id, bytes: new Uint8Array(Buffer.concat([Buffer.of(FORMAT), nonce, ciphertext, cipher.getAuthTag()])) };
  }

  #open(key: KeyIdentity, custody: KeyCustody): Uint8Array {
    if (!isKekId(custody.holder)) {
      throw new KeyCustodyError(`The ${this.service} signing keys are held by ${custody.holder}, not sealed under a key-encryption key: start with PASSPORT_PKCS11_MODULE set (docs/KEYS.md).`);
    }
    const kek = this.keys.byId(custody.holder) ?? this.keys.latest().byId(custody.holder);
    if (!kek) {
      throw new KeyCustodyError(
        `The ${this.service} signing keys are sealed under key-encryption key ${custody.holder}, which ${this.keys.source} does not hold (it holds ${this.keys.ids.join(', ')}): start with the key-encryption key file they were sealed under.`,
      );
    }
    const sealed = Buffer.from(custody.bytes);
    const refused = () =>
      new KeyCustodyError(
        `The sealed private key ${key.kid} (${key.purpose}) of the ${this.service} service does not open under key-encryption key ${kek.id}: its sealed bytes, or the service, kid or purpose bound to them, were altered.`,
      );
    if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES || sealed[0] !== FORMAT) throw refused();
    let secretKey: Uint8Array;
    try {
      const decipher = createDecipheriv('aes-256-gcm', kek.bytes, sealed.subarray(1, 1 + NONCE_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(associatedData(this.service, key));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      secretKey = new Uint8Array(Buffer.concat([decipher.update(sealed.subarray(1 + NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]));
    } catch {
      throw refused();
    }
    this.#checkPair(key, secretKey);
    return secretKey;
  }

  /** The private key must be the one the published kid names. */
  #checkPair(key: KeyIdentity, secretKey: Uint8Array): void {
    let kid: string | undefined;
    try {
      kid = kidOf(key.alg, secretKey).kid;
    } catch {
      kid = undefined;
    }
    if (kid !== key.kid) throw new KeyCustodyError(`The private key stored for ${key.kid} (${key.purpose}) of the ${this.service} service is not the private half of that published key.`);
  }
}
