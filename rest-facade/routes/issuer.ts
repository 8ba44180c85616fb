/**
 * The issuer's paths (spec §4, issuer table) beyond the common ones. REST members are snake_case;
 * event payloads are carried opaquely (EPCIS 2.0 member names stay camelCase inside `payload`),
 * and signed documents pass through verbatim.
 */
import { problem } from '../../lib/problem.js';
import { RequestProblem } from '../../lib/http/request-problem.js';
import type { JsonSchema, Route } from '../route-table.js';

const object = (body: unknown): Record<string, unknown> => (body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {});

const passportIdParam = { id: 'The passport id.' };

const signedJson: JsonSchema = {
  type: 'object',
  required: ['signature'],
  properties: { signature: { type: 'string', description: 'Detached compact JWS (Ed25519) over the RFC 8785 form of the other members.' } },
};

const PASSPORT_FIELDS = `passport_id: id status core manifest log_head: logHead capability_class: capabilityClass log_size: logSize latest_pack: latestPack`;

const passportSchema: JsonSchema = {
  type: 'object',
  required: ['passport_id', 'status', 'core', 'manifest', 'log_head'],
  properties: {
    passport_id: { type: 'string' },
    status: { enum: ['draft', 'active', 'suspended', 'end_of_life', 'revoked'] },
    core: { type: 'object', description: 'Identity, type ref, capability class, profile and claims, status.' },
    manifest: { type: 'object', description: 'The config vector.' },
    log_head: { ...signedJson, description: 'Signed checkpoint: passport_id, size, root_hash (RFC 6962), timestamp.' },
    capability_class: { enum: ['identify', 'trace', 'verify-offline'] },
    log_size: { type: 'integer' },
    latest_pack: { type: ['string', 'null'] },
  },
};

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
        config_vector: { type: 'object', description: 'Validated against the registry model; returned as the manifest.' },
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
    responses: { 201: { description: 'The passport, with its empty log and the signed head of that log.', schema: passportSchema } },
    problems: [401, 403, 409, 422, 503],
  },
  {
    method: 'GET',
    path: '/passports/{id}',
    summary: 'The core, the manifest (config vector) and the signed log head of a passport',
    params: passportIdParam,
    query: { include_events: { type: 'boolean', description: 'Also return every signed event, in sequence order, as `log`.' } },
    operation: `query Passport($id: ID!, $withEvents: Boolean!) { passport(id: $id) { ${PASSPORT_FIELDS} events @include(if: $withEvents) } }`,
    variables: ({ params, query }) => ({ id: params.id, withEvents: query.include_events === true }),
    result: (data) => {
      if (!data.passport) throw passportNotFound();
      const { events, ...passport } = data.passport;
      return { body: { ...passport, ...(events ? { log: events } : {}) } };
    },
    responses: { 200: { description: 'The passport.', schema: passportSchema } },
  },
  {
    method: 'POST',
    path: '/passports/{id}/events',
    summary: 'Appends a typed event; the issuer signs it with Ed25519 and marks it Attested; an illegal status transition is a 409 (rule I6)',
    role: 'writer',
    params: passportIdParam,
    body: {
      type: 'object',
      required: ['type', 'payload'],
      properties: {
        type: {
          enum: ['activated', 'suspended', 'reinstated', 'end_of_life', 'revoked', 'ObjectEvent', 'AggregationEvent', 'TransactionEvent', 'TransformationEvent'],
          description: 'Lifecycle events change the status; EPCIS 2.0 traceability events do not. Payload schemas: the discovery document.',
        },
        payload: { type: 'object', description: 'Per the type’s schema; EPCIS events keep EPCIS 2.0 member names (camelCase).' },
      },
    },
    operation: `mutation AppendPassportEvent($passportId: ID!, $type: String!, $payload: JSONObject!) {
  appended: appendPassportEvent(passportId: $passportId, type: $type, payload: $payload) { event log_head: logHead status }
}`,
    variables: ({ params, body }) => {
      const input = object(body);
      return { passportId: params.id, type: input.type, payload: input.payload };
    },
    result: (data) => ({ status: 201, body: data.appended }),
    responses: {
      201: {
        description: 'The signed event (seq, prev_hash, trust "Attested", kid, signature), the new signed log head and the status after it.',
        schema: { type: 'object', required: ['event', 'log_head', 'status'], properties: { event: signedJson, log_head: signedJson, status: { type: 'string' } } },
      },
    },
    problems: [401, 403, 409, 422],
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
    result: (data) => ({ status: 201, body: data.pack }),
    responses: {
      201: {
        description: 'The pack text (DPP1:…), its size and the budget, the carrier key id and the claims.',
        schema: {
          type: 'object',
          required: ['passport_id', 'text', 'size', 'budget', 'kid', 'claims', 'minted_at'],
          properties: { text: { type: 'string', pattern: '^DPP1:[0-9A-Z $%*+\\-./:]*$' }, size: { type: 'integer' }, budget: { type: 'integer' } },
        },
      },
    },
    problems: [401, 403, 422],
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
        schema: { type: 'object', required: ['passport_id', 'outcome', 'log_verdict', 'event_signature_audit', 'pack_verdict', 'checks', 'coverage'] },
      },
    },
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
        claims: { type: 'object', description: 'Copied verbatim into the core of every passport created under the profile.' },
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
    responses: { 200: { description: 'The profile, replaced.' }, 201: { description: 'The profile, created.' } },
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
    responses: { 200: { description: 'The rule, replaced.' }, 201: { description: 'The rule, created.' } },
    problems: [401, 403, 422],
  },
];

function passportNotFound(): RequestProblem {
  return new RequestProblem(problem(404, 'NOT_FOUND', 'The issuer has no passport with this id.'));
}
