/**
 * The platform's JSON-LD context: a definition for every term of the passport credential that neither
 * the VC 2.0 context nor UNTP DPP 0.6.1's defines, so that the credential expands in JSON-LD safe
 * mode (VC 2.0 dropped its `@vocab` for undefined terms in 2024). The platform's own terms map into
 * its vocabulary, `{issuer}/vocab#{term}`, which the issuer serves (`passportVocabulary`); two terms
 * UNTP's vocabulary defines but its 0.6.1 context leaves out map to UNTP's own IRIs.
 *
 * The context is served at a versioned URL, `{issuer}/contexts/passport/v1`, as these bytes: a
 * published version never changes (a new term is a new version, and the old one stays served), so a
 * verifier may cache it for good, and the credential names it with its SHA-384 in `relatedResource`
 * (VC 2.0 §5.3), so a verifier can tell it was given the context the issuer meant (docs/INTEROP.md).
 */
import { createHash } from 'node:crypto';

export const JSON_LD_MEDIA_TYPE = 'application/ld+json';
export const PASSPORT_CONTEXT_PATH = '/contexts/passport/v1';
export const PASSPORT_VOCABULARY_PATH = '/vocab';
/** UNTP's core vocabulary (the namespace its 0.6.1 context calls `untp-core`). */
const UNTP_CORE = 'https://test.uncefact.org/vocabulary/untp/core/0/';

/**
 * The platform's terms. A JSON value (`@json`) is carried as one literal: signed JSON whose exact
 * members matter, or members named by others (a profile), that have no IRIs of their own.
 */
const PLATFORM_TERMS = {
  passportStatus: {
    json: false,
    comment: 'The status of the passport when the credential was made: draft, active, suspended, end_of_life or revoked (status transition rule I6). The status lists say the same to verifiers.',
  },
  capabilityClass: { json: false, comment: 'What a holder can check of the passport: identify, trace or verify-offline.' },
  profileClaims: { json: true, comment: 'The claims of the issuer profile the passport was made under, copied at creation, as the profile states them: not assessed by the platform.' },
  signedLogHead: {
    json: true,
    comment: 'The signed head of the passport’s event log: size, RFC 6962 root hash, timestamp and a detached JWS over the RFC 8785 form of the other members, by the issuer’s event key.',
  },
} as const;

/** The terms of UNTP's vocabulary that UNTP DPP 0.6.1's context leaves out; the product data is a JSON literal (its members are the registry model's, without IRIs). */
const UNTP_GAPS = {
  characteristics: { '@id': `${UNTP_CORE}characteristics`, '@type': '@json' },
  Link: { '@id': `${UNTP_CORE}Link` },
} as const;

export const passportContextUrl = (issuerBase: string) => `${issuerBase}${PASSPORT_CONTEXT_PATH}`;
const vocabularyUrl = (issuerBase: string) => `${issuerBase}${PASSPORT_VOCABULARY_PATH}`;

export interface PassportContext {
  url: string;
  /** The bytes served (UTF-8). */
  text: string;
  /** SRI of the bytes (sha384-, base64), as VC 2.0's `digestSRI`. */
  digestSRI: string;
}

/** The context of an issuer, as served at its URL. */
export function passportContext(issuerBase: string): PassportContext {
  const vocabulary = `${vocabularyUrl(issuerBase)}#`;
  const platformTerms = Object.fromEntries(Object.entries(PLATFORM_TERMS).map(([term, { json }]) => [term, { '@id': `${vocabulary}${term}`, ...(json ? { '@type': '@json' } : {}) }]));
  const text = `${JSON.stringify({ '@context': { '@version': 1.1, '@protected': true, ...platformTerms, ...UNTP_GAPS } }, null, 2)}\n`;
  return { url: passportContextUrl(issuerBase), text, digestSRI: `sha384-${createHash('sha384').update(text).digest('base64')}` };
}

/** The issuer's vocabulary of its own terms (RDF Schema in JSON-LD), served where their IRIs point. */
export function passportVocabulary(issuerBase: string): Record<string, unknown> {
  const vocabulary = vocabularyUrl(issuerBase);
  return {
    '@context': { rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#', rdfs: 'http://www.w3.org/2000/01/rdf-schema#' },
    '@id': vocabulary,
    '@graph': Object.entries(PLATFORM_TERMS).map(([term, { json, comment }]) => ({
      '@id': `${vocabulary}#${term}`,
      '@type': 'rdf:Property',
      'rdfs:label': term,
      'rdfs:comment': comment,
      'rdfs:range': { '@id': json ? 'rdf:JSON' : 'http://www.w3.org/2001/XMLSchema#string' },
      'rdfs:isDefinedBy': { '@id': vocabulary },
    })),
  };
}
