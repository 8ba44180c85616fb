/**
 * A passport credential read as JSON-LD, the way UNTP's test suite (uncefact/tests-untp) reads it,
 * offline: jsonld.js in safe mode (what its tier-1 "valid JSON-LD document" check runs), with a
 * document loader that serves pinned copies of the contexts (test/issuer/fixtures/README.md) and
 * never the network; and the products with conformity claims its tier-3 checks look for, found in the
 * RDF the same way its query finds them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import jsonld, { type Quad } from 'jsonld';

const fixtures = join(import.meta.dirname, '..', 'issuer', 'fixtures');
const pinned = (file: string) => readFileSync(join(fixtures, file), 'utf8');

/** The platform's context v1 as served for this issuer base; other bases are the same bytes with their own URL in the IRIs. */
export const PINNED_CONTEXT_BASE = 'https://dpp.example.com/issuer';
export const pinnedPassportContext = (issuerBase: string) => pinned('passport-context-v1.jsonld').replaceAll(PINNED_CONTEXT_BASE, issuerBase);

const PINNED: Record<string, string> = {
  'https://www.w3.org/ns/credentials/v2': pinned('credentials-v2-context.jsonld'),
  'https://test.uncefact.org/vocabulary/untp/dpp/0.6.1/': pinned('untp-dpp-context-0.6.1.jsonld'),
};

/** A loader of the pinned W3C and UNTP contexts and the platform's of `issuerBase`; any other URL fails. */
function pinnedLoader(issuerBase: string) {
  const documents: Record<string, string> = { ...PINNED, [`${issuerBase}/contexts/passport/v1`]: pinnedPassportContext(issuerBase) };
  return async (url: string) => {
    const text = documents[url];
    if (text === undefined) throw new Error(`no pinned copy of ${url}: the test loads nothing from the network`);
    return { contextUrl: null, documentUrl: url, document: JSON.parse(text) as unknown };
  };
}

/** tests-untp's tier-1 JSON-LD check: expansion in safe mode, which throws on any term or type it cannot map to an IRI. */
export const expandSafely = (credential: unknown, issuerBase: string) => jsonld.expand(credential, { safe: true, documentLoader: pinnedLoader(issuerBase) });

const VC = 'https://www.w3.org/2018/credentials#';
const DPP = 'https://test.uncefact.org/vocabulary/untp/dpp/0/';
const UNTP = 'https://test.uncefact.org/vocabulary/untp/core/0/';
const SCHEMA = 'https://schema.org/';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';

export interface ProductClaims {
  product: string;
  name: string;
  claims: { id: string; topic: string; conformance: string; criteria: string[] }[];
}

/**
 * The products tests-untp's tier 3 verifies: a DigitalProductPassport's subject's product with a
 * name and conformity claims (each with a topic and a conformance), with the names of their criteria.
 */
export async function productsWithClaims(credential: unknown, issuerBase: string): Promise<ProductClaims[]> {
  const quads = await jsonld.toRDF(credential, { safe: true, documentLoader: pinnedLoader(issuerBase) });
  const objects = (subject: string, predicate: string) => quads.filter((quad: Quad) => quad.subject.value === subject && quad.predicate.value === predicate).map((quad) => quad.object.value);
  const passports = quads.filter((quad) => quad.predicate.value === RDF_TYPE && quad.object.value === `${DPP}DigitalProductPassport`).map((quad) => quad.subject.value);
  const products = passports.flatMap((passport) =>
    objects(passport, `${VC}credentialSubject`).flatMap((subject) =>
      objects(subject, `${UNTP}product`).flatMap((product) =>
        objects(product, `${SCHEMA}name`).map((name) => ({
          product,
          name,
          claims: objects(subject, `${UNTP}conformityClaim`).flatMap((claim) =>
            objects(claim, `${UNTP}conformityTopic`).flatMap((topic) =>
              objects(claim, `${UNTP}conformance`).map((conformance) => ({
                id: claim,
                topic,
                conformance,
                criteria: objects(claim, `${UNTP}assessmentCriteria`).flatMap((criterion) => objects(criterion, `${SCHEMA}name`)),
              })),
            ),
          ),
        })),
      ),
    ),
  );
  return products.filter((product) => product.claims.length > 0);
}
