/**
 * did:web (W3C CCG, "did:web Method Specification"): the DID an https base URL is, the URL its DID
 * document is fetched from, and the document naming published keys as `JsonWebKey` verification
 * methods (W3C VC-JOSE-COSE §"Using Controlled Identifier Documents").
 *
 * `https://dpp.example.com` is `did:web:dpp.example.com` (document at `/.well-known/did.json`);
 * `https://dpp.example.com:8443/issuer` is `did:web:dpp.example.com%3A8443:issuer` (document at
 * `/issuer/did.json`). Resolvers always fetch over https; the scheme of the base URL is not part of
 * the DID.
 */
import type { PublicJwk } from '../../crypto/jwk.js';

/** The DID of a base URL: host (port percent-encoded), then each path segment after a colon. */
export function didWebOf(baseUrl: string): string {
  const url = new URL(baseUrl);
  const host = url.port === '' ? url.hostname : `${url.hostname}%3A${url.port}`;
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  return ['did:web', host, ...segments.map((segment) => encodeURIComponent(decodeURIComponent(segment)))].join(':');
}

/** The https URL a did:web resolver fetches the document from (the method's "Read" steps). */
export function didWebDocumentUrl(did: string): string {
  if (!did.startsWith('did:web:')) throw new TypeError(`not a did:web: ${did}`);
  const [host, ...path] = did.slice('did:web:'.length).split(':');
  const origin = `https://${decodeURIComponent(host!)}`;
  return path.length === 0 ? `${origin}/.well-known/did.json` : `${origin}/${path.map(decodeURIComponent).join('/')}/did.json`;
}

/** Where, relative to its base URL, a service publishes the document of `didWebOf(baseUrl)`. */
export function didDocumentPath(baseUrl: string): '/did.json' | '/.well-known/did.json' {
  return new URL(baseUrl).pathname.replace(/\/+$/, '') === '' ? '/.well-known/did.json' : '/did.json';
}

/** The DID URL of a key's verification method: the DID, `#`, the key's kid (an RFC 7638 thumbprint). */
export function verificationMethodId(did: string, kid: string): string {
  return `${did}#${kid}`;
}

/** The public members of a JWK, without keyring bookkeeping (purpose, iat, exp…). */
const JWK_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'alg', 'kid'] as const;

export interface DidDocumentKey {
  kid: string;
  jwk: PublicJwk;
  /** Listed in assertionMethod: a key that issues credentials. */
  asserts: boolean;
}

export interface DidDocument {
  '@context': string[];
  id: string;
  alsoKnownAs?: string[];
  verificationMethod: { id: string; type: 'JsonWebKey'; controller: string; publicKeyJwk: Record<string, string> }[];
  assertionMethod: string[];
}

/** The media type a DID document is served as (W3C DID Core, JSON-LD representation). */
export const DID_MEDIA_TYPE = 'application/did+ld+json';

export const DID_CONTEXTS = ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/jwk/v1'];

/** The DID document of a DID over these keys; `alsoKnownAs` names the https base URL it stands for. */
export function didDocument(did: string, keys: readonly DidDocumentKey[], alsoKnownAs?: string): DidDocument {
  return {
    '@context': DID_CONTEXTS,
    id: did,
    ...(alsoKnownAs ? { alsoKnownAs: [alsoKnownAs] } : {}),
    verificationMethod: keys.map((key) => ({
      id: verificationMethodId(did, key.kid),
      type: 'JsonWebKey',
      controller: did,
      publicKeyJwk: Object.fromEntries(JWK_MEMBERS.filter((member) => typeof key.jwk[member] === 'string').map((member) => [member, key.jwk[member] as string])),
    })),
    assertionMethod: keys.filter((key) => key.asserts).map((key) => verificationMethodId(did, key.kid)),
  };
}
