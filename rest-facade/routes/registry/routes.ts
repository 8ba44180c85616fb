/**
 * The registry's paths (spec §4, registry table) beyond the common ones. Records are addressed by
 * collection (`/items/{id}` …) and generic records at the root (`/{id}`); the matcher tries fixed
 * segments first, and the registry refuses generic ids that would collide with a fixed path.
 */
import { API_VERSIONED_KINDS, KIND_COLLECTIONS, type RecordKind } from '../../../lib/formats/registry/index.js';
import type { QueryParameter, Route } from '../../route-table.js';
import { location } from '../../schemas.js';
import { appendVariables, createVariables, listVariables, noSuchRecord, profileManifestSchema, recordBody, recordPage } from './mappers.js';
import * as operations from './operations.js';
import * as schemas from './schemas.js';

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
    operation: operations.RECORD,
    variables: ({ params, query }) => ({ id: params.id, version: query.version ?? null, kind }),
    result: (data, context) => {
      if (!data.registryRecord) throw noSuchRecord(kind, 'id, or not this version');
      return { headers: { etag: `"${data.registryRecord.id}@${data.registryRecord.version}"` }, body: recordBody(data.registryRecord, context) };
    },
    responses: { 200: { description: 'The record version.', ...schemas.record }, 304: { description: 'Not modified: If-None-Match names the ETag of this version.' } },
  };
}

function supersessionRoute(kind: RecordKind, path: string, label: string): Route {
  return {
    method: 'GET',
    path,
    summary: `Supersession of ${label}: every version with predecessor and successor, and which is current`,
    params: { id: 'Record id.' },
    operation: operations.SUPERSESSION,
    variables: ({ params }) => ({ id: params.id, kind }),
    result: (data) => {
      if (!data.registrySupersession) throw noSuchRecord(kind, 'id');
      return { body: data.registrySupersession };
    },
    responses: { 200: { description: 'The supersession chain, oldest version first.', ...schemas.supersession } },
  };
}

function appendRoute(kind: RecordKind, path: string, label: string): Route {
  return {
    method: 'POST',
    path,
    summary: `Adds the next version to ${label}; a stale expected_version is 409 with nothing written`,
    role: 'writer',
    params: { id: 'Record id.' },
    body: schemas.appendBody,
    operation: operations.APPEND_VERSION,
    variables: (request) => appendVariables(kind, request),
    result: (data, context) => {
      const record = recordBody(data.appendRegistryRecordVersion, context);
      return { status: 201, headers: { location: record.version_href }, body: record };
    },
    responses: { 201: { headers: location('The new version.'), description: 'The new version, now current.', ...schemas.record } },
    problems: [401, 409, 422],
  };
}

function listRoute(kind: RecordKind, collection: string): Route {
  return {
    method: 'GET',
    path: `/${collection}`,
    summary: `Lists ${collection.replaceAll('-', ' ')} at their current versions, in id order, with cursor pagination`,
    query: listQuery,
    operation: operations.RECORDS,
    variables: (request) => listVariables(kind, request),
    result: (data, context) => recordPage(data, context, collection),
    responses: { 200: { description: 'A page of records and the cursor of the next page (null on the last page).', ...schemas.recordPage } },
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
    body: schemas.createBody,
    operation: operations.CREATE_RECORD,
    variables: createVariables,
    result: (data, context) => {
      const record = recordBody(data.createRegistryRecord, context);
      return { status: 201, headers: { location: record.href }, body: record };
    },
    responses: { 201: { headers: location('The record.'), description: 'The new record at version 1.', ...schemas.createdRecord } },
    problems: [401, 409, 422],
  },
  {
    method: 'POST',
    path: '/admin/seed',
    summary: 'Loads the sample register (idempotent: what is stored already is left as it is)',
    role: 'admin',
    operation: operations.SEED,
    result: (data) => ({ body: data.seedRegistry }),
    responses: { 200: { description: 'How many versions were stored and how many were present already.', ...schemas.seeded } },
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
    operation: operations.APPLICABILITY,
    variables: ({ query }) => ({ productCategory: query.product_category ?? null, jurisdiction: query.jurisdiction ?? null, at: query.at ?? null }),
    result: (data) => ({ body: data.registryApplicability }),
    responses: { 200: { description: 'The applicable model and profile versions, each with its type ref id@version.', ...schemas.applicability } },
  },
  {
    method: 'GET',
    path: '/schemas/profile-manifest',
    summary: 'The JSON Schema 2020-12 of a profile manifest',
    operation: operations.PROFILE_MANIFEST_SCHEMA,
    result: (data, context) => ({ headers: { 'content-type': 'application/schema+json' }, body: profileManifestSchema(data, context) }),
    responses: { 200: { description: 'The schema, with its examples.', mediaType: 'application/schema+json', ...schemas.profileManifestSchema } },
  },
  ...collectionRoutes,
  {
    method: 'POST',
    path: '/models/{id}/validate',
    summary: 'Validates the JSON document in the body against a model; every error with its JSON Pointer',
    params: { id: 'Model id.' },
    query: { version: { type: 'integer', minimum: 1, description: 'The model version; the current one when absent.' } },
    role: 'writer',
    body: schemas.anyDocument,
    operation: operations.VALIDATE_DOCUMENT,
    variables: ({ params, query, body }) => ({ modelId: params.id, version: query.version ?? null, document: body }),
    result: (data) => ({ body: data.registryValidateDocument }),
    responses: { 200: { description: 'Whether the document is valid, against which model version, and every error with its JSON Pointer.', ...schemas.validation } },
    problems: [401],
  },
  readRoute('generic', '/{id}', LABELS.generic),
  supersessionRoute('generic', '/{id}/supersession', LABELS.generic),
  appendRoute('generic', '/{id}/versions', LABELS.generic),
];
