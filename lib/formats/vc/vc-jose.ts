/**
 * Verifiable credentials secured as enveloped `vc+jwt` (W3C VC-JOSE-COSE §3.1.1): the unsecured
 * credential is the JWS payload, the protected header says `typ: vc+jwt`, `cty: vc`, the algorithm
 * and the DID URL of the signing key's verification method as `kid`. Ed25519 signatures are
 * deterministic, so one credential and one key always give the same bytes.
 *
 * A credential with members committed to by digests (`_sd`, lib/formats/issuer/disclosure.ts) is
 * secured as `vc+sd-jwt` instead (VC-JOSE-COSE §3.2.1, RFC 9901): the same JWS with `typ: vc+sd-jwt`
 * and `_sd_alg` in the payload, followed by the disclosures presented, each ended by `~`.
 */
import { decodeBase64Url, encodeBase64Url } from '../../crypto/base64url.js';
import { verifyCompact, type KeyResolver, type Signer } from '../../crypto/jws.js';
import { applyDisclosures, SD_ALG, type Disclosure } from '../issuer/disclosure.js';

export const VC_JWT_MEDIA_TYPE = 'application/vc+jwt';
export const VC_SD_JWT_MEDIA_TYPE = 'application/vc+sd-jwt';
export const VC_MEDIA_TYPE = 'application/vc';
export const CREDENTIALS_V2_CONTEXT = 'https://www.w3.org/ns/credentials/v2';

/** JOSE names: `EdDSA` (RFC 8037) is what every JOSE library reads; RFC 9864's `Ed25519` is newer. */
const JOSE_ALG = { Ed25519: 'EdDSA', ES256: 'ES256' } as const;

export interface VcJwtHeader {
  alg: 'EdDSA' | 'ES256';
  typ: 'vc+jwt' | 'vc+sd-jwt';
  cty: 'vc';
  kid: string;
}

function signCompact(header: VcJwtHeader, payload: object, signer: Signer): string {
  const signingInput = `${encodeBase64Url(JSON.stringify(header))}.${encodeBase64Url(JSON.stringify(payload))}`;
  return `${signingInput}.${encodeBase64Url(signer.sign(new TextEncoder().encode(signingInput)))}`;
}

/** Signs a credential as a compact JWS whose payload is the credential's JSON. */
export function signVcJwt(credential: object, signer: Signer, kid: string): string {
  return signCompact({ alg: JOSE_ALG[signer.alg], typ: 'vc+jwt', cty: 'vc', kid }, credential, signer);
}

/**
 * Signs a credential holding `_sd` digests as an SD-JWT (RFC 9901 §4): the JWS over the credential
 * and `_sd_alg`, then each disclosure given, `~`-terminated (no key binding).
 */
export function signVcSdJwt(credential: object, disclosures: readonly string[], signer: Signer, kid: string): string {
  const jws = signCompact({ alg: JOSE_ALG[signer.alg], typ: 'vc+sd-jwt', cty: 'vc', kid }, { ...credential, _sd_alg: SD_ALG }, signer);
  return `${jws}~${disclosures.map((disclosure) => `${disclosure}~`).join('')}`;
}

/** Whether a secured credential is an SD-JWT (its JWS followed by `~`) rather than a plain vc+jwt. */
export const isSdJwt = (secured: string) => secured.includes('~');

/**
 * Verifies a vc+sd-jwt (RFC 9901 §7.1): the JWS under a key the resolver finds by `kid`, `_sd_alg`
 * SHA-256, every disclosure's digest in the signed payload; returns the payload as signed and the
 * credential with the disclosed members in place. Throws on any failure.
 */
export function verifyVcSdJwt(sdJwt: string, resolveKey: KeyResolver): { header: VcJwtHeader; secured: Record<string, unknown>; credential: Record<string, unknown>; disclosed: Disclosure[] } {
  const [jws = '', ...rest] = sdJwt.split('~');
  if (rest.length === 0 || rest.at(-1) !== '') throw new TypeError('an SD-JWT without key binding ends with ~');
  const verified = verifyCompact(jws, resolveKey);
  if (verified.header.typ !== 'vc+sd-jwt') throw new TypeError(`typ is ${String(verified.header.typ)}, not vc+sd-jwt`);
  const secured = JSON.parse(new TextDecoder().decode(verified.payload)) as Record<string, unknown>;
  if (secured._sd_alg !== SD_ALG) throw new TypeError(`_sd_alg is ${String(secured._sd_alg)}, not ${SD_ALG}`);
  const { processed, disclosed } = applyDisclosures(secured, rest.slice(0, -1));
  return { header: verified.header as unknown as VcJwtHeader, secured, credential: processed, disclosed };
}

/** Verifies a vc+jwt under a key the resolver finds by the header's `kid`; returns the header and credential. */
export function verifyVcJwt(jwt: string, resolveKey: KeyResolver): { header: VcJwtHeader; credential: Record<string, unknown> } {
  const verified = verifyCompact(jwt, resolveKey);
  if (verified.header.typ !== 'vc+jwt') throw new TypeError(`typ is ${String(verified.header.typ)}, not vc+jwt`);
  return { header: verified.header as unknown as VcJwtHeader, credential: JSON.parse(new TextDecoder().decode(verified.payload)) as Record<string, unknown> };
}

/** The credential a vc+jwt (or the JWS of a vc+sd-jwt) carries, unverified (to show it, or to find its issuer before verifying). */
export function readVcJwt(jwt: string): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(decodeBase64Url(jwt.split('~')[0]!.split('.')[1] ?? ''))) as Record<string, unknown>;
}

export interface EnvelopedVerifiableCredential {
  '@context': string;
  id: string;
  type: 'EnvelopedVerifiableCredential';
}

/** The VC Data Model 2.0 envelope of a secured credential: a `data:` URL of the vc+jwt or vc+sd-jwt as its id. */
export function envelope(secured: string): EnvelopedVerifiableCredential {
  return { '@context': CREDENTIALS_V2_CONTEXT, id: `data:${securedMediaType(secured)},${secured}`, type: 'EnvelopedVerifiableCredential' };
}

/** The media type of a secured credential: application/vc+sd-jwt for an SD-JWT, else application/vc+jwt. */
export function securedMediaType(secured: string): string {
  return isSdJwt(secured) ? VC_SD_JWT_MEDIA_TYPE : VC_JWT_MEDIA_TYPE;
}
