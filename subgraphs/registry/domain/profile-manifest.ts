import { RECORD_ID_PATTERN } from './identifiers.js';
import { JSON_SCHEMA_2020_12, checkModelSchema, type DocumentValidator, type ValidationResult } from './model-schema.js';
import { JURISDICTION_PATTERN, PRODUCT_CATEGORY_PATTERN } from './scope.js';

/** The `type` member that marks a generic record's body as a profile manifest. */
export const PROFILE_MANIFEST_TYPE = 'ProfileManifest';

const RECORD_ID = RECORD_ID_PATTERN.source;
const MODEL_REF = `${RECORD_ID.slice(0, -1)}@[1-9][0-9]{0,8}$`;
// Semantic Versioning 2.0.0 §2 and §9–10: MAJOR.MINOR.PATCH with optional pre-release and build.
const SEMVER = '^(?:0|[1-9][0-9]*)\\.(?:0|[1-9][0-9]*)\\.(?:0|[1-9][0-9]*)(?:-[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$';

const claimPointers = (description: string) => ({
  description,
  type: 'array',
  items: { type: 'string', format: 'json-pointer', minLength: 1 },
  uniqueItems: true,
});

const recordIds = (description: string) => ({
  description,
  type: 'array',
  items: { type: 'string', pattern: RECORD_ID },
  uniqueItems: true,
});

/** The two sample manifests shipped as the schema's `examples` and as the seed's profiles. */
export const PROFILE_MANIFEST_EXAMPLES = [
  {
    type: PROFILE_MANIFEST_TYPE,
    profile_id: 'eu-battery-passport',
    version: '1.0.0',
    title: 'EU battery passport for electric vehicle, LMT and industrial batteries',
    description: 'Battery passport under Regulation (EU) 2023/1542, Article 77 and Annex XIII, for LMT batteries, industrial batteries over 2 kWh and electric vehicle batteries.',
    model: 'battery-passport@1',
    jurisdictions: ['EU'],
    product_categories: ['battery.ev', 'battery.lmt', 'battery.industrial'],
    capability_class: 'tier-a',
    required_claims: [
      '/battery_identifier',
      '/manufacturer',
      '/manufacturing_place',
      '/manufacturing_date',
      '/battery_category',
      '/battery_status',
      '/weight_kg',
      '/chemistry',
      '/carbon_footprint',
      '/recycled_content',
      '/rated_capacity_ah',
      '/voltage',
      '/power_capability',
      '/expected_lifetime',
      '/state_of_health',
    ],
    pack_claims: ['/battery_identifier', '/battery_category', '/chemistry/short_name', '/manufacturing_date', '/weight_kg'],
    claim_access: {
      '/state_of_health': 'legitimate_interest',
      '/internal_resistance': 'legitimate_interest',
    },
    protocol_bindings: ['rest-http-json', 'graphql-over-http'],
    verification_mechanisms: ['ed25519-jws-jcs', 'es256-cose-sign1'],
    effective_from: '2027-02-18T00:00:00Z',
  },
  {
    type: PROFILE_MANIFEST_TYPE,
    profile_id: 'eu-textile-apparel',
    version: '0.9.0',
    title: 'Textile product passport for apparel (ESPR pilot)',
    model: 'textile-product@1',
    jurisdictions: ['EU'],
    product_categories: ['textile.apparel'],
    capability_class: 'tier-a',
    required_claims: ['/product_name', '/gtin', '/fibre_composition', '/countries_of_manufacture', '/care_instructions'],
    pack_claims: ['/gtin', '/fibre_composition'],
    protocol_bindings: ['rest-http-json'],
    verification_mechanisms: ['ed25519-jws-jcs', 'es256-cose-sign1'],
    effective_from: '2026-01-01T00:00:00Z',
    effective_to: '2030-01-01T00:00:00Z',
  },
] as const;

/**
 * JSON Schema 2020-12 of a profile manifest: what a passport profile declares — the model version
 * its passports conform to, where and to what it applies, from when, which claims a passport must
 * carry, which of them travel offline in the Tier-A pack, who may read restricted ones, and which
 * protocol bindings and verification mechanisms (registry record ids) it uses. It has no `$id`:
 * the registry serves it at `/schemas/profile-manifest` under its own base address.
 */
export const profileManifestSchema = {
  $schema: JSON_SCHEMA_2020_12,
  title: 'Passport profile manifest',
  description: 'What a digital product passport profile declares; registered as a generic registry record whose id is the profile_id.',
  type: 'object',
  required: ['type', 'profile_id', 'version', 'title', 'model', 'jurisdictions', 'product_categories', 'capability_class', 'required_claims', 'effective_from'],
  properties: {
    type: { description: 'Marks the document as a profile manifest.', const: PROFILE_MANIFEST_TYPE },
    profile_id: { description: 'The profile identifier, also its registry record id.', type: 'string', pattern: RECORD_ID },
    version: { description: "The publisher's version label (Semantic Versioning 2.0.0).", type: 'string', pattern: SEMVER },
    title: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string', maxLength: 2000 },
    model: {
      description: 'The registry model version passports of this profile conform to, as "id@version" (a passport type ref).',
      type: 'string',
      pattern: MODEL_REF,
    },
    jurisdictions: {
      description: 'ISO 3166-1 alpha-2 codes, or EU for every member state.',
      type: 'array',
      items: { type: 'string', pattern: JURISDICTION_PATTERN },
      minItems: 1,
      uniqueItems: true,
    },
    product_categories: {
      description: 'Dotted product category paths; a category covers the categories beneath it.',
      type: 'array',
      items: { type: 'string', pattern: PRODUCT_CATEGORY_PATTERN, maxLength: 128 },
      minItems: 1,
      uniqueItems: true,
    },
    capability_class: {
      description: "The passport capability class the profile requires, a token of the issuer's vocabulary (e.g. tier-a: carries a signed offline Tier-A pack).",
      type: 'string',
      pattern: '^[a-z][a-z0-9-]{0,31}$',
    },
    required_claims: claimPointers('JSON Pointers into the model document that a passport of this profile must provide.'),
    pack_claims: claimPointers('JSON Pointers of the claims carried offline in the Tier-A pack.'),
    claim_access: {
      description: 'Audience of restricted claims, by JSON Pointer; unlisted claims are public.',
      type: 'object',
      propertyNames: { type: 'string', format: 'json-pointer', minLength: 1 },
      additionalProperties: { enum: ['public', 'legitimate_interest', 'authorities'] },
    },
    protocol_bindings: recordIds('Registry ids of the protocol bindings passports of this profile are served through.'),
    verification_mechanisms: recordIds('Registry ids of the verification mechanisms that secure passports of this profile.'),
    effective_from: { description: "Start of the profile's effective window (inclusive).", type: 'string', format: 'date-time' },
    effective_to: { description: "End of the profile's effective window (exclusive); open when absent.", type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
  examples: PROFILE_MANIFEST_EXAMPLES,
} as const;

let manifestValidator: DocumentValidator | undefined;

/** Validates a document against the profile manifest schema (compiled once, in strict mode). */
export function checkProfileManifest(document: unknown): ValidationResult {
  manifestValidator ??= checkModelSchema(profileManifestSchema);
  return manifestValidator(document);
}

/** Whether a record body claims to be a profile manifest (and so must validate as one). */
export function isProfileManifestBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { type?: unknown }).type === PROFILE_MANIFEST_TYPE;
}
