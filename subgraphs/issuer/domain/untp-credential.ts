/**
 * The UNTP Digital Product Passport credential of a passport (UNTP DPP 0.6.1, W3C VC Data Model 2.0),
 * as a pure function of the passport's state at its log head: the same state gives the same
 * credential, so it can be rebuilt as it was at any head (docs/INTEROP.md says what maps to what).
 * Also which status list bits a passport status sets.
 */
import { CREDENTIALS_V2_CONTEXT, JSON_LD_MEDIA_TYPE, passportContext, statusListEntry, statusPosition, type BitstringStatusListEntry, type StatusPurpose } from '../../../lib/formats/vc/index.js';
import type { SignedLogHead } from '../../../lib/formats/issuer/checkpoint.js';
import type { PassportStatus } from '../../../lib/formats/issuer/status.js';
import type { PassportIdentity } from './identity.js';

/** The UNTP DPP context of the release this credential follows (spec-untp tag v0.6.1). */
export const UNTP_DPP_CONTEXT = 'https://test.uncefact.org/vocabulary/untp/dpp/0.6.1/';
export const UNTP_DPP_VERSION = '0.6.1';

/** Everything the credential is made from: the passport as its log head leaves it. */
export interface PassportCredentialState {
  id: string;
  identity: PassportIdentity;
  typeRef: { id: string; version: number };
  /** The config vector (the manifest). */
  manifest: Record<string, unknown>;
  capabilityClass: string;
  /** The profile's claims, copied at creation. */
  claims: Record<string, unknown>;
  status: PassportStatus;
  logHead: SignedLogHead;
  /** The passport's entry in the status lists (assigned at creation). */
  statusIndex: number;
  /** When the passport was issued: when its config vector was validated against its model. */
  createdAt: string;
}

/** Who issues, and where each service is publicly reachable. */
export interface CredentialContext {
  issuer: { did: string; name: string };
  baseUrls: { issuer: string; registry: string; archive: string };
}

/** The bit of each status purpose a passport status sets: revoked is revocation, suspended suspension. */
export function statusBits(status: PassportStatus): Record<StatusPurpose, boolean> {
  return { revocation: status === 'revoked', suspension: status === 'suspended' };
}

/** The URL of one status list of a purpose. */
export function statusListUrl(issuerBase: string, purpose: StatusPurpose, list: number): string {
  return `${issuerBase}/status-lists/${purpose}/${list}`;
}

/** A passport's two entries, revocation then suspension, at the same index of their lists. */
export function passportStatusEntries(issuerBase: string, statusIndex: number): BitstringStatusListEntry[] {
  const { list, entry } = statusPosition(statusIndex);
  return (['revocation', 'suspension'] as const).map((purpose) => statusListEntry(statusListUrl(issuerBase, purpose, list), purpose, entry));
}

/**
 * The base URL an operator is its did:web of (docs/OPERATORS.md): the issuer's own for the default
 * operator, which issued as the issuer before operators, so its credentials name the DID they always
 * named; `{issuer}/operators/{id}` for any other, whose DID document is served under it.
 */
export function operatorBaseUrl(issuerBase: string, operator: string, defaultOperator: string): string {
  return operator === defaultOperator ? issuerBase : `${issuerBase}/operators/${encodeURIComponent(operator)}`;
}

export function passportCredentialUrl(issuerBase: string, passportId: string): string {
  return `${issuerBase}/passports/${encodeURIComponent(passportId)}/credential`;
}

/**
 * Registered link types of what the credential links to, as the Digital Link resolver spells them:
 * GS1 Web Vocabulary terms on ref.gs1.org, UNTP's for traceability events, IANA link relations by name.
 */
export const LINK_TYPES = {
  dpp: 'https://ref.gs1.org/voc/dpp',
  traceabilityEvents: 'https://test.uncefact.org/vocabulary/linkTypes/dte',
  verification: 'https://ref.gs1.org/voc/verificationService',
  archives: 'archives',
} as const;

/** UNTP's Link: a URL, a name and a link type. */
const link = (linkURL: string, linkName: string, linkType: string) => ({ type: ['Link'], linkURL, linkName, linkType });

/**
 * The product's name: the config vector's `product_name` or `name` when it has one as a string, else
 * a name made of the model and the GTIN (UNTP requires one; the platform keeps none of its own).
 */
function productName(state: PassportCredentialState): string {
  for (const member of ['product_name', 'name']) {
    const value = state.manifest[member];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return `${state.typeRef.id} v${state.typeRef.version}, GTIN ${state.identity.gtin}`;
}

/**
 * The one conformity the issuer assessed: at issue, the config vector (carried as the product's
 * characteristics) validated against the registry model version's JSON Schema, or the passport would
 * not exist. It is a transparency claim (the data the model asks for is disclosed, in its form), not
 * one of regulatory compliance: nobody assessed whether the product or the values meet the
 * regulation a model may follow. The criterion is the issuer's issuing rule for that model version,
 * in force for every passport of it. Self-assessed: no conformity credential attests it.
 */
function modelConformityClaim(state: PassportCredentialState, passportUrl: string, registry: string) {
  const model = `${state.typeRef.id} v${state.typeRef.version}`;
  return {
    type: ['Claim', 'Declaration'],
    id: `${passportUrl}#model-conformity`,
    description: `The product data (characteristics) is valid against registry model ${model}, as the issuer checked when it issued the passport. Only the presence and form of the data were assessed, not whether they are true of the product or meet a regulation.`,
    assessmentDate: state.createdAt.slice(0, 10),
    conformance: true,
    conformityTopic: 'governance.transparency',
    assessmentCriteria: [
      {
        type: ['Criterion'],
        // The registry's check of a document against the model version (the model itself is the product's category).
        id: `${registry}/models/${encodeURIComponent(state.typeRef.id)}/validate?version=${state.typeRef.version}`,
        name: `Product data valid against registry model ${model}`,
        description: `The config vector validates against the JSON Schema 2020-12 of registry model ${model}: every member it requires is given, in the form it prescribes. The issuer issues no passport of the model otherwise.`,
        conformityTopic: 'governance.transparency',
        status: 'active',
      },
    ],
  };
}

/** The unsecured credential. */
export function untpPassportCredential(state: PassportCredentialState, context: CredentialContext): Record<string, unknown> {
  const { issuer: issuerBase, registry, archive } = context.baseUrls;
  const passportUrl = `${issuerBase}/passports/${encodeURIComponent(state.id)}`;
  const modelUrl = `${registry}/models/${encodeURIComponent(state.typeRef.id)}?version=${state.typeRef.version}`;
  // `type` and `id` are UNTP's own members of Characteristics; the rest of the config vector is carried as it is.
  const { type: _type, id: _id, ...characteristics } = state.manifest;
  const identity = state.identity;
  const platformContext = passportContext(issuerBase);
  return {
    '@context': [CREDENTIALS_V2_CONTEXT, UNTP_DPP_CONTEXT, platformContext.url],
    type: ['DigitalProductPassport', 'VerifiableCredential'],
    id: passportCredentialUrl(issuerBase, state.id),
    issuer: { type: ['CredentialIssuer'], id: context.issuer.did, name: context.issuer.name },
    // The time of the log head: the last event's, or the passport's creation for an empty log.
    validFrom: state.logHead.timestamp,
    credentialStatus: passportStatusEntries(issuerBase, state.statusIndex),
    // The platform's context, with the digest of the bytes it is served as (VC 2.0 §5.3).
    relatedResource: [{ id: platformContext.url, mediaType: JSON_LD_MEDIA_TYPE, digestSRI: platformContext.digestSRI }],
    credentialSubject: {
      type: ['ProductPassport'],
      id: passportUrl,
      granularityLevel: identity.granularity,
      product: {
        type: ['Product'],
        id: identity.digital_link,
        name: productName(state),
        registeredId: identity.gtin,
        idScheme: { type: ['IdentifierScheme'], id: 'https://id.gs1.org/01', name: 'Global Trade Item Number (GTIN)' },
        ...(identity.lot !== undefined ? { batchNumber: identity.lot } : {}),
        ...(identity.serial !== undefined ? { serialNumber: identity.serial } : {}),
        characteristics: { type: ['Characteristics'], ...characteristics },
        productCategory: [
          {
            type: ['Classification'],
            id: modelUrl,
            code: `${state.typeRef.id}@${state.typeRef.version}`,
            name: `${state.typeRef.id} v${state.typeRef.version}`,
            schemeID: `${registry}/models`,
            schemeName: 'Passport registry models',
          },
        ],
        furtherInformation: [
          link(passportUrl, 'Passport: core, manifest and signed log head', LINK_TYPES.dpp),
          link(`${passportUrl}?include_events=true`, 'Signed event log', LINK_TYPES.traceabilityEvents),
          link(`${passportUrl}/verdict`, 'Verification verdict', LINK_TYPES.verification),
          link(`${archive}/snapshots?passport_id=${encodeURIComponent(state.id)}`, 'Archive snapshots', LINK_TYPES.archives),
        ],
      },
      conformityClaim: [modelConformityClaim(state, passportUrl, registry)],
      // Beyond UNTP (terms of the platform's context, passport-context.ts): what the platform vouches for.
      passportStatus: state.status,
      capabilityClass: state.capabilityClass,
      ...(Object.keys(state.claims).length > 0 ? { profileClaims: state.claims } : {}),
      signedLogHead: state.logHead,
    },
  };
}
