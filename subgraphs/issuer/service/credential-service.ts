/**
 * What the issuer publishes for the credential ecosystem: the UNTP credential of a passport, its
 * did:web document, its Bitstring Status Lists, and the JSON-LD context and vocabulary of its
 * credentials' own terms, each credential signed as vc+jwt with its current credential key.
 */
import type { KeyStore } from '../../../lib/keys/key-store.js';
import type { PassportRepository, PassportRow } from '../data/passport-repository.js';
import {
  didDocument,
  didWebOf,
  isStatusPurpose,
  passportContext,
  passportVocabulary,
  signVcJwt,
  statusListCredential,
  statusListUrl,
  untpPassportCredential,
  verificationMethodId,
  type DidDocument,
  type PassportContext,
  type PassportCredentialState,
  type PassportIdentity,
  type PassportStatus,
  type SignedLogHead,
} from '../domain/index.js';
import type { IssuerSettings } from './issuer-service.js';

/** A credential as issued: the vc+jwt, the credential it secures and the DID URL of the key that signed it. */
export interface IssuedCredential {
  jwt: string;
  credential: Record<string, unknown>;
  kid: string;
}

export class CredentialService {
  constructor(
    private readonly passports: PassportRepository,
    private readonly keys: KeyStore,
    private readonly settings: IssuerSettings,
  ) {}

  /** The issuer's did:web and who it is, from its public base URL (read each time: a stack learns its ports once the facade listens). */
  #issuerIdentity() {
    const base = this.settings.publicUrls('issuer');
    return { base, did: didWebOf(base), name: this.settings.issuer };
  }

  /** Signs a credential as vc+jwt with the current credential key, named by its verification method in the DID document. */
  #issue(credential: Record<string, unknown>, did: string): IssuedCredential {
    const signer = this.keys.signer('credential');
    const kid = verificationMethodId(did, signer.kid);
    return { jwt: signVcJwt(credential, signer, kid), credential, kid };
  }

  /** What the credential is made from: the passport as its log head leaves it. */
  static state(row: PassportRow): PassportCredentialState {
    return {
      id: row.id,
      identity: (row.core as unknown as { identity: PassportIdentity }).identity,
      typeRef: { id: row.typeRefId, version: row.typeRefVersion },
      manifest: row.configVector as Record<string, unknown>,
      capabilityClass: row.capabilityClass,
      claims: (row.claims as Record<string, unknown> | null) ?? {},
      status: row.status as PassportStatus,
      logHead: row.logHead as unknown as SignedLogHead,
      statusIndex: row.statusIndex,
      createdAt: row.createdAt.toISOString(),
    };
  }

  /** The UNTP passport credential of the passport as the row holds it (re-issued whenever the row changes). */
  passportCredential(row: PassportRow): IssuedCredential {
    const issuer = this.#issuerIdentity();
    const credential = untpPassportCredential(CredentialService.state(row), {
      issuer: { did: issuer.did, name: issuer.name },
      baseUrls: { issuer: issuer.base, registry: this.settings.publicUrls('registry'), archive: this.settings.publicUrls('archive') },
    });
    return this.#issue(credential, issuer.did);
  }

  /**
   * The issuer's DID document: every key of its keyring not revoked, retired ones included (what they
   * signed stays verifiable), as JsonWebKey verification methods; credential keys assert.
   */
  didDocument(): DidDocument {
    const issuer = this.#issuerIdentity();
    const keys = this.keys
      .keyring()
      .keys.filter((key) => key.revoked === undefined)
      .map((key) => ({ kid: key.kid, jwk: key, asserts: key.purpose === 'credential' }));
    return didDocument(issuer.did, keys, issuer.base);
  }

  /** The JSON-LD context of the terms its credentials add to VC 2.0 and UNTP, as served (passport-context.ts). */
  passportContext(): PassportContext {
    return passportContext(this.#issuerIdentity().base);
  }

  /** The vocabulary the context maps those terms into. */
  passportVocabulary(): Record<string, unknown> {
    return passportVocabulary(this.#issuerIdentity().base);
  }

  /** A Bitstring Status List credential, or null when there is no such list. */
  async statusListCredential(purpose: string, list: number): Promise<IssuedCredential | null> {
    if (!isStatusPurpose(purpose) || !Number.isSafeInteger(list) || list < 0 || list > 2 ** 31 - 1) return null;
    const stored = await this.passports.statusList(purpose, list);
    if (!stored) return null;
    const issuer = this.#issuerIdentity();
    const credential = statusListCredential({
      url: statusListUrl(issuer.base, purpose, list),
      issuer: { id: issuer.did, name: issuer.name },
      purpose,
      validFrom: stored.updatedAt,
      bits: stored.bits,
    });
    return this.#issue(credential, issuer.did);
  }
}
