import type { RecordKind } from '../kinds.js';
import { PROFILE_MANIFEST_EXAMPLES } from '../profile-manifest.js';
import { appendVersion, type RecordVersion } from '../record.js';
import { batteryPassportSchema } from './battery-passport.js';
import { textileProductSchema } from './textile-product.js';

export { batteryPassportSchema } from './battery-passport.js';
export { textileProductSchema } from './textile-product.js';

/** When the sample register was published, and when its one revision was made. */
const PUBLISHED = new Date('2025-06-02T09:00:00.000Z');
const REVISED = new Date('2025-09-15T09:00:00.000Z');

interface SeedVersion {
  readonly body: unknown;
  readonly effectiveFrom?: string;
  readonly at?: Date;
}

const category = (code: string, label: string, broader: string | null, definition?: string) => ({
  type: 'ProductCategory',
  code,
  label,
  broader,
  ...(definition ? { definition } : {}),
});

const SKOS = 'http://www.w3.org/2004/02/skos/core#';

/** The sample register's records, each as the list of its versions, oldest first. */
const SEED: readonly (readonly [RecordKind, string, readonly SeedVersion[]])[] = [
  ['item', 'battery', [{ body: category('battery', 'Batteries', null, 'Batteries within the scope of Regulation (EU) 2023/1542.') }]],
  ['item', 'battery.ev', [{ body: category('battery.ev', 'Electric vehicle batteries', 'battery') }]],
  ['item', 'battery.industrial', [{ body: category('battery.industrial', 'Industrial batteries', 'battery') }]],
  [
    'item',
    'battery.lmt',
    [
      { body: category('battery.lmt', 'LMT batteries', 'battery') },
      {
        body: category(
          'battery.lmt',
          'Light means of transport batteries',
          'battery',
          'Sealed batteries of 25 kg or less that power wheeled vehicles such as e-bikes and e-scooters (Regulation (EU) 2023/1542, Art. 3).',
        ),
        at: REVISED,
      },
    ],
  ],
  ['item', 'textile', [{ body: category('textile', 'Textile products', null) }]],
  ['item', 'textile.apparel', [{ body: category('textile.apparel', 'Apparel', 'textile') }]],
  [
    'model',
    'battery-passport',
    [
      {
        body: {
          title: 'Battery passport',
          description: 'Battery passport contents after Regulation (EU) 2023/1542, Annex XIII; obligatory from 18 February 2027 (Art. 77).',
          schema: batteryPassportSchema,
          applicability: { product_categories: ['battery.ev', 'battery.lmt', 'battery.industrial'], jurisdictions: ['EU'] },
        },
        effectiveFrom: '2027-02-18T00:00:00Z',
      },
    ],
  ],
  [
    'model',
    'textile-product',
    [
      {
        body: {
          title: 'Textile product passport',
          description: 'Textile product information in the shape of the Ecodesign for Sustainable Products Regulation (EU) 2024/1781.',
          schema: textileProductSchema,
          applicability: { product_categories: ['textile.apparel'], jurisdictions: ['EU'] },
        },
      },
    ],
  ],
  [
    'protocol_binding',
    'rest-http-json',
    [
      {
        body: {
          title: 'REST over HTTP with JSON',
          interface: 'REST',
          protocol: 'HTTP (RFC 9110) over TLS',
          media_types: { request: 'application/json', response: 'application/json', error: 'application/problem+json' },
          errors: 'RFC 9457 problem details with a machine code',
          member_names: 'snake_case',
          times: 'RFC 3339 UTC',
          authentication: 'Bearer tokens (RFC 6750) for writes and /admin paths; reads are public',
        },
      },
    ],
  ],
  [
    'protocol_binding',
    'graphql-over-http',
    [
      {
        body: {
          title: 'GraphQL over HTTP (federated graph)',
          interface: 'GraphQL',
          protocol: 'GraphQL over HTTP (GraphQL Foundation specification) at /graphql',
          media_types: { request: 'application/json', response: 'application/graphql-response+json' },
          composition: 'Apollo Federation 2 supergraph of the trust, registry, issuer and archive subgraphs',
          member_names: 'camelCase',
          authentication: 'Bearer tokens (RFC 6750) for mutations',
        },
      },
    ],
  ],
  [
    'verification_mechanism',
    'ed25519-jws-jcs',
    [
      {
        body: {
          title: 'Ed25519 signatures over JCS in detached JWS',
          purpose: 'Passport events, log heads and every signed JSON document',
          algorithm: 'Ed25519 (RFC 9864; EdDSA accepted)',
          key_type: 'OKP (RFC 8037)',
          canonicalization: 'JSON Canonicalization Scheme (RFC 8785)',
          envelope: 'detached compact JWS (RFC 7515 Appendix F) in the signature member',
          key_identifier: 'JWK thumbprint (RFC 7638) as kid',
          key_discovery: 'GET /keyring: JWK Set (RFC 7517)',
        },
      },
    ],
  ],
  [
    'verification_mechanism',
    'es256-cose-sign1',
    [
      {
        body: {
          title: 'ES256 carrier signature in COSE_Sign1',
          purpose: 'Tier-A pack: offline-verifiable claims in a QR code',
          algorithm: 'ES256, ECDSA with P-256 and SHA-256 (COSE algorithm -7, RFC 9053)',
          key_type: 'EC P-256 (RFC 7518)',
          envelope: 'COSE_Sign1 (RFC 9052) over CBOR claims (RFC 8949)',
          key_identifier: 'kid protected header (label 4)',
          encoding: 'zlib-compressed, Base45 (RFC 9285) behind a short prefix, after the EU Digital COVID Certificate',
          key_discovery: 'GET /keyring of the issuer service',
        },
      },
    ],
  ],
  [
    'cross_register_mapping',
    'battery-passport-untp-dpp',
    [
      {
        body: {
          title: 'Battery passport model to UN Transparency Protocol Digital Product Passport 0.3.10',
          source: { register: 'registry', model: 'battery-passport@1' },
          target: { register: 'UNTP DPP', version: '0.3.10', namespace: 'https://test.uncefact.org/vocabulary/untp/dpp/0.3.10/' },
          relations: SKOS,
          mappings: [
            { source: '/battery_identifier', target: '/credentialSubject/id', relation: 'exactMatch' },
            { source: '/manufacturer/name', target: '/credentialSubject/producedByParty/name', relation: 'closeMatch' },
            { source: '/manufacturing_place/country', target: '/credentialSubject/countryOfProduction', relation: 'exactMatch' },
            { source: '/manufacturing_place/facility', target: '/credentialSubject/producedAtFacility/name', relation: 'closeMatch' },
            { source: '/manufacturing_date', target: '/credentialSubject/productionDate', relation: 'broadMatch', note: 'month precision maps to a date' },
            { source: '/weight_kg', target: '/credentialSubject/dimensions/weight/value', relation: 'closeMatch', note: 'unit KGM' },
            {
              source: '/carbon_footprint/total_kg_co2e_per_kwh',
              target: '/credentialSubject/emissionsScorecard/carbonFootprint',
              relation: 'closeMatch',
              note: 'declaredUnit per kWh of total energy over the service life',
            },
            { source: '/recycled_content', target: '/credentialSubject/circularityScorecard/recycledContent', relation: 'relatedMatch', note: 'per metal versus one overall share' },
            { source: '/hazardous_substances', target: '/credentialSubject/materialsProvenance', relation: 'relatedMatch', note: 'materials flagged hazardous' },
          ],
        },
      },
    ],
  ],
  [
    'cross_register_mapping',
    'battery-passport-gs1',
    [
      {
        body: {
          title: 'Battery passport model to GS1 Web Vocabulary',
          source: { register: 'registry', model: 'battery-passport@1' },
          target: { register: 'GS1 Web Vocabulary', namespace: 'https://ref.gs1.org/voc/' },
          relations: SKOS,
          mappings: [
            { source: '/battery_identifier', target: 'gs1:gtin', relation: 'relatedMatch', note: 'the identifier is a GS1 Digital Link URI carrying the GTIN and serial' },
            { source: '/manufacturer', target: 'gs1:manufacturer', relation: 'closeMatch' },
            { source: '/manufacturing_place/country', target: 'gs1:countryOfOrigin', relation: 'closeMatch' },
            { source: '/weight_kg', target: 'gs1:netWeight', relation: 'closeMatch', note: 'gs1:QuantitativeValue with unit code KGM' },
          ],
        },
      },
    ],
  ],
  [
    'cross_register_mapping',
    'textile-product-gs1',
    [
      {
        body: {
          title: 'Textile product model to GS1 Web Vocabulary',
          source: { register: 'registry', model: 'textile-product@1' },
          target: { register: 'GS1 Web Vocabulary', namespace: 'https://ref.gs1.org/voc/' },
          relations: SKOS,
          mappings: [
            { source: '/gtin', target: 'gs1:gtin', relation: 'exactMatch' },
            { source: '/product_name', target: 'gs1:productName', relation: 'exactMatch' },
            { source: '/brand', target: 'gs1:brand', relation: 'closeMatch', note: 'gs1:Brand with brandName' },
            { source: '/fibre_composition', target: 'gs1:textileMaterial', relation: 'closeMatch', note: 'gs1:TextileMaterialDetails per fibre' },
            { source: '/countries_of_manufacture/making_up', target: 'gs1:countryOfOrigin', relation: 'closeMatch' },
          ],
        },
      },
    ],
  ],
  [
    'service',
    'passport-issuer',
    [
      {
        body: {
          title: 'Passport issuer',
          service_type: 'issuer',
          base_path: '/issuer',
          protocol_bindings: ['rest-http-json', 'graphql-over-http'],
          verification_mechanisms: ['ed25519-jws-jcs', 'es256-cose-sign1'],
        },
      },
    ],
  ],
  [
    'service',
    'passport-archive',
    [
      {
        body: {
          title: 'Passport archive (OAIS)',
          service_type: 'archive',
          base_path: '/archive',
          protocol_bindings: ['rest-http-json', 'graphql-over-http'],
          verification_mechanisms: ['ed25519-jws-jcs'],
        },
      },
    ],
  ],
  ...PROFILE_MANIFEST_EXAMPLES.map((manifest): readonly [RecordKind, string, readonly SeedVersion[]] => ['generic', manifest.profile_id, [{ body: manifest }]]),
];

/** The sample register as seedRegister first built it. */
let sampleRegister: readonly RecordVersion[] | undefined;

/**
 * The sample register `/admin/seed` loads: product category items, a battery passport model after
 * Regulation (EU) 2023/1542 Annex XIII, a textile model after ESPR, REST and GraphQL protocol
 * bindings, Ed25519/JWS and ES256/COSE verification mechanisms, mappings to UNTP and GS1 terms,
 * two services and two profiles. Every version goes through appendVersion, so the seed obeys the
 * register's own rules. The output is the same on every call (fixed ids, versions and times), so
 * loading it means inserting the (kind, id, version) rows not yet stored: running it twice
 * changes nothing.
 */
export function seedRegister(): readonly RecordVersion[] {
  // Built once a process: a build compiles every seeded model's schema and checks its examples (~150 ms of CPU a call of /admin/seed).
  sampleRegister ??= Object.freeze(buildSampleRegister());
  return sampleRegister;
}

/** The sample register built afresh (seedRegister keeps the first build). */
export function buildSampleRegister(): RecordVersion[] {
  return SEED.flatMap(([kind, id, versions]) => {
    const history: RecordVersion[] = [];
    for (const seed of versions) {
      history.push(appendVersion(kind, id, history, { expectedVersion: history.length, body: structuredClone(seed.body), effectiveFrom: seed.effectiveFrom }, seed.at ?? PUBLISHED));
    }
    return history;
  });
}
