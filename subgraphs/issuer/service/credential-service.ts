/**
 * What the issuer publishes for the credential ecosystem: the UNTP credential of a passport, its
 * did:web document, its Bitstring Status Lists, and the JSON-LD context and vocabulary of its
 * credentials' own terms, each credential signed as vc+jwt with its current credential key.
 */
import type { Signer } from '../../../lib/crypto/index.js';
import type { KeyStore } from '../../../lib/keys/key-store.js';
import type { PassportRepository, PassportRow } from '../data/passport-repository.js';
import {
  didDocument,
  didWebOf,
  isStatusPurpose,
  operatorBaseUrl,
  passportContext,
  passportVocabulary,
  hasRestrictedMembers,
  SD_ALG,
  signVcJwt,
  signVcSdJwt,
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
import { DEFAULT_OPERATOR } from '../../../lib/auth/operators.js';
import { issuerNameOf, type IssuerSettings } from './issuer-service.js';
import type { OperatorSigning } from './operator-signing.js';

/** A credential as issued: the vc+jwt (or vc+sd-jwt with its disclosures), the credential it secures and the DID URL of the key that signed it. */
export interface IssuedCredential {
  jwt: string;
  credential: Record<string, unknown>;
  kid: string;
}

export class CredentialService {
  constructor(
    private readonly passports: PassportRepository,
    private readonly keys: KeyStore,
    private readonly signing: OperatorSigning,
    private readonly settings: IssuerSettings,
  ) {}

  /**
   * An operator's did:web and name as issuer (the default operator's: the issuer's own), from the
   * issuer's public base URL (read each time: a stack learns its ports once the facade listens).
   */
  #issuerIdentity(operator = DEFAULT_OPERATOR) {
    const base = operatorBaseUrl(this.settings.publicUrls('issuer'), operator, DEFAULT_OPERATOR);
    return { base, did: didWebOf(base), name: issuerNameOf(this.settings, operator) };
  }

  /** An operator's did:web. */
  operatorDid(operator: string): string {
    return this.#issuerIdentity(operator).did;
  }

  /** Signs a credential as vc+jwt with an operator's credential key, named by its verification method in the operator's DID document. */
  #issue(credential: Record<string, unknown>, did: string, signer: Signer): IssuedCredential {
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

  /**
   * The UNTP passport credential of the passport as the row holds it (re-issued whenever the row
   * changes), issued by its owner: the owner's did:web, signed with the owner's credential key. A
   * passport whose manifest commits to restricted members by digest is issued as a vc+sd-jwt with
   * the `disclosures` given (the caller's view: IssuerService.disclosures); any other as a vc+jwt.
   */
  async passportCredential(row: PassportRow, disclosures: readonly { disclosure: string }[] = []): Promise<IssuedCredential> {
    // Signed at each read: a suspended owner's key would sign after its node's revocation, which no verifier takes (403 OPERATOR_SUSPENDED).
    const signer = await this.signing.signer(row.operator, 'credential');
    const issuer = this.#issuerIdentity(row.operator);
    const platformBase = this.settings.publicUrls('issuer');
    const credential = untpPassportCredential(CredentialService.state(row), {
      issuer: { did: issuer.did, name: issuer.name },
      baseUrls: { issuer: platformBase, registry: this.settings.publicUrls('registry'), archive: this.settings.publicUrls('archive') },
    });
    if (!hasRestrictedMembers(row.configVector)) return this.#issue(credential, issuer.did, signer);
    const kid = verificationMethodId(issuer.did, signer.kid);
    const texts = disclosures.map((stored) => stored.disclosure);
    return { jwt: signVcSdJwt(credential, texts, signer, kid), credential: { ...credential, _sd_alg: SD_ALG }, kid };
  }

  /**
   * An operator's DID document (the default operator's is the issuer's own, which also lists the
   * platform's service key): every key of the operator not revoked, retired ones included (what they
   * signed stays verifiable), as JsonWebKey verification methods; credential keys assert. Undefined
   * for an operator without keys.
   */
  async didDocument(operator = DEFAULT_OPERATOR): Promise<DidDocument | undefined> {
    if (!this.keys.hasOperator(operator)) await this.keys.reload();
    if (!this.keys.hasOperator(operator)) return undefined;
    const issuer = this.#issuerIdentity(operator);
    const keys = this.keys
      .keyring()
      .keys.filter((key) => key.revoked === undefined && (key.operator ?? DEFAULT_OPERATOR) === operator)
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
    return this.#issue(credential, issuer.did, this.keys.signer('credential', DEFAULT_OPERATOR));
  }
}
