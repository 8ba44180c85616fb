/**
 * The registry's paths (spec §4, registry table) beyond the common ones. Records are addressed by
 * collection (`/items/{id}` …) and generic records at the root (`/{id}`); the matcher tries fixed
 * segments first, and the registry refuses generic ids that would collide with a fixed path.
 */
import { problem } from '../../lib/problem.js';
import { API_VERSIONED_KINDS, KIND_COLLECTIONS, type RecordKind } from '../../subgraphs/registry/domain/kinds.js';
import { RequestProblem } from '../../lib/http/request-problem.js';
import type { JsonSchema, QueryParameter, Route, RouteContext, RouteRequest } from '../route-table.js';
import { answer, closed, dateTime, EXAMPLE_TIME, freeObject, location, nullableDateTime, page, uri } from '../schemas.js';

const RECORD_FIELDS = `id kind version status body effective_from: effectiveFrom effective_to: effectiveTo created_at: createdAt
    supersedes superseded_by: supersededBy current current_version: currentVersion path`;

interface RecordData {
  path: string;
  version: number;
  [member: string]: unknown;
}

/** A record version as REST returns it: its members, the record's address and this version's. */
function recordBody(record: RecordData, context: RouteContext) {
  const { path, ...members } = record;
  return { ...members, href: `${context.baseUrl}${path}`, version_href: `${context.baseUrl}${path}?version=${record.version}` };
}

const invalidBody = (detail: string) => new RequestProblem(problem(400, 'INVALID_BODY', detail));

/** The JSON object body of a write, with only the members it may have and every required one. */
function objectBody(body: unknown, members: Record<string, boolean>): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidBody('The body must be a JSON object.');
  const unknown = Object.keys(body).filter((name) => !(name in members));
  if (unknown.length > 0) throw invalidBody(`Unknown member ${unknown.join(', ')}; the body takes ${Object.keys(members).join(', ')}.`);
  const missing = Object.entries(members)
    .filter(([name, required]) => required && !(name in body))
    .map(([name]) => name);
  if (missing.length > 0) throw invalidBody(`The body lacks ${missing.join(', ')}.`);
  // GraphQL would coerce a number to an ID or a String; REST members keep their JSON types.
  // The optional members may be null: no status means the default, no window end means open.
  const values = body as Record<string, unknown>;
  const notText = ['kind', 'id', 'status', 'effective_from', 'effective_to'].filter((name) => name in values && typeof values[name] !== 'string' && !(values[name] === null && !members[name]));
  if (notText.length > 0) throw invalidBody(`${notText.join(', ')} must be a string.`);
  return body as Record<string, unknown>;
}

const notFound = (detail: string) => new RequestProblem(problem(404, 'NOT_FOUND', detail));

const RECORD_KINDS = ['item', 'model', 'service', 'cross_register_mapping', 'protocol_binding', 'verification_mechanism', 'generic'];
const RECORD_STATUSES = ['draft', 'active', 'deprecated', 'withdrawn'];

const recordSchema = closed({
  id: { type: 'string' },
  kind: { enum: RECORD_KINDS },
  version: { type: 'integer', minimum: 1 },
  status: { enum: RECORD_STATUSES },
  body: freeObject('The record content; for a model: title, schema (JSON Schema 2020-12) and applicability.'),
  effective_from: nullableDateTime,
  effective_to: nullableDateTime,
  created_at: dateTime,
  supersedes: { type: ['integer', 'null'], description: 'The version this one follows.' },
  superseded_by: { type: ['integer', 'null'], description: 'The version that follows this one.' },
  current: { type: 'boolean' },
  current_version: { type: 'integer', minimum: 1 },
  href: { ...uri, description: 'The record (its current version).' },
  version_href: { ...uri, description: 'This version.' },
});
const RECORD_EXAMPLE = {
  id: 'widget.a',
  kind: 'item',
  version: 2,
  status: 'active',
  body: { title: 'Widget A' },
  effective_from: EXAMPLE_TIME,
  effective_to: null,
  created_at: EXAMPLE_TIME,
  supersedes: 1,
  superseded_by: null,
  current: true,
  current_version: 2,
  href: 'http://127.0.0.1:8080/registry/items/widget.a',
  version_href: 'http://127.0.0.1:8080/registry/items/widget.a?version=2',
};
const record = answer(recordSchema, RECORD_EXAMPLE);
const CREATED_RECORD_EXAMPLE = { ...RECORD_EXAMPLE, version: 1, effective_from: null, supersedes: null, current_version: 1, version_href: `${RECORD_EXAMPLE.href}?version=1` };

const recordPage = answer(page('records', recordSchema, 'next_cursor'), { records: [RECORD_EXAMPLE], next_cursor: 'eyJhZnRlciI6IndpZGdldC5hIn0' });

const supersession = answer(
  closed({
    id: { type: 'string' },
    kind: { enum: RECORD_KINDS },
    current: { type: 'integer', minimum: 1, description: 'The current version.' },
    versions: {
      type: 'array',
      items: closed({
        version: { type: 'integer', minimum: 1 },
        status: { enum: RECORD_STATUSES },
        predecessor: { type: ['integer', 'null'] },
        successor: { type: ['integer', 'null'] },
        current: { type: 'boolean' },
        created_at: dateTime,
        effective_from: nullableDateTime,
        effective_to: nullableDateTime,
      }),
    },
  }),
  {
    id: 'widget.a',
    kind: 'item',
    current: 2,
    versions: [
      { version: 1, status: 'active', predecessor: null, successor: 2, current: false, created_at: EXAMPLE_TIME, effective_from: null, effective_to: null },
      { version: 2, status: 'active', predecessor: 1, successor: null, current: true, created_at: EXAMPLE_TIME, effective_from: EXAMPLE_TIME, effective_to: null },
    ],
  },
);

const applicable = (optional: Record<string, JsonSchema> = {}) =>
  closed(
    {
      id: { type: 'string' },
      version: { type: 'integer', minimum: 1 },
      ref: { type: 'string', description: '"id@version", the form of a passport type ref.' },
      status: { enum: RECORD_STATUSES },
      product_categories: { type: 'array', items: { type: 'string' } },
      jurisdictions: { type: 'array', items: { type: 'string' } },
      effective_from: nullableDateTime,
      effective_to: nullableDateTime,
    },
    optional,
  );
const APPLICABLE_EXAMPLE = {
  id: 'battery-passport',
  version: 1,
  ref: 'battery-passport@1',
  status: 'active',
  product_categories: ['battery.ev'],
  jurisdictions: ['EU'],
  effective_from: null,
  effective_to: null,
};

const versionFields = {
  status: { enum: ['draft', 'active', 'deprecated', 'withdrawn', null], description: 'Defaults to the current status (active for a new record).' },
  body: { type: 'object', additionalProperties: true, description: 'The record content; for a model: title, schema (JSON Schema 2020-12) and applicability.' },
  effective_from: { type: ['string', 'null'], format: 'date-time', description: 'Start of the effective window (inclusive); absent or null: since always.' },
  effective_to: { type: ['string', 'null'], format: 'date-time', description: 'End of the effective window (exclusive); absent or null: open-ended.' },
};

const createSchema: JsonSchema = {
  type: 'object',
  required: ['kind', 'id', 'body'],
  properties: {
    kind: { type: 'string', description: 'item, model, service, cross_register_mapping, protocol_binding, verification_mechanism or generic (collection names are accepted too).' },
    id: { type: 'string', pattern: '^[a-z0-9](?:[a-z0-9._-]{0,126}[a-z0-9])?$' },
    ...versionFields,
  },
  additionalProperties: false,
};

const appendSchema: JsonSchema = {
  type: 'object',
  required: ['expected_version', 'body'],
  properties: { expected_version: { type: 'integer', minimum: 1, description: 'The version the change builds on: the current one.' }, ...versionFields },
  additionalProperties: false,
};

const versionQuery: Record<string, QueryParameter> = { version: { type: 'integer', minimum: 1, description: 'An older version; the current one when absent.' } };

const listQuery: Record<string, QueryParameter> = {
  limit: { type: 'integer', minimum: 1, maximum: 500, description: 'Records per page (default 50).' },
  cursor: { type: 'string', description: 'The next_cursor of the previous page.' },
  status: { type: 'string', description: 'Comma-separated statuses of the current version (draft, active, deprecated, withdrawn).' },
  id_prefix: { type: 'string', description: 'Only ids starting with this.' },
  updated_since: { type: 'date-time', description: 'Only records whose current version was stored at or after this instant.' },
};

function readRoute(kind: RecordKind, path: string, label: string): Route {
  return {
    method: 'GET',
    path,
    summary: `${label}: the current version, or an older one with ?version=`,
    params: { id: 'Record id.' },
    query: versionQuery,
    operation: `query RegistryRecord($id: ID!, $version: Int, $kind: String) { registryRecord(id: $id, version: $version, kind: $kind) { ${RECORD_FIELDS} } }`,
    variables: ({ params, query }) => ({ id: params.id, version: query.version ?? null, kind }),
    result: (data, context) => {
      if (!data.registryRecord) throw notFound(`No ${kind === 'generic' ? 'generic record' : kind.replaceAll('_', ' ')} has this id, or not this version.`);
      return { headers: { etag: `"${data.registryRecord.id}@${data.registryRecord.version}"` }, body: recordBody(data.registryRecord, context) };
    },
    responses: { 200: { description: 'The record version.', ...record }, 304: { description: 'Not modified: If-None-Match names the ETag of this version.' } },
  };
}

function supersessionRoute(kind: RecordKind, path: string, label: string): Route {
  return {
    method: 'GET',
    path,
    summary: `Supersession of ${label}: every version with predecessor and successor, and which is current`,
    params: { id: 'Record id.' },
    operation: `query RegistrySupersession($id: ID!, $kind: String) {
  registrySupersession(id: $id, kind: $kind) { id kind current versions { version status predecessor successor current created_at: createdAt effective_from: effectiveFrom effective_to: effectiveTo } }
}`,
    variables: ({ params }) => ({ id: params.id, kind }),
    result: (data) => {
      if (!data.registrySupersession) throw notFound(`No ${kind === 'generic' ? 'generic record' : kind.replaceAll('_', ' ')} has this id.`);
      return { body: data.registrySupersession };
    },
    responses: { 200: { description: 'The supersession chain, oldest version first.', ...supersession } },
  };
}

function appendRoute(kind: RecordKind, path: string, label: string): Route {
  return {
    method: 'POST',
    path,
    summary: `Adds the next version to ${label}; a stale expected_version is 409 with nothing written`,
    role: 'writer',
    params: { id: 'Record id.' },
    body: appendSchema,
    operation: `mutation AppendRegistryRecordVersion($id: ID!, $kind: String, $input: RegistryVersionInput!) {
  appendRegistryRecordVersion(id: $id, kind: $kind, input: $input) { ${RECORD_FIELDS} }
}`,
    variables: ({ params, body }: RouteRequest) => {
      const request = objectBody(body, { expected_version: true, body: true, status: false, effective_from: false, effective_to: false });
      return {
        id: params.id,
        kind,
        input: { expectedVersion: request.expected_version, body: request.body, status: request.status, effectiveFrom: request.effective_from, effectiveTo: request.effective_to },
      };
    },
    result: (data, context) => {
      const record = recordBody(data.appendRegistryRecordVersion, context);
      return { status: 201, headers: { location: record.version_href }, body: record };
    },
    responses: { 201: { headers: location('The new version.'), description: 'The new version, now current.', ...record } },
    problems: [401, 409, 422],
  };
}

function listRoute(kind: RecordKind, collection: string): Route {
  return {
    method: 'GET',
    path: `/${collection}`,
    summary: `Lists ${collection.replaceAll('-', ' ')} at their current versions, in id order, with cursor pagination`,
    query: listQuery,
    operation: `query RegistryRecords($kind: String!, $limit: Int, $cursor: String, $status: String, $idPrefix: String, $updatedSince: String) {
  registryRecords(kind: $kind, first: $limit, after: $cursor, status: $status, idPrefix: $idPrefix, updatedSince: $updatedSince) { records: nodes { ${RECORD_FIELDS} } pageInfo { endCursor } }
}`,
    variables: ({ query }) => ({
      kind,
      limit: query.limit ?? null,
      cursor: query.cursor ?? null,
      status: query.status ?? null,
      idPrefix: query.id_prefix ?? null,
      updatedSince: query.updated_since ?? null,
    }),
    result: (data, context) => {
      const page = data.registryRecords as { records: RecordData[]; pageInfo: { endCursor: string | null } };
      const body = { records: page.records.map((record) => recordBody(record, context)), next_cursor: page.pageInfo.endCursor };
      if (!body.next_cursor) return { body };
      // The next page keeps this page's filters; only the cursor moves.
      const next = new URL(`${context.baseUrl}/${collection}`);
      next.searchParams.set('cursor', body.next_cursor);
      return { headers: { link: `<${next.toString()}>; rel="next"` }, body };
    },
    responses: { 200: { description: 'A page of records and the cursor of the next page (null on the last page).', ...recordPage } },
  };
}

const LABELS: Record<RecordKind, string> = {
  item: 'an item',
  model: 'a model',
  service: 'a service',
  cross_register_mapping: 'a cross-register mapping',
  protocol_binding: 'a protocol binding',
  verification_mechanism: 'a verification mechanism',
  generic: 'a generic record',
};

const collectionRoutes: Route[] = Object.entries(KIND_COLLECTIONS).flatMap(([name, collection]) => {
  const kind = name as RecordKind;
  const routes = [listRoute(kind, collection), readRoute(kind, `/${collection}/{id}`, LABELS[kind])];
  if (API_VERSIONED_KINDS.has(kind)) {
    routes.push(supersessionRoute(kind, `/${collection}/{id}/supersession`, LABELS[kind]), appendRoute(kind, `/${collection}/{id}/versions`, LABELS[kind]));
  }
  return routes;
});

export const registryRoutes: Route[] = [
  {
    method: 'POST',
    path: '/',
    summary: 'Creates a record (of the kind named in the body) at version 1',
    role: 'writer',
    body: createSchema,
    operation: `mutation CreateRegistryRecord($input: RegistryRecordInput!) { createRegistryRecord(input: $input) { ${RECORD_FIELDS} } }`,
    variables: ({ body }) => {
      const request = objectBody(body, { kind: true, id: true, body: true, status: false, effective_from: false, effective_to: false });
      return { input: { kind: request.kind, id: request.id, body: request.body, status: request.status, effectiveFrom: request.effective_from, effectiveTo: request.effective_to } };
    },
    result: (data, context) => {
      const record = recordBody(data.createRegistryRecord, context);
      return { status: 201, headers: { location: record.href }, body: record };
    },
    responses: { 201: { headers: location('The record.'), description: 'The new record at version 1.', ...answer(recordSchema, CREATED_RECORD_EXAMPLE) } },
    problems: [401, 409, 422],
  },
  {
    method: 'POST',
    path: '/admin/seed',
    summary: 'Loads the sample register (idempotent: what is stored already is left as it is)',
    role: 'admin',
    operation: `mutation SeedRegistry { seedRegistry { records versions_inserted: versionsInserted versions_present: versionsPresent skipped { kind id reason } } }`,
    result: (data) => ({ body: data.seedRegistry }),
    responses: {
      200: {
        description: 'How many versions were stored and how many were present already.',
        ...answer(
          closed({
            records: { type: 'integer', minimum: 0, description: 'Records in the sample register.' },
            versions_inserted: { type: 'integer', minimum: 0 },
            versions_present: { type: 'integer', minimum: 0 },
            skipped: { type: 'array', items: closed({ kind: { type: 'string' }, id: { type: 'string' }, reason: { type: 'string' } }), description: 'Sample records left out, and why.' },
          }),
          { records: 19, versions_inserted: 20, versions_present: 0, skipped: [] },
        ),
      },
    },
    problems: [401, 403, 409],
  },
  {
    method: 'GET',
    path: '/applicability',
    summary: 'Which model and profile versions apply to a product category and jurisdiction at a date',
    query: {
      product_category: { type: 'string', description: 'Dotted category path, e.g. battery.ev; a declared category covers those beneath it.' },
      jurisdiction: { type: 'string', description: 'ISO 3166-1 alpha-2 code or EU (EU-wide records apply in every member state).' },
      at: { type: 'string', description: 'RFC 3339 date-time or date (default now); versions effective then.' },
    },
    operation: `query RegistryApplicability($productCategory: String, $jurisdiction: String, $at: String) {
  registryApplicability(productCategory: $productCategory, jurisdiction: $jurisdiction, at: $at) {
    at product_category: productCategory jurisdiction
    models { id version ref status product_categories: productCategories jurisdictions effective_from: effectiveFrom effective_to: effectiveTo }
    profiles { id version ref status model product_categories: productCategories jurisdictions effective_from: effectiveFrom effective_to: effectiveTo }
  }
}`,
    variables: ({ query }) => ({ productCategory: query.product_category ?? null, jurisdiction: query.jurisdiction ?? null, at: query.at ?? null }),
    result: (data) => ({ body: data.registryApplicability }),
    responses: {
      200: {
        description: 'The applicable model and profile versions, each with its type ref id@version.',
        ...answer(
          closed({
            at: dateTime,
            product_category: { type: ['string', 'null'] },
            jurisdiction: { type: ['string', 'null'] },
            models: { type: 'array', items: applicable() },
            profiles: { type: 'array', items: applicable({ model: { type: ['string', 'null'], description: 'The model version its passports conform to, id@version.' } }) },
          }),
          {
            at: EXAMPLE_TIME,
            product_category: 'battery.ev',
            jurisdiction: 'DE',
            models: [APPLICABLE_EXAMPLE],
            profiles: [{ ...APPLICABLE_EXAMPLE, id: 'eu-battery-passport', ref: 'eu-battery-passport@1', model: 'battery-passport@1' }],
          },
        ),
      },
    },
  },
  {
    method: 'GET',
    path: '/schemas/profile-manifest',
    summary: 'The JSON Schema 2020-12 of a profile manifest',
    operation: 'query RegistryProfileManifestSchema { registryProfileManifestSchema }',
    result: (data, context) => {
      const { $schema, ...schema } = data.registryProfileManifestSchema as Record<string, unknown>;
      return { headers: { 'content-type': 'application/schema+json' }, body: { $schema, $id: `${context.baseUrl}/schemas/profile-manifest`, ...schema } };
    },
    responses: {
      200: {
        description: 'The schema, with its examples.',
        mediaType: 'application/schema+json',
        ...answer(
          {
            type: 'object',
            description: 'A JSON Schema 2020-12 document ($schema 2020-12) whose $id is the URL of this path.',
            required: ['type', 'properties'],
            properties: {
              title: { type: 'string' },
              type: { const: 'object' },
              properties: { type: 'object', description: 'Each member of a manifest with its JSON Schema.', additionalProperties: freeObject('A JSON Schema (2020-12).') },
              examples: { type: 'array', items: freeObject('A manifest.') },
            },
            // Not declared as properties: @fastify/swagger drops members named $schema and $id from schemas and examples.
            additionalProperties: true,
          },
          { title: 'Passport profile manifest', type: 'object', required: ['type'], properties: { type: { const: 'ProfileManifest' } } },
        ),
      },
    },
  },
  ...collectionRoutes,
  {
    method: 'POST',
    path: '/models/{id}/validate',
    summary: 'Validates the JSON document in the body against a model; every error with its JSON Pointer',
    params: { id: 'Model id.' },
    query: { version: { type: 'integer', minimum: 1, description: 'The model version; the current one when absent.' } },
    role: 'writer',
    body: { description: 'The document to validate: any JSON value.', type: ['object', 'array', 'string', 'number', 'boolean', 'null'], additionalProperties: true, items: true },
    operation: `query RegistryValidateDocument($modelId: ID!, $version: Int, $document: JSON) { registryValidateDocument(modelId: $modelId, version: $version, document: $document) }`,
    variables: ({ params, query, body }) => ({ modelId: params.id, version: query.version ?? null, document: body }),
    result: (data) => ({ body: data.registryValidateDocument }),
    responses: {
      200: {
        description: 'Whether the document is valid, against which model version, and every error with its JSON Pointer.',
        ...answer(
          closed({
            valid: { type: 'boolean' },
            model: { type: 'string', description: '"id@version" of the model validated against.' },
            errors: {
              type: 'array',
              items: closed({
                pointer: { type: 'string', description: 'JSON Pointer (RFC 6901) into the document.' },
                keyword: { type: 'string' },
                message: { type: 'string' },
                schema_path: { type: 'string', description: 'JSON Pointer of the failing keyword in the model schema.' },
                params: freeObject('What the failing keyword says, as Ajv gives it, e.g. allowedValues.'),
              }),
            },
          }),
          {
            valid: false,
            model: 'battery-passport@1',
            errors: [
              { pointer: '/chemistry', keyword: 'enum', message: 'must be equal to one of the allowed values', schema_path: '/properties/chemistry/enum', params: { allowedValues: ['LFP', 'NMC'] } },
            ],
          },
        ),
      },
    },
    problems: [401],
  },
  readRoute('generic', '/{id}', LABELS.generic),
  supersessionRoute('generic', '/{id}/supersession', LABELS.generic),
  appendRoute('generic', '/{id}/versions', LABELS.generic),
];
