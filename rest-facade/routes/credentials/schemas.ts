/** The JSON Schemas of the issuer's W3C credentials, DID document and JSON-LD documents, each with its example. */
import { CREDENTIALS_V2_CONTEXT, DID_CONTEXTS, envelope, passportContext, passportVocabulary, VC_JWT_MEDIA_TYPE, VC_MEDIA_TYPE, VC_SD_JWT_MEDIA_TYPE } from '../../../lib/formats/vc/index.js';
import type { JsonSchema } from '../../route-table.js';
import { answer, closed, EXAMPLE_ED25519_JWK, EXAMPLE_KID, EXAMPLE_SIGNATURE, publicJwk, uri } from '../../schemas.js';

const vcJwt: JsonSchema = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
  description: 'A compact JWS: protected header (typ vc+jwt, cty vc, alg EdDSA, kid a DID URL), the credential, the signature.',
};
const envelopedCredential = closed(
  {
    '@context': { const: CREDENTIALS_V2_CONTEXT },
    id: { type: 'string', pattern: '^data:application/vc\\+(?:sd-)?jwt,', description: 'The vc+jwt (or vc+sd-jwt) as a data: URL.' },
    type: { const: 'EnvelopedVerifiableCredential' },
  },
  {},
  'VC Data Model 2.0 envelope of the vc+jwt.',
);
const EXAMPLE_VC_JWT =
  'eyJhbGciOiJFZERTQSIsInR5cCI6InZjK2p3dCIsImN0eSI6InZjIiwia2lkIjoiZGlkOndlYjpkcHAuZXhhbXBsZS5jb206aXNzdWVyI3lYeGlsaGlqTXJZa2R0OWw2aS1QNDBWWXJTTDMxOE1vdTkyaVNhYzQ2M28ifQ.eyJAY29udGV4dCI6WyJodHRwczovL3d3dy53My5vcmcvbnMvY3JlZGVudGlhbHMvdjIiXX0.' +
  EXAMPLE_SIGNATURE.split('.').pop();
const vcSdJwt: JsonSchema = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+~(?:[A-Za-z0-9_-]+~)*$',
  description: 'An SD-JWT (RFC 9901): the compact JWS (typ vc+sd-jwt), then each disclosure the caller may read, each ended by ~.',
};
const EXAMPLE_VC_SD_JWT = `${EXAMPLE_VC_JWT}~WyJfMjZiYzRMVC1hYzZxMktJNmNCVzVlcyIsICJmYW1pbHlfbmFtZSIsICJNw7ZiaXVzIl0~`;

/**
 * A credential's 200: the vc+jwt, or as Accept asks its envelope; `selective`: a passport's, which is
 * a vc+sd-jwt when its profile restricts members (docs/OPERATORS.md, Audiences).
 */
export const credential = (what: string, selective = false) => ({
  description: `${what}: application/vc+jwt by default${selective ? ' (application/vc+sd-jwt, with the disclosures the caller may read, when the passport has restricted members)' : ''}; with Accept application/vc or application/json, its EnvelopedVerifiableCredential. ETag per representation; If-None-Match gives 304.`,
  mediaType: VC_JWT_MEDIA_TYPE,
  schema: vcJwt,
  example: EXAMPLE_VC_JWT,
  headers: { ETag: { type: 'string', description: 'Entity tag of this representation.' } },
  alternatives: {
    [VC_MEDIA_TYPE]: { schema: envelopedCredential, example: envelope(EXAMPLE_VC_JWT) },
    'application/json': { schema: envelopedCredential, example: envelope(EXAMPLE_VC_JWT) },
    ...(selective ? { [VC_SD_JWT_MEDIA_TYPE]: { schema: vcSdJwt, example: EXAMPLE_VC_SD_JWT } } : {}),
  },
});

const EXAMPLE_ISSUER = 'https://dpp.example.com/issuer';
const EXAMPLE_DID = 'did:web:dpp.example.com:issuer';
export const didDocument = answer(
  closed(
    {
      '@context': { type: 'array', items: { type: 'string' } },
      id: { type: 'string', pattern: '^did:web:', description: 'did:web of the issuer’s public base URL.' },
      verificationMethod: {
        type: 'array',
        items: closed({
          id: { type: 'string', description: 'DID URL: the DID, #, the key’s kid; what a credential’s JWS kid names.' },
          type: { const: 'JsonWebKey' },
          controller: { type: 'string' },
          publicKeyJwk: { ...publicJwk, properties: { ...(publicJwk.properties as Record<string, JsonSchema>), alg: { enum: ['Ed25519', 'ES256'] } }, additionalProperties: false },
        }),
      },
      assertionMethod: { type: 'array', items: { type: 'string' }, description: 'The keys that issue credentials.' },
    },
    { alsoKnownAs: { type: 'array', items: uri } },
    'A DID document (W3C DID Core), keys as JsonWebKey verification methods (W3C VC-JOSE-COSE).',
  ),
  {
    '@context': DID_CONTEXTS,
    id: EXAMPLE_DID,
    alsoKnownAs: [EXAMPLE_ISSUER],
    verificationMethod: [{ id: `${EXAMPLE_DID}#${EXAMPLE_KID}`, type: 'JsonWebKey', controller: EXAMPLE_DID, publicKeyJwk: { ...EXAMPLE_ED25519_JWK, alg: 'Ed25519' } }],
    assertionMethod: [`${EXAMPLE_DID}#${EXAMPLE_KID}`],
  },
);

const jsonLdTerm = closed({ '@id': uri }, { '@type': { const: '@json' } });
export const context = answer(
  closed(
    {
      '@context': {
        type: 'object',
        required: ['@version', '@protected'],
        properties: { '@version': { const: 1.1 }, '@protected': { const: true } },
        additionalProperties: jsonLdTerm,
        description: 'Each term: its IRI, and @type @json where the value is carried as one JSON literal.',
      },
    },
    {},
    'A JSON-LD 1.1 context (docs/INTEROP.md, "JSON-LD context").',
  ),
  JSON.parse(passportContext(EXAMPLE_ISSUER).text),
);
export const vocabulary = answer(
  closed(
    {
      '@context': closed({ rdf: uri, rdfs: uri }),
      '@id': uri,
      '@graph': {
        type: 'array',
        items: closed({
          '@id': uri,
          '@type': { const: 'rdf:Property' },
          'rdfs:label': { type: 'string' },
          'rdfs:comment': { type: 'string' },
          'rdfs:range': closed({ '@id': { type: 'string' } }),
          'rdfs:isDefinedBy': closed({ '@id': uri }),
        }),
      },
    },
    {},
    'RDF Schema in JSON-LD: each term of the platform, an rdf:Property with its label, meaning and range.',
  ),
  passportVocabulary(EXAMPLE_ISSUER),
);
