/**
 * The issuer's paths (spec §4, issuer table) beyond the common ones. REST members are snake_case;
 * event payloads are carried opaquely (EPCIS 2.0 member names stay camelCase inside `payload`),
 * and signed documents pass through verbatim.
 */
import { createHash } from 'node:crypto';
import Negotiator from 'negotiator';
import { problem } from '../../lib/problem.js';
import { RequestProblem } from '../../lib/http/request-problem.js';
import {
  envelope,
  JSON_LD_MEDIA_TYPE,
  passportContext,
  passportVocabulary,
  PASSPORT_CONTEXT_PATH,
  PASSPORT_VOCABULARY_PATH,
  STATUS_LIST_LENGTH,
  STATUS_PURPOSES,
  VC_JWT_MEDIA_TYPE,
  VC_MEDIA_TYPE,
} from '../../lib/formats/vc/index.js';
import type { JsonSchema, Route, RouteResult } from '../route-table.js';
import {
  answer,
  closed,
  dateTime,
  detachedJws,
  EXAMPLE_ED25519_JWK,
  EXAMPLE_KID,
  EXAMPLE_SIGNATURE,
  EXAMPLE_TIME,
  freeObject,
  hex256,
  location,
  nullableDateTime,
  publicJwk,
  signed,
  thumbprint,
  uri,
} from '../schemas.js';
import { digitalLinkRoutes } from './digital-link.js';

const object = (body: unknown): Record<string, unknown> => (body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {});

const passportIdParam = { id: 'The passport id.' };

const CAPABILITY_CLASSES = ['identify', 'trace', 'verify-offline'];
const PASSPORT_STATUSES = ['draft', 'active', 'suspended', 'end_of_life', 'revoked'];
const EVENT_TYPES = ['activated', 'suspended', 'reinstated', 'end_of_life', 'revoked', 'ObjectEvent', 'AggregationEvent', 'TransactionEvent', 'TransformationEvent'];

const PASSPORT_FIELDS = `passport_id: id status core manifest log_head: logHead capability_class: capabilityClass log_size: logSize latest_pack: latestPack predecessor_id: predecessorId`;

const typeRef = closed({ id: { type: 'string', description: 'Registry model id.' }, version: { type: 'integer', minimum: 1 } });

const logHead = signed(
  { passport_id: { type: 'string' }, size: { type: 'integer', minimum: 0 }, root_hash: hex256, timestamp: dateTime },
  {},
  'Signed checkpoint of the log by the event key: its size and RFC 6962 root.',
);
const event = signed(
  {
    passport_id: { type: 'string' },
    seq: { type: 'integer', minimum: 0 },
    type: { enum: EVENT_TYPES },
    payload: freeObject('Per the type’s schema; EPCIS events keep EPCIS 2.0 member names (camelCase).'),
    recorded_at: dateTime,
    prev_hash: { ...hex256, description: 'SHA-256 of the previous event (RFC 8785 form, signature included); 64 zeros for the first.' },
    trust: { const: 'Attested' },
    kid: thumbprint,
  },
  {},
  'A signed event by the event key.',
);

const passportSchema = closed(
  {
    passport_id: { type: 'string' },
    status: { enum: PASSPORT_STATUSES },
    core: closed(
      {
        passport_id: { type: 'string' },
        issuer: { type: 'string' },
        identity: closed(
          {
            uri: { type: 'string', description: 'The identifier exactly as given.' },
            scheme: { enum: ['gs1-digital-link', 'epc-urn'] },
            granularity: { enum: ['model', 'batch', 'item'] },
            gtin: { type: 'string', pattern: '^[0-9]{14}$' },
            digital_link: { type: 'string', description: 'Canonical GS1 Digital Link.' },
          },
          { variant: { type: 'string' }, lot: { type: 'string' }, serial: { type: 'string' } },
        ),
        type_ref: typeRef,
        capability_class: { enum: CAPABILITY_CLASSES },
        profile_id: { type: ['string', 'null'] },
        claims: freeObject('The claims of the profile, copied at creation.'),
        created_at: dateTime,
      },
      { status: { enum: PASSPORT_STATUSES } },
      'Identity, type ref, capability class, profile and claims.',
    ),
    manifest: freeObject('The config vector.'),
    log_head: logHead,
    capability_class: { enum: CAPABILITY_CLASSES },
    log_size: { type: 'integer', minimum: 0 },
    latest_pack: { type: ['string', 'null'], description: 'The text of the latest Tier-A pack.' },
    predecessor_id: {
      type: ['string', 'null'],
      description: 'The passport of the same identity this one succeeds (revoked or at end of life when this one was created); null for the first.',
    },
  },
  { log: { type: 'array', items: event, description: 'Every signed event in sequence order (empty on creation; with include_events=true).' } },
);
/** GET /passports/{id}?at=: the head of then may be unsigned (none kept), and `as_of` says what ties it to today's. */
const unsignedLogHead = closed(
  { passport_id: { type: 'string' }, size: { type: 'integer', minimum: 0 }, root_hash: hex256, timestamp: dateTime },
  {},
  'The head at `at` when no checkpoint signed then was kept (as_of.head_signed false): its timestamp is the last event’s recorded_at.',
);
const passportReadSchema = {
  ...passportSchema,
  properties: {
    ...(passportSchema.properties as Record<string, JsonSchema>),
    log_head: { anyOf: [logHead, unsignedLogHead] },
    as_of: closed(
      {
        at: { ...dateTime, description: 'The instant asked about, in UTC; events recorded at it are included.' },
        head_signed: { type: 'boolean', description: 'Whether log_head is the checkpoint the issuer signed at the last append up to `at` (or at creation).' },
        last_event_at: { ...nullableDateTime, description: 'recorded_at of the last event up to `at`; null for an empty log.' },
        current_log_head: logHead,
      },
      {
        consistency_proof: {
          type: 'array',
          items: hex256,
          description: 'With include_proof=true: RFC 6962 consistency proof from log_head to current_log_head (RFC 9162 §2.1.4.2).',
        },
      },
      'With `at` only: the instant, and what ties log_head to today’s signed head.',
    ),
  },
};
const PASSPORT_ID = '5638f8d6-b669-41f8-8bdb-255c5ecb997e';
const ROOT_HASH = '8b110ea46b87bb3d16dd4f6560e49712657c0cc4073fbaf0ad0781a5253b9573';
const PASSPORT_EXAMPLE = {
  passport_id: PASSPORT_ID,
  status: 'draft',
  core: {
    passport_id: PASSPORT_ID,
    issuer: 'passport-issuer',
    identity: {
      uri: 'https://id.gs1.org/01/09520123456788/21/SN-1',
      scheme: 'gs1-digital-link',
      granularity: 'item',
      gtin: '09520123456788',
      serial: 'SN-1',
      digital_link: 'https://id.gs1.org/01/09520123456788/21/SN-1',
    },
    type_ref: { id: 'battery-passport', version: 1 },
    capability_class: 'verify-offline',
    profile_id: null,
    claims: {},
    created_at: EXAMPLE_TIME,
  },
  manifest: { chemistry: 'LFP', capacity_kwh: 75 },
  log_head: { passport_id: PASSPORT_ID, size: 0, root_hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', timestamp: EXAMPLE_TIME, signature: EXAMPLE_SIGNATURE },
  capability_class: 'verify-offline',
  log_size: 0,
  latest_pack: null,
  predecessor_id: null,
  log: [],
};
const EVENT_EXAMPLE = {
  passport_id: PASSPORT_ID,
  seq: 0,
  type: 'activated',
  payload: { placed_on_market_at: '2025-02-01T00:00:00Z' },
  recorded_at: EXAMPLE_TIME,
  prev_hash: '0'.repeat(64),
  trust: 'Attested',
  kid: EXAMPLE_KID,
  signature: EXAMPLE_SIGNATURE,
};
const LOG_HEAD_EXAMPLE = { passport_id: PASSPORT_ID, size: 1, root_hash: ROOT_HASH, timestamp: EXAMPLE_TIME, signature: EXAMPLE_SIGNATURE };

const packClaims = closed(
  {
    iss: { type: 'string' },
    sub: { type: 'string' },
    iat: { type: 'integer', description: 'NumericDate.' },
    capability_class: { enum: CAPABILITY_CLASSES },
    type_ref: typeRef,
    status: { enum: PASSPORT_STATUSES },
  },
  {
    log: closed({ size: { type: 'integer', minimum: 0 }, root_hash: hex256 }),
    identity: { type: 'string' },
    manifest_digest: { ...hex256, description: 'SHA-256 of the RFC 8785 form of the config vector.' },
    last_event: closed({ seq: { type: 'integer', minimum: 0 }, type: { enum: EVENT_TYPES }, recorded_at: dateTime }),
    log_head: closed({ timestamp: dateTime, signature: detachedJws }),
  },
  'The claims the pack carries (CBOR keys in the discovery document), as JSON.',
);

const problemList: JsonSchema = {
  type: 'array',
  items: closed({ code: { type: 'string' }, message: { type: 'string' } }, { seq: { type: 'integer', minimum: 0 }, reason: { type: 'string' } }),
};
const signatureFailures: JsonSchema = { type: 'array', items: closed({ seq: { type: 'integer', minimum: 0 }, reason: { type: 'string' }, message: { type: 'string' } }) };
const VERDICT_CHECKS = [
  'log.chain',
  'log.transitions',
  'log.status',
  'log.head_signature',
  'log.root',
  'events.signatures',
  'pack.signature',
  'pack.head',
  'pack.status',
  'key_standing.event',
  'key_standing.log_head',
  'key_standing.pack',
];
const verdictSchema = closed({
  passport_id: { type: 'string' },
  outcome: { enum: ['verified', 'failed', 'incomplete'] },
  log_verdict: closed({
    ok: { type: 'boolean' },
    passport_id: { type: 'string' },
    size: { type: 'integer', minimum: 0 },
    chain: closed({ ok: { type: 'boolean' }, problems: problemList }),
    replay: closed({ ok: { type: 'boolean' }, status: { enum: PASSPORT_STATUSES }, problems: problemList }),
    head: closed({ ok: { type: 'boolean' }, checked: { type: 'boolean' }, problems: problemList }, { kid: { type: 'string' } }),
    root: closed({ ok: { type: 'boolean' }, checked: { type: 'boolean' }, computed: hex256 }, { signed: hex256 }),
    problems: problemList,
  }),
  event_signature_audit: closed({ verified: { type: 'integer', minimum: 0 }, total: { type: 'integer', minimum: 0 }, first_failing_seq: { type: ['integer', 'null'] }, failures: signatureFailures }),
  pack_verdict: closed(
    { present: { type: 'boolean' }, ok: { type: 'boolean' } },
    { kid: { type: 'string' }, capability_class: { type: 'string' }, reason: { type: 'string' }, message: { type: 'string' } },
  ),
  checks: { type: 'array', items: closed({ check: { enum: VERDICT_CHECKS }, outcome: { enum: ['passed', 'failed', 'not_run'] }, detail: { type: 'string' } }) },
  coverage: closed({
    checks_run: { type: 'integer', minimum: 0 },
    checks_total: { type: 'integer', minimum: 0 },
    not_run: { type: 'array', items: closed({ check: { enum: VERDICT_CHECKS }, why: { type: 'string' } }) },
  }),
  computed_at: dateTime,
});

const profileSchema = closed({
  profile_id: { type: 'string' },
  description: { type: ['string', 'null'] },
  capability_classes: { type: 'array', items: { enum: CAPABILITY_CLASSES }, minItems: 1 },
  default_capability_class: { oneOf: [{ enum: CAPABILITY_CLASSES }, { type: 'null' }] },
  claims: freeObject('Copied verbatim into the core of every passport created under the profile.'),
  created_at: dateTime,
  updated_at: dateTime,
});
const PROFILE_EXAMPLE = {
  profile_id: 'ev-battery',
  description: 'EV batteries',
  capability_classes: ['trace', 'verify-offline'],
  default_capability_class: 'trace',
  claims: { regulation: 'EU 2023/1542' },
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_TIME,
};

const ruleSchema = closed({
  model_id: { type: 'string' },
  model_version: { type: ['integer', 'null'], description: 'Null: every version without a rule of its own.' },
  profile_id: { type: 'string' },
  created_at: dateTime,
  updated_at: dateTime,
});
const RULE_EXAMPLE = { model_id: 'battery-passport', model_version: null, profile_id: 'ev-battery', created_at: EXAMPLE_TIME, updated_at: EXAMPLE_TIME };

const restoreSchema = closed({
  restored_at: dateTime,
  snapshot_at: { ...dateTime, type: ['string', 'null'], description: 'The backup’s snapshot, what the logs went back to; null for a restore by other means.' },
  backup: { type: ['string', 'null'], description: 'The backup file restored.' },
  passports: { type: 'integer', minimum: 0 },
  acknowledged_at: dateTime,
  acknowledged_by: { type: 'string', description: 'The name of the admin token that acknowledged it.' },
});
const RESTORE_EXAMPLE = {
  restored_at: EXAMPLE_TIME,
  snapshot_at: EXAMPLE_TIME,
  backup: '/backups/passport-2026-11-27.backup',
  passports: 200,
  acknowledged_at: EXAMPLE_TIME,
  acknowledged_by: 'admin',
};

/** The representations of a credential, most preferred first: the vc+jwt itself, or its envelope as JSON. */
const CREDENTIAL_MEDIA_TYPES = [VC_JWT_MEDIA_TYPE, VC_MEDIA_TYPE, 'application/json'] as const;
type CredentialMediaType = (typeof CREDENTIAL_MEDIA_TYPES)[number];

/**
 * The representation an Accept header prefers (RFC 9110 §12.5.1, by negotiator, as the Digital Link
 * resolver negotiates; ties go to the order above). An Accept that names none of them gets the
 * vc+jwt rather than a 406: the credential is the one thing this path serves.
 */
export function credentialMediaType(accept: string | undefined): CredentialMediaType {
  return (new Negotiator({ headers: { accept: accept ?? '*/*' } }).mediaType([...CREDENTIAL_MEDIA_TYPES]) as CredentialMediaType | undefined) ?? VC_JWT_MEDIA_TYPE;
}

/**
 * A vc+jwt as the Accept header asks for it, with an entity tag per representation: the credential
 * is rebuilt from the stored state on each request, so the tag is its hash, and an unchanged
 * passport or list answers a conditional GET with 304 (conditional.ts).
 */
function credentialAnswer(jwt: string, accept: string | undefined): RouteResult {
  const mediaType = credentialMediaType(accept);
  const tag = `"${createHash('sha256').update(jwt).digest('base64url')}${mediaType === VC_JWT_MEDIA_TYPE ? '' : `.${mediaType.split('/')[1]}`}"`;
  const headers = { etag: tag, vary: 'accept', 'cache-control': 'no-cache', 'content-type': mediaType === 'application/json' ? 'application/json; charset=utf-8' : mediaType };
  return mediaType === VC_JWT_MEDIA_TYPE ? { headers, raw: Buffer.from(jwt) } : { headers, body: envelope(jwt) };
}

const vcJwt: JsonSchema = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
  description: 'A compact JWS: protected header (typ vc+jwt, cty vc, alg EdDSA, kid a DID URL), the credential, the signature.',
};
const envelopedCredential = closed(
  {
    '@context': { const: 'https://www.w3.org/ns/credentials/v2' },
    id: { type: 'string', pattern: '^data:application/vc\\+jwt,', description: 'The vc+jwt as a data: URL.' },
    type: { const: 'EnvelopedVerifiableCredential' },
  },
  {},
  'VC Data Model 2.0 envelope of the vc+jwt.',
);
const EXAMPLE_VC_JWT =
  'eyJhbGciOiJFZERTQSIsInR5cCI6InZjK2p3dCIsImN0eSI6InZjIiwia2lkIjoiZGlkOndlYjpkcHAuZXhhbXBsZS5jb206aXNzdWVyI3lYeGlsaGlqTXJZa2R0OWw2aS1QNDBWWXJTTDMxOE1vdTkyaVNhYzQ2M28ifQ.eyJAY29udGV4dCI6WyJodHRwczovL3d3dy53My5vcmcvbnMvY3JlZGVudGlhbHMvdjIiXX0.' +
  EXAMPLE_SIGNATURE.split('.').pop();
const credentialResponses = (what: string) => ({
  description: `${what}: application/vc+jwt by default; with Accept application/vc or application/json, its EnvelopedVerifiableCredential. ETag per representation; If-None-Match gives 304.`,
  mediaType: VC_JWT_MEDIA_TYPE,
  schema: vcJwt,
  example: EXAMPLE_VC_JWT,
  headers: { ETag: { type: 'string', description: 'Entity tag of this representation.' } },
  alternatives: {
    [VC_MEDIA_TYPE]: { schema: envelopedCredential, example: envelope(EXAMPLE_VC_JWT) },
    'application/json': { schema: envelopedCredential, example: envelope(EXAMPLE_VC_JWT) },
  },
});

const didDocumentSchema = closed(
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
);
const EXAMPLE_DID = 'did:web:dpp.example.com:issuer';
const DID_DOCUMENT_EXAMPLE = {
  '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/jwk/v1'],
  id: EXAMPLE_DID,
  alsoKnownAs: ['https://dpp.example.com/issuer'],
  verificationMethod: [{ id: `${EXAMPLE_DID}#${EXAMPLE_KID}`, type: 'JsonWebKey', controller: EXAMPLE_DID, publicKeyJwk: { ...EXAMPLE_ED25519_JWK, alg: 'Ed25519' } }],
  assertionMethod: [`${EXAMPLE_DID}#${EXAMPLE_KID}`],
};
const DID_MEDIA_TYPE = 'application/did+ld+json';
/** The entity tag of a document: the SHA-256 of its text. */
const sha256Tag = (text: string) => `"${createHash('sha256').update(text).digest('base64url')}"`;

function didDocumentRoute(path: string, when: string): Route {
  return {
    method: 'GET',
    path,
    summary: `The issuer’s DID document (did:web), ${when}`,
    operation: 'query IssuerDidDocument { issuerDidDocument }',
    result: (data) => ({
      headers: { 'content-type': DID_MEDIA_TYPE, etag: sha256Tag(JSON.stringify(data.issuerDidDocument)), 'cache-control': 'no-cache' },
      body: data.issuerDidDocument,
    }),
    responses: {
      200: {
        description: 'The DID document: every key of the keyring not revoked, as JsonWebKey; credential keys in assertionMethod.',
        mediaType: DID_MEDIA_TYPE,
        ...answer(didDocumentSchema, DID_DOCUMENT_EXAMPLE),
      },
      304: { description: 'Not modified: If-None-Match names the ETag of this document.' },
    },
  };
}

const EXAMPLE_ISSUER = 'https://dpp.example.com/issuer';
const jsonLdTerm = closed({ '@id': uri }, { '@type': { const: '@json' } });
const passportContextSchema = closed(
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
);
const vocabularySchema = closed(
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
);
export const issuerRoutes: Route[] = [
  {
    method: 'POST',
    path: '/passports',
    summary: 'Creates a passport from identity, type ref, config vector and capability class; returns its id and an empty log',
    role: 'writer',
    body: {
      type: 'object',
      required: ['identity', 'type_ref', 'config_vector'],
      properties: {
        identity: { type: 'string', description: 'GS1 Digital Link URI (https://…/01/{gtin}[/22/…][/10/…][/21/…]) or EPC URN.' },
        granularity: { enum: ['model', 'batch', 'item'], description: 'Checked against the identifier when given.' },
        type_ref: {
          type: 'object',
          required: ['id', 'version'],
          properties: { id: { type: 'string', description: 'Registry model id.' }, version: { type: 'integer', minimum: 1 } },
        },
        config_vector: { type: 'object', additionalProperties: true, description: 'Validated against the registry model; returned as the manifest.' },
        capability_class: { enum: ['identify', 'trace', 'verify-offline'], description: "Defaults to the applicable profile's default, else identify." },
      },
    },
    operation: `mutation CreatePassport($input: CreatePassportInput!) { passport: createPassport(input: $input) { ${PASSPORT_FIELDS} } }`,
    variables: ({ body }) => {
      const input = object(body);
      const typeRef = input.type_ref;
      return {
        input: {
          identity: input.identity,
          granularity: input.granularity,
          // Anything but an object goes to GraphQL as it is, which refuses it with a 400.
          typeRef: typeRef !== null && typeof typeRef === 'object' && !Array.isArray(typeRef) ? { id: object(typeRef).id, version: object(typeRef).version } : typeRef,
          configVector: input.config_vector,
          capabilityClass: input.capability_class,
        },
      };
    },
    result: (data, context) => ({
      status: 201,
      headers: { location: `${context.baseUrl}/passports/${encodeURIComponent(data.passport.passport_id)}` },
      body: { ...data.passport, log: [] },
    }),
    // The one-live-passport refusal names the live passport; its URL is the facade's to write.
    problem: (details, context) =>
      details.code === 'LIVE_PASSPORT_EXISTS' && typeof details.passport_id === 'string'
        ? { ...details, passport_url: `${context.baseUrl}/passports/${encodeURIComponent(details.passport_id)}` }
        : details,
    responses: { 201: { headers: location('The passport.'), description: 'The passport, with its empty log and the signed head of that log.', ...answer(passportSchema, PASSPORT_EXAMPLE) } },
    problems: [401, 409, 422, 503],
  },
  {
    method: 'GET',
    path: '/passports/{id}',
    summary: 'The core, the manifest (config vector) and the signed log head of a passport; with `at`, as it stood then (EN 18222 ReadDPPVersionByIdAndDate)',
    params: passportIdParam,
    query: {
      include_events: { type: 'boolean', description: 'Also return every signed event, in sequence order, as `log` (with `at`: those recorded up to then).' },
      at: {
        type: 'date-time',
        description:
          'The passport as it stood at this RFC 3339 instant (Z or an offset; inclusive): status, log size and signed log head from its log up to then, and `as_of`. Before its creation: 404 NOT_YET_ISSUED; a future instant answers the state of now.',
      },
      include_proof: { type: 'boolean', description: 'With `at`: also return as_of.consistency_proof, from the head then to today’s signed head (reads the whole log).' },
    },
    operation: `query Passport($id: ID!, $withEvents: Boolean!, $at: String, $asOf: Boolean!, $withProof: Boolean!) {
  passport(id: $id, at: $at) {
    ${PASSPORT_FIELDS} events @include(if: $withEvents)
    as_of: asOf @include(if: $asOf) { at head_signed: headSigned last_event_at: lastEventAt current_log_head: currentLogHead consistency_proof: consistencyProof @include(if: $withProof) }
  }
}`,
    variables: ({ params, query }) => {
      if (query.include_proof === true && query.at === undefined)
        throw new RequestProblem(problem(400, 'INVALID_QUERY', 'include_proof needs at: the proof runs from the head at that instant to today’s'));
      return { id: params.id, withEvents: query.include_events === true, at: query.at, asOf: query.at !== undefined, withProof: query.include_proof === true };
    },
    result: (data) => {
      if (!data.passport) throw passportNotFound();
      const { events, as_of, ...passport } = data.passport;
      return { body: { ...passport, ...(events ? { log: events } : {}), ...(as_of ? { as_of } : {}) } };
    },
    responses: {
      200: {
        description: 'The passport (with `at`: as it stood then).',
        ...answer(passportReadSchema, { ...PASSPORT_EXAMPLE, status: 'active', log_head: LOG_HEAD_EXAMPLE, log_size: 1, log: [EVENT_EXAMPLE] }),
      },
    },
  },
  {
    method: 'POST',
    path: '/passports/{id}/events',
    summary:
      'Appends a typed event; the issuer signs it with Ed25519 and marks it Attested; an illegal status transition is a 409 (rule I6); after a restore, 503 RESTORE_UNACKNOWLEDGED until an admin acknowledges it (POST /admin/restore/acknowledgement)',
    role: 'writer',
    params: passportIdParam,
    body: {
      type: 'object',
      required: ['type', 'payload'],
      properties: {
        type: {
          enum: EVENT_TYPES,
          description: 'Lifecycle events change the status; EPCIS 2.0 traceability events do not. Payload schemas: the discovery document.',
        },
        payload: { type: 'object', additionalProperties: true, description: 'Per the type’s schema; EPCIS events keep EPCIS 2.0 member names (camelCase).' },
      },
    },
    operation: `mutation AppendPassportEvent($passportId: ID!, $type: String!, $payload: JSONObject!) {
  appended: appendPassportEvent(passportId: $passportId, type: $type, payload: $payload) { event log_head: logHead status }
}`,
    variables: ({ params, body }) => {
      const input = object(body);
      return { passportId: params.id, type: input.type, payload: input.payload };
    },
    // The event has no address of its own: Location names the log that holds it.
    result: (data, context) => ({ status: 201, headers: { location: `${context.baseUrl}/passports/${encodeURIComponent(context.request.params.id!)}?include_events=true` }, body: data.appended }),
    responses: {
      201: {
        headers: location('The passport with its log (?include_events=true).'),
        description: 'The signed event (seq, prev_hash, trust "Attested", kid, signature), the new signed log head and the status after it.',
        ...answer(closed({ event, log_head: logHead, status: { enum: PASSPORT_STATUSES } }), { event: EVENT_EXAMPLE, log_head: LOG_HEAD_EXAMPLE, status: 'active' }),
      },
    },
    problems: [401, 409, 422],
  },
  {
    method: 'POST',
    path: '/passports/{id}/pack',
    summary: 'Mints the Tier-A pack (COSE_Sign1, ES256 carrier signature, zlib, Base45) under the QR budget; over budget is a 422',
    role: 'writer',
    params: passportIdParam,
    operation: `mutation MintPassportPack($passportId: ID!) {
  pack: mintPassportPack(passportId: $passportId) { passport_id: passportId text size budget kid claims minted_at: mintedAt }
}`,
    variables: ({ params }) => ({ passportId: params.id }),
    // The passport keeps its latest pack (latest_pack).
    result: (data, context) => ({ status: 201, headers: { location: `${context.baseUrl}/passports/${encodeURIComponent(context.request.params.id!)}` }, body: data.pack }),
    responses: {
      201: {
        headers: location('The passport, whose latest_pack is this pack.'),
        description: 'The pack text (DPP1:…), its size and the budget, the carrier key id and the claims.',
        ...answer(
          closed({
            passport_id: { type: 'string' },
            text: { type: 'string', pattern: '^DPP1:[0-9A-Z $%*+\\-./:]*$' },
            size: { type: 'integer', minimum: 0, description: 'Characters of text.' },
            budget: { type: 'integer', description: 'The QR budget: the most characters a pack may have.' },
            kid: thumbprint,
            claims: packClaims,
            minted_at: dateTime,
          }),
          {
            passport_id: PASSPORT_ID,
            text: 'DPP1:NCF3+EAWPMWQ000K8E67T5248$70%RL.6A*3XHDG-K40N5JMEONO+JWW5GYQQKG4',
            size: 69,
            budget: 1134,
            kid: EXAMPLE_KID,
            claims: {
              iss: 'passport-issuer',
              sub: PASSPORT_ID,
              iat: 1795587614,
              capability_class: 'trace',
              type_ref: { id: 'battery-passport', version: 1 },
              status: 'active',
              log: { size: 1, root_hash: ROOT_HASH },
            },
            minted_at: EXAMPLE_TIME,
          },
        ),
      },
    },
    problems: [401, 422],
  },
  {
    method: 'GET',
    path: '/passports/{id}/verdict',
    summary: 'The full-pipeline verdict with coverage: log verdict, event-signature audit, Tier-A pack verdict, key standing in the trust service',
    params: passportIdParam,
    operation: `query PassportVerdict($id: ID!) { passport(id: $id) { verdict } }`,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => {
      if (!data.passport) throw passportNotFound();
      return { headers: { 'cache-control': 'no-store' }, body: data.passport.verdict };
    },
    responses: {
      200: {
        description: 'outcome (verified, failed, incomplete), log_verdict, event_signature_audit, pack_verdict, checks and coverage.',
        ...answer(verdictSchema, {
          passport_id: PASSPORT_ID,
          outcome: 'incomplete',
          log_verdict: {
            ok: true,
            passport_id: PASSPORT_ID,
            size: 1,
            chain: { ok: true, problems: [] },
            replay: { ok: true, status: 'active', problems: [] },
            head: { ok: true, checked: true, kid: EXAMPLE_KID, problems: [] },
            root: { ok: true, checked: true, computed: ROOT_HASH, signed: ROOT_HASH },
            problems: [],
          },
          event_signature_audit: { verified: 1, total: 1, first_failing_seq: null, failures: [] },
          pack_verdict: { present: false, ok: false },
          checks: [{ check: 'log.chain', outcome: 'passed', detail: '1 event chained from the genesis value' }],
          coverage: { checks_run: 6, checks_total: 12, not_run: [{ check: 'pack.signature', why: 'no pack has been minted' }] },
          computed_at: EXAMPLE_TIME,
        }),
      },
    },
  },
  {
    method: 'GET',
    path: '/passports/{id}/credential',
    summary: 'The UNTP Digital Product Passport credential of the passport at its log head (W3C VC 2.0, enveloped vc+jwt); re-issued whenever the passport changes',
    params: passportIdParam,
    query: {
      at: {
        type: 'date-time',
        description:
          'The credential as it was at this RFC 3339 instant (Z or an offset; inclusive): made from the passport’s status and signed log head of then, as GET /passports/{id}?at= gives them. Before its creation: 404 NOT_YET_ISSUED.',
      },
    },
    operation: 'query PassportCredential($id: ID!, $at: String) { passport(id: $id, at: $at) { credential { jwt } } }',
    variables: ({ params, query }) => ({ id: params.id, at: query.at ?? null }),
    result: (data, context) => {
      if (!data.passport) throw passportNotFound();
      return credentialAnswer(data.passport.credential.jwt, context.request.accept);
    },
    responses: { 200: credentialResponses('The credential'), 304: { description: 'Not modified: the passport has not changed since the ETag.' } },
  },
  didDocumentRoute('/did.json', 'where did:web finds it when the issuer’s public base URL has a path (…/issuer/did.json)'),
  didDocumentRoute('/.well-known/did.json', 'where did:web finds it when the issuer’s public base URL is an origin alone'),
  {
    method: 'GET',
    path: PASSPORT_CONTEXT_PATH,
    summary: 'The JSON-LD context v1 of the terms passport credentials add to VC 2.0 and UNTP DPP 0.6.1; never changes (a new term is a new version), and credentials carry its SHA-384',
    operation: 'query IssuerPassportContext { issuerPassportContext }',
    // The exact bytes, whose digest the credentials name: a verifier may keep them for good.
    result: (data) => ({
      headers: { 'content-type': JSON_LD_MEDIA_TYPE, etag: sha256Tag(data.issuerPassportContext), 'cache-control': 'public, max-age=31536000, immutable' },
      raw: Buffer.from(data.issuerPassportContext),
    }),
    responses: {
      200: { description: 'The context.', mediaType: JSON_LD_MEDIA_TYPE, ...answer(passportContextSchema, JSON.parse(passportContext(EXAMPLE_ISSUER).text)) },
      304: { description: 'Not modified: If-None-Match names the ETag of this document.' },
    },
  },
  {
    method: 'GET',
    path: PASSPORT_VOCABULARY_PATH,
    summary: 'The vocabulary the context maps the platform’s terms into (RDF Schema in JSON-LD): what each term, {issuer}/vocab#{term}, means',
    operation: 'query IssuerVocabulary { issuerVocabulary }',
    result: (data) => ({
      headers: { 'content-type': JSON_LD_MEDIA_TYPE, etag: sha256Tag(JSON.stringify(data.issuerVocabulary)), 'cache-control': 'no-cache' },
      body: data.issuerVocabulary,
    }),
    responses: {
      200: { description: 'The vocabulary.', mediaType: JSON_LD_MEDIA_TYPE, ...answer(vocabularySchema, passportVocabulary(EXAMPLE_ISSUER)) },
      304: { description: 'Not modified: If-None-Match names the ETag of this document.' },
    },
  },
  {
    method: 'GET',
    path: '/status-lists/{purpose}/{list}',
    summary: `A Bitstring Status List credential (W3C): ${STATUS_LIST_LENGTH} entries of one purpose; passport credentials name their entries in it`,
    params: { purpose: `${STATUS_PURPOSES.join(' or ')}.`, list: 'The list number, from 0: a passport’s status index divided by 131072.' },
    operation: 'query IssuerStatusList($purpose: String!, $list: Int!) { issuerStatusList(purpose: $purpose, list: $list) { jwt } }',
    // A list number that is no integer names no list: -1 asks for none.
    variables: ({ params }) => ({ purpose: params.purpose, list: /^\d{1,9}$/.test(params.list ?? '') ? Number(params.list) : -1 }),
    result: (data, context) => {
      if (!data.issuerStatusList) throw new RequestProblem(problem(404, 'NOT_FOUND', 'The issuer has no status list of this purpose and number.'));
      return credentialAnswer(data.issuerStatusList.jwt, context.request.accept);
    },
    responses: { 200: credentialResponses('The status list credential'), 304: { description: 'Not modified: no bit of the list has changed since the ETag.' } },
  },
  {
    method: 'POST',
    path: '/admin/profiles',
    summary: 'Creates or replaces a profile: the capability classes and claims a type of passport gets at creation',
    role: 'admin',
    body: {
      type: 'object',
      required: ['profile_id', 'capability_classes'],
      properties: {
        profile_id: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,63}$' },
        description: { type: 'string' },
        capability_classes: { type: 'array', items: { enum: ['identify', 'trace', 'verify-offline'] }, minItems: 1 },
        default_capability_class: { enum: ['identify', 'trace', 'verify-offline'] },
        claims: { type: 'object', additionalProperties: true, description: 'Copied verbatim into the core of every passport created under the profile.' },
      },
    },
    operation: `mutation UpsertIssuerProfile($input: IssuerProfileInput!) {
  profile: upsertIssuerProfile(input: $input) {
    profile_id: id description capability_classes: capabilityClasses default_capability_class: defaultCapabilityClass claims
    created_at: createdAt updated_at: updatedAt created
  }
}`,
    variables: ({ body }) => {
      const input = object(body);
      return {
        input: {
          id: input.profile_id,
          description: input.description,
          capabilityClasses: input.capability_classes,
          defaultCapabilityClass: input.default_capability_class,
          claims: input.claims,
        },
      };
    },
    result: (data) => {
      const { created, ...profile } = data.profile;
      return { status: created ? 201 : 200, body: profile };
    },
    responses: { 200: { description: 'The profile, replaced.', ...answer(profileSchema, PROFILE_EXAMPLE) }, 201: { description: 'The profile, created.', ...answer(profileSchema, PROFILE_EXAMPLE) } },
    problems: [401, 403, 422],
  },
  {
    method: 'POST',
    path: '/admin/applicability',
    summary: 'Creates or replaces the rule naming the profile that passports of a registry model (a version, or all) get',
    role: 'admin',
    body: {
      type: 'object',
      required: ['model_id', 'profile_id'],
      properties: {
        model_id: { type: 'string' },
        model_version: { type: 'integer', minimum: 1, description: 'Omit for every version without a rule of its own.' },
        profile_id: { type: 'string' },
      },
    },
    operation: `mutation SetIssuerApplicability($input: IssuerApplicabilityInput!) {
  rule: setIssuerApplicability(input: $input) { model_id: modelId model_version: modelVersion profile_id: profileId created_at: createdAt updated_at: updatedAt created }
}`,
    variables: ({ body }) => {
      const input = object(body);
      return { input: { modelId: input.model_id, modelVersion: input.model_version, profileId: input.profile_id } };
    },
    result: (data) => {
      const { created, ...rule } = data.rule;
      return { status: created ? 201 : 200, body: rule };
    },
    responses: { 200: { description: 'The rule, replaced.', ...answer(ruleSchema, RULE_EXAMPLE) }, 201: { description: 'The rule, created.', ...answer(ruleSchema, RULE_EXAMPLE) } },
    problems: [401, 403, 422],
  },
  {
    method: 'POST',
    path: '/admin/restore/acknowledgement',
    summary:
      'Acknowledges the restore that holds appends (npm run restore): once the clients are told the last sequence number of each restored passport, appends are taken again; acknowledging again acknowledges none',
    role: 'admin',
    operation: `mutation AcknowledgeRestore {
  acknowledged: acknowledgeRestore {
    restored_at: restoredAt snapshot_at: snapshotAt backup passports acknowledged_at: acknowledgedAt acknowledged_by: acknowledgedBy
  }
}`,
    result: (data) => ({ body: { acknowledged: data.acknowledged } }),
    responses: {
      200: {
        description: 'The restores acknowledged: one, unless a restore was repeated before it was acknowledged; none when no restore held appends.',
        ...answer(closed({ acknowledged: { type: 'array', items: restoreSchema } }), { acknowledged: [RESTORE_EXAMPLE] }),
      },
    },
    problems: [401, 403],
  },
  ...digitalLinkRoutes,
];

function passportNotFound(): RequestProblem {
  return new RequestProblem(problem(404, 'NOT_FOUND', 'The issuer has no passport with this id.'));
}
