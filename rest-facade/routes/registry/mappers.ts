/** How the registry's REST requests become GraphQL variables, and its GraphQL data REST answers. */
import type { RecordKind } from '../../../lib/formats/registry/index.js';
import { RequestProblem } from '../../../lib/http/request-problem.js';
import { problem } from '../../../lib/problem.js';
import type { RouteContext, RouteRequest } from '../../route-table.js';

interface RecordData {
  path: string;
  version: number;
  [member: string]: unknown;
}

/** A record version as REST returns it: its members, the record's address and this version's. */
export function recordBody(record: RecordData, context: RouteContext) {
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

/** POST /: the record to create, of the kind the body names. */
export function createVariables({ body }: RouteRequest) {
  const request = objectBody(body, { kind: true, id: true, body: true, status: false, effective_from: false, effective_to: false });
  return { input: { kind: request.kind, id: request.id, body: request.body, status: request.status, effectiveFrom: request.effective_from, effectiveTo: request.effective_to } };
}

/** POST …/{id}/versions: the next version of a record of `kind`. */
export function appendVariables(kind: RecordKind, { params, body }: RouteRequest) {
  const request = objectBody(body, { expected_version: true, body: true, status: false, effective_from: false, effective_to: false });
  return {
    id: params.id,
    kind,
    input: { expectedVersion: request.expected_version, body: request.body, status: request.status, effectiveFrom: request.effective_from, effectiveTo: request.effective_to },
  };
}

export const listVariables = (kind: RecordKind, { query }: RouteRequest) => ({
  kind,
  limit: query.limit ?? null,
  cursor: query.cursor ?? null,
  status: query.status ?? null,
  idPrefix: query.id_prefix ?? null,
  updatedSince: query.updated_since ?? null,
});

/** A page of records, and the link to the next page: this page's filters, only the cursor moved. */
export function recordPage(data: Record<string, any>, context: RouteContext, collection: string) {
  const page = data.registryRecords as { records: RecordData[]; pageInfo: { endCursor: string | null } };
  const body = { records: page.records.map((record) => recordBody(record, context)), next_cursor: page.pageInfo.endCursor };
  if (!body.next_cursor) return { body };
  const next = new URL(`${context.baseUrl}/${collection}`);
  next.searchParams.set('cursor', body.next_cursor);
  return { headers: { link: `<${next.toString()}>; rel="next"` }, body };
}

/** No record of `kind` has the id (or not the version asked for). */
export function noSuchRecord(kind: RecordKind, what: 'id' | 'id, or not this version'): RequestProblem {
  return new RequestProblem(problem(404, 'NOT_FOUND', `No ${kind === 'generic' ? 'generic record' : kind.replaceAll('_', ' ')} has this ${what}.`));
}

/** The profile manifest's JSON Schema, its `$id` the URL it is served at. */
export function profileManifestSchema(data: Record<string, any>, context: RouteContext) {
  const { $schema, ...schema } = data.registryProfileManifestSchema as Record<string, unknown>;
  return { $schema, $id: `${context.baseUrl}/schemas/profile-manifest`, ...schema };
}
