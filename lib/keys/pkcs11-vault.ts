/**
 * A key vault in a PKCS#11 token (an HSM, or SoftHSM2): key pairs are generated inside the token as
 * sensitive, non-extractable objects, and every signature is made there (CKM_EDDSA for Ed25519,
 * CKM_ECDSA over a SHA-256 digest for ES256). The database keeps only the object's CKA_ID as the
 * key's custody record; no private key material exists outside the token.
 *
 * Chosen by `PASSPORT_PKCS11_MODULE` (the PKCS#11 library), with `PASSPORT_PKCS11_TOKEN` (token
 * label, default `passport`) and `PASSPORT_PKCS11_PIN_FILE` (the user PIN). The binding (npm
 * `pkcs11js`, an optional dependency with a native part) is loaded only then.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ed25519PublicJwk, jwkThumbprint, p256PublicJwk, type SigningAlgorithm } from '../crypto/index.js';
import { KeyCustodyError } from './kek.js';
import type { GeneratedKey, KeyCustody, KeyIdentity, KeyVault } from './key-vault.js';

type Handle = Buffer;
interface Attribute {
  type: number;
  value?: Buffer | boolean | number | string;
}
/** The part of pkcs11js's PKCS11 class this vault uses. */
interface Cryptoki {
  load(path: string): void;
  C_Initialize(): void;
  C_GetSlotList(tokenPresent: boolean): Handle[];
  C_GetTokenInfo(slot: Handle): { label: string };
  C_OpenSession(slot: Handle, flags: number): Handle;
  C_CloseSession(session: Handle): void;
  C_Login(session: Handle, userType: number, pin: string): void;
  C_GenerateKeyPair(session: Handle, mechanism: { mechanism: number }, publicTemplate: Attribute[], privateTemplate: Attribute[]): { publicKey: Handle; privateKey: Handle };
  C_GetAttributeValue(session: Handle, object: Handle, template: Attribute[]): Attribute[];
  C_SetAttributeValue(session: Handle, object: Handle, template: Attribute[]): void;
  C_FindObjectsInit(session: Handle, template: Attribute[]): void;
  C_FindObjects(session: Handle, maxObjectCount: number): Handle[];
  C_FindObjectsFinal(session: Handle): void;
  C_SignInit(session: Handle, mechanism: { mechanism: number }, key: Handle): void;
  C_Sign(session: Handle, data: Buffer, signature: Buffer): Buffer;
}

// PKCS#11 2.40 / 3.0 constants (pkcs11js does not export the 3.0 EdDSA ones).
const CKO_PUBLIC_KEY = 2;
const CKO_PRIVATE_KEY = 3;
const CKA = { CLASS: 0x0, TOKEN: 0x1, PRIVATE: 0x2, LABEL: 0x3, ID: 0x102, SENSITIVE: 0x103, SIGN: 0x108, VERIFY: 0x10a, EXTRACTABLE: 0x162, EC_PARAMS: 0x180, EC_POINT: 0x181 };
const CKF_RW_SESSION = 0x2;
const CKF_SERIAL_SESSION = 0x4;
const CKU_USER = 1;
const CKR_USER_ALREADY_LOGGED_IN = 0x100;
const CKR_CRYPTOKI_ALREADY_INITIALIZED = 0x191;

const CURVES: Record<SigningAlgorithm, { generate: number; sign: number; params: Buffer; pointBytes: number }> = {
  // id-Ed25519 (RFC 8410) and prime256v1 as DER object identifiers.
  Ed25519: { generate: 0x1055, sign: 0x1057, params: Buffer.from('06032b6570', 'hex'), pointBytes: 32 },
  ES256: { generate: 0x1040, sign: 0x1041, params: Buffer.from('06082a8648ce3d030107', 'hex'), pointBytes: 65 },
};

export interface Pkcs11Settings {
  module: string;
  token: string;
  pin: string;
}

/** The PKCS#11 settings of the environment, or undefined when no PKCS#11 module is configured. */
export function pkcs11Settings(env: NodeJS.ProcessEnv = process.env): Pkcs11Settings | undefined {
  if (!env.PASSPORT_PKCS11_MODULE) return undefined;
  if (!env.PASSPORT_PKCS11_PIN_FILE) throw new KeyCustodyError("PASSPORT_PKCS11_MODULE is set but PASSPORT_PKCS11_PIN_FILE is not: name the file that holds the token's user PIN.");
  let pin: string;
  try {
    pin = readFileSync(env.PASSPORT_PKCS11_PIN_FILE, 'utf8').trim();
  } catch {
    throw new KeyCustodyError(`The PKCS#11 PIN file ${env.PASSPORT_PKCS11_PIN_FILE} (PASSPORT_PKCS11_PIN_FILE) cannot be read.`);
  }
  return { module: env.PASSPORT_PKCS11_MODULE, token: env.PASSPORT_PKCS11_TOKEN || 'passport', pin };
}

/** One loaded, initialised library per path: every service of a process shares it, each with its own session. */
const loaded = new Map<string, Cryptoki>();

function cryptoki(module: string): Cryptoki {
  let library = loaded.get(module);
  if (!library) {
    let binding: { PKCS11: new () => Cryptoki };
    try {
      binding = createRequire(import.meta.url)('pkcs11js') as typeof binding;
    } catch {
      throw new KeyCustodyError('PASSPORT_PKCS11_MODULE is set but the PKCS#11 binding (npm pkcs11js, an optional dependency) is not installed.');
    }
    library = new binding.PKCS11();
    try {
      library.load(module);
    } catch {
      throw new KeyCustodyError(`The PKCS#11 module ${module} (PASSPORT_PKCS11_MODULE) cannot be loaded.`);
    }
    try {
      library.C_Initialize();
    } catch (error) {
      if ((error as { code?: number }).code !== CKR_CRYPTOKI_ALREADY_INITIALIZED) throw error;
    }
    loaded.set(module, library);
  }
  return library;
}

function attribute(template: Attribute[]): Buffer {
  return template[0]!.value as Buffer;
}

export class Pkcs11KeyVault implements KeyVault {
  readonly #library: Cryptoki;
  readonly #session: Handle;
  readonly #holder: string;
  readonly #opened = new Map<string, { alg: SigningAlgorithm; handle: Handle }>();

  constructor(
    readonly service: string,
    settings: Pkcs11Settings,
  ) {
    this.#library = cryptoki(settings.module);
    const slot = this.#library.C_GetSlotList(true).find((candidate) => this.#library.C_GetTokenInfo(candidate).label.trim() === settings.token);
    if (!slot) throw new KeyCustodyError(`No PKCS#11 token labelled ${settings.token} (PASSPORT_PKCS11_TOKEN) is present in ${settings.module}.`);
    this.#holder = `pkcs11:${settings.token}`;
    this.#session = this.#library.C_OpenSession(slot, CKF_RW_SESSION | CKF_SERIAL_SESSION);
    try {
      this.#library.C_Login(this.#session, CKU_USER, settings.pin);
    } catch (error) {
      if ((error as { code?: number }).code !== CKR_USER_ALREADY_LOGGED_IN) {
        this.#library.C_CloseSession(this.#session);
        throw new KeyCustodyError(`The PKCS#11 token ${settings.token} refused the user PIN from PASSPORT_PKCS11_PIN_FILE.`);
      }
    }
  }

  generate(purpose: string, alg: SigningAlgorithm): GeneratedKey {
    const curve = CURVES[alg];
    const id = randomBytes(16);
    const pair = this.#library.C_GenerateKeyPair(
      this.#session,
      { mechanism: curve.generate },
      [
        { type: CKA.TOKEN, value: true },
        { type: CKA.EC_PARAMS, value: curve.params },
        { type: CKA.VERIFY, value: true },
        { type: CKA.ID, value: id },
      ],
      [
        { type: CKA.TOKEN, value: true },
        { type: CKA.PRIVATE, value: true },
        { type: CKA.SENSITIVE, value: true },
        { type: CKA.EXTRACTABLE, value: false },
        { type: CKA.SIGN, value: true },
        { type: CKA.ID, value: id },
      ],
    );
    const publicJwk = this.#publicJwk(alg, pair.publicKey);
    const kid = jwkThumbprint(publicJwk);
    // A label an operator can read in the token's listing.
    for (const object of [pair.publicKey, pair.privateKey]) this.#library.C_SetAttributeValue(this.#session, object, [{ type: CKA.LABEL, value: `${this.service} ${purpose} ${kid}` }]);
    this.#opened.set(kid, { alg, handle: pair.privateKey });
    return { kid, purpose, alg, publicJwk, custody: { holder: this.#holder, bytes: new Uint8Array(id) } };
  }

  admit(key: KeyIdentity, custody: KeyCustody): void {
    if (custody.holder !== this.#holder) {
      throw new KeyCustodyError(`The ${this.service} signing key ${key.kid} is held by ${custody.holder}, not by the PKCS#11 token this service uses (${this.#holder}).`);
    }
    const id = Buffer.from(custody.bytes);
    const privateKey = this.#find(CKO_PRIVATE_KEY, id);
    const publicKey = this.#find(CKO_PUBLIC_KEY, id);
    if (!privateKey || !publicKey || jwkThumbprint(this.#publicJwk(key.alg, publicKey)) !== key.kid) {
      throw new KeyCustodyError(`The PKCS#11 token ${this.#holder} holds no key pair for the ${this.service} signing key ${key.kid} (${key.purpose}).`);
    }
    this.#opened.set(key.kid, { alg: key.alg, handle: privateKey });
  }

  seal(): KeyCustody {
    throw new KeyCustodyError(`A PKCS#11 token does not take plaintext keys of the ${this.service} service: seal them under a KEK first, then rotate every key.`);
  }

  reseal(): KeyCustody {
    throw new KeyCustodyError('Keys in a PKCS#11 token are not re-wrapped under a key-encryption key.');
  }

  sign(kid: string, message: Uint8Array): Uint8Array {
    const key = this.#opened.get(kid);
    if (!key) throw new KeyCustodyError(`The ${this.service} service holds no signing key ${kid}.`);
    const data = key.alg === 'Ed25519' ? Buffer.from(message) : createHash('sha256').update(message).digest();
    this.#library.C_SignInit(this.#session, { mechanism: CURVES[key.alg].sign }, key.handle);
    return new Uint8Array(this.#library.C_Sign(this.#session, data, Buffer.alloc(64)));
  }

  close(): void {
    this.#library.C_CloseSession(this.#session);
  }

  #find(objectClass: number, id: Buffer): Handle | undefined {
    this.#library.C_FindObjectsInit(this.#session, [
      { type: CKA.CLASS, value: objectClass },
      { type: CKA.ID, value: id },
    ]);
    try {
      return this.#library.C_FindObjects(this.#session, 1)[0];
    } finally {
      this.#library.C_FindObjectsFinal(this.#session);
    }
  }

  /** CKA_EC_POINT is a DER OCTET STRING around the raw point (32 bytes for Ed25519, 65 for P-256). */
  #publicJwk(alg: SigningAlgorithm, publicKey: Handle) {
    const point = attribute(this.#library.C_GetAttributeValue(this.#session, publicKey, [{ type: CKA.EC_POINT }]));
    const raw = point.subarray(point.length - CURVES[alg].pointBytes);
    return alg === 'Ed25519' ? ed25519PublicJwk(raw) : p256PublicJwk(raw);
  }
}
