/** The JSON Schemas of the registry's request bodies and answers, each answer with its example. */
import { RECORD_KINDS, RECORD_STATUSES } from '../../../lib/formats/registry/index.js';
import type { JsonSchema } from '../../route-table.js';
import { answer, closed, dateTime, EXAMPLE_TIME, freeObject, nullableDateTime, page, uri } from '../../schemas.js';

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
export const record = answer(recordSchema, RECORD_EXAMPLE);
export const createdRecord = answer(recordSchema, { ...RECORD_EXAMPLE, version: 1, effective_from: null, supersedes: null, current_version: 1, version_href: `${RECORD_EXAMPLE.href}?version=1` });

export const recordPage = answer(page('records', recordSchema, 'next_cursor'), { records: [RECORD_EXAMPLE], next_cursor: 'eyJhZnRlciI6IndpZGdldC5hIn0' });

export const supersession = answer(
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

const versionFields = {
  status: { enum: [...RECORD_STATUSES, null], description: 'Defaults to the current status (active for a new record).' },
  body: { type: 'object', additionalProperties: true, description: 'The record content; for a model: title, schema (JSON Schema 2020-12) and applicability.' },
  effective_from: { type: ['string', 'null'], format: 'date-time', description: 'Start of the effective window (inclusive); absent or null: since always.' },
  effective_to: { type: ['string', 'null'], format: 'date-time', description: 'End of the effective window (exclusive); absent or null: open-ended.' },
};

export const createBody: JsonSchema = {
  type: 'object',
  required: ['kind', 'id', 'body'],
  properties: {
    kind: { type: 'string', description: 'item, model, service, cross_register_mapping, protocol_binding, verification_mechanism or generic (collection names are accepted too).' },
    id: { type: 'string', pattern: '^[a-z0-9](?:[a-z0-9._-]{0,126}[a-z0-9])?$' },
    ...versionFields,
  },
  additionalProperties: false,
};

export const appendBody: JsonSchema = {
  type: 'object',
  required: ['expected_version', 'body'],
  properties: { expected_version: { type: 'integer', minimum: 1, description: 'The version the change builds on: the current one.' }, ...versionFields },
  additionalProperties: false,
};

export const seeded = answer(
  closed({
    records: { type: 'integer', minimum: 0, description: 'Records in the sample register.' },
    versions_inserted: { type: 'integer', minimum: 0 },
    versions_present: { type: 'integer', minimum: 0 },
    skipped: { type: 'array', items: closed({ kind: { type: 'string' }, id: { type: 'string' }, reason: { type: 'string' } }), description: 'Sample records left out, and why.' },
  }),
  { records: 19, versions_inserted: 20, versions_present: 0, skipped: [] },
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
export const applicability = answer(
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
);

export const profileManifestSchema = answer(
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
);

export const anyDocument: JsonSchema = {
  description: 'The document to validate: any JSON value.',
  type: ['object', 'array', 'string', 'number', 'boolean', 'null'],
  additionalProperties: true,
  items: true,
};

export const validation = answer(
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
    errors: [{ pointer: '/chemistry', keyword: 'enum', message: 'must be equal to one of the allowed values', schema_path: '/properties/chemistry/enum', params: { allowedValues: ['LFP', 'NMC'] } }],
  },
);
