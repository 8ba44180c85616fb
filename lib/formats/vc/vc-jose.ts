/**
 * Verifiable credentials secured as enveloped `vc+jwt` (W3C VC-JOSE-COSE §3.1.1): the unsecured
 * credential is the JWS payload, the protected header says `typ: vc+jwt`, `cty: vc`, the algorithm
 * and the DID URL of the signing key's verification method as `kid`. Ed25519 signatures are
 * deterministic, so one credential and one key always give the same bytes.
 */
import { decodeBase64Url, encodeBase64Url } from '../../crypto/base64url.js';
import { verifyCompact, type KeyResolver, type Signer } from '../../crypto/jws.js';

export const VC_JWT_MEDIA_TYPE = 'application/vc+jwt';
export const VC_MEDIA_TYPE = 'application/vc';
export const CREDENTIALS_V2_CONTEXT = 'https://www.w3.org/ns/credentials/v2';

/** JOSE names: `EdDSA` (RFC 8037) is what every JOSE library reads; RFC 9864's `Ed25519` is newer. */
const JOSE_ALG = { Ed25519: 'EdDSA', ES256: 'ES256' } as const;

export interface VcJwtHeader {
  alg: 'EdDSA' | 'ES256';
  typ: 'vc+jwt';
  cty: 'vc';
  kid: string;
}

/** Signs a credential as a compact JWS whose payload is the credential's JSON. */
export function signVcJwt(credential: object, signer: Signer, kid: string): string {
  const header: VcJwtHeader = { alg: JOSE_ALG[signer.alg], typ: 'vc+jwt', cty: 'vc', kid };
  const signingInput = `${encodeBase64Url(JSON.stringify(header))}.${encodeBase64Url(JSON.stringify(credential))}`;
  return `${signingInput}.${encodeBase64Url(signer.sign(new TextEncoder().encode(signingInput)))}`;
}

/** Verifies a vc+jwt under a key the resolver finds by the header's `kid`; returns the header and credential. */
export function verifyVcJwt(jwt: string, resolveKey: KeyResolver): { header: VcJwtHeader; credential: Record<string, unknown> } {
  const verified = verifyCompact(jwt, resolveKey);
  if (verified.header.typ !== 'vc+jwt') throw new TypeError(`typ is ${String(verified.header.typ)}, not vc+jwt`);
  return { header: verified.header as unknown as VcJwtHeader, credential: JSON.parse(new TextDecoder().decode(verified.payload)) as Record<string, unknown> };
}

/** The credential a vc+jwt carries, unverified (to show it, or to find its issuer before verifying). */
export function readVcJwt(jwt: string): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(decodeBase64Url(jwt.split('.')[1] ?? ''))) as Record<string, unknown>;
}

export interface EnvelopedVerifiableCredential {
  '@context': string;
  id: string;
  type: 'EnvelopedVerifiableCredential';
}

/** The VC Data Model 2.0 envelope of a secured credential: a `data:` URL of the JWT as its id. */
export function envelope(jwt: string): EnvelopedVerifiableCredential {
  return { '@context': CREDENTIALS_V2_CONTEXT, id: `data:${VC_JWT_MEDIA_TYPE},${jwt}`, type: 'EnvelopedVerifiableCredential' };
}
