/**
 * The archive service's paths (spec §4 "Archive service") besides the common ones, plus the one
 * sub-resource the notarization recipe fetches: GET /snapshots/{id}/notarization, the signed JSON
 * itself (no specified path has that shape, so none is shadowed).
 *
 * GET /snapshots/{id} streams the archive bytes: the snapshot's metadata first (enough for HEAD),
 * then its chunks, a few per GraphQL request, decoded from base64 and written as they come. The
 * facade checks the SHA-512 of what it relayed and holds the last chunk back until that check
 * passes, so a response that completes is exactly the stored, notarized archive.
 */
import { createHash } from 'node:crypto';
import { problem } from '../../lib/problem.js';
import { RequestProblem } from '../../lib/http/request-problem.js';
import type { Route, RouteContext, RouteResult } from '../route-table.js';
import { answer, closed, dateTime, EXAMPLE_KID, EXAMPLE_SIGNATURE, EXAMPLE_TIME, hex512, location, page, signed, thumbprint, uri } from '../schemas.js';

/** Chunks (1 MiB each) per GraphQL request while streaming: bounds what the facade holds at once. */
export const CHUNKS_PER_REQUEST = 4;

const SNAPSHOT_MEMBERS = `fragment SnapshotMembers on Snapshot {
  id
  passport_id: passportId
  created_at: createdAt
  size
  sha512
  media_type: mediaType
  content_digest: contentDigest
  tagmanifest_sha512: tagmanifestSha512
  payload_oxum: payloadOxum
  notary_kid: notaryKid
  notarization
}`;

const notarization = signed(
  {
    snapshot_id: { type: 'string' },
    passport_id: { type: 'string' },
    bag_sha512: { ...hex512, description: 'SHA-512 of the archive bytes.' },
    bag_size: { type: 'integer', minimum: 0 },
    notarized_at: dateTime,
    tagmanifest_sha512: hex512,
  },
  {},
  'Signed JSON by the notary key (GET /keyring).',
);

const snapshotSchema = closed({
  id: { type: 'string' },
  passport_id: { type: 'string' },
  created_at: { ...dateTime, description: 'When the snapshot was taken (its Bagging-Date).' },
  size: { type: 'integer', minimum: 0, description: 'Length of the archive in bytes.' },
  sha512: { ...hex512, description: 'SHA-512 of the archive bytes; also its ETag.' },
  media_type: { const: 'application/x-tar' },
  content_digest: { type: 'string', pattern: '^sha-512=:[A-Za-z0-9+/]+={0,2}:$', description: 'RFC 9530 Content-Digest of the archive bytes.' },
  tagmanifest_sha512: hex512,
  payload_oxum: { type: 'string', pattern: '^[0-9]+\\.[0-9]+$', description: 'Payload-Oxum of the bag (octets.files).' },
  notary_kid: thumbprint,
  notarization,
  href: { ...uri, description: 'GET it for the archive bytes.' },
  notarization_href: { ...uri, description: 'GET it for the notarization alone.' },
});

const SNAPSHOT_ID = 'f6b6cbb4-d19d-45c1-a9e3-4cc80cad10d6';
const BAG_SHA512 = 'b625aa10a60f6745902db600f431eebcbdaefb30d54c0288458f4cf311e9d1bca6fc13065bd385e5d99bc62f29cdf783cd9792530c2f90966d3618e147dfa03d';
const NOTARIZATION_EXAMPLE = {
  snapshot_id: SNAPSHOT_ID,
  passport_id: 'ff5f4cb2-a154-42fe-a230-52fce619fe81',
  bag_sha512: BAG_SHA512,
  bag_size: 24576,
  notarized_at: EXAMPLE_TIME,
  tagmanifest_sha512: 'f8a699e07733dc5219c46c3a8984ca2f431a5d1eac9ea7bebc1f9d21a6c834ff9f90f9fee05089d5a54db82949a459f8c1818fca5458e6ab14d1c890b7bd5585',
  signature: EXAMPLE_SIGNATURE,
};
const SNAPSHOT_EXAMPLE = {
  id: SNAPSHOT_ID,
  passport_id: NOTARIZATION_EXAMPLE.passport_id,
  created_at: EXAMPLE_TIME,
  size: 24576,
  sha512: BAG_SHA512,
  media_type: 'application/x-tar',
  content_digest: 'sha-512=:tiWqEKYPZ0WQLbYA9DHuvL2u+zDVTAKIRY9M8xHp0bym/BMGW9OF5dmbxi8pzfeDzZeSUwwvkJZtNhjhR9+gPQ==:',
  tagmanifest_sha512: NOTARIZATION_EXAMPLE.tagmanifest_sha512,
  payload_oxum: '8754.9',
  notary_kid: EXAMPLE_KID,
  notarization: NOTARIZATION_EXAMPLE,
  href: `http://127.0.0.1:8080/archive/snapshots/${SNAPSHOT_ID}`,
  notarization_href: `http://127.0.0.1:8080/archive/snapshots/${SNAPSHOT_ID}/notarization`,
};

interface SnapshotMembers {
  id: string;
  sha512: string;
  [member: string]: unknown;
}

const snapshotUrl = (context: RouteContext, id: string) => `${context.baseUrl}/snapshots/${encodeURIComponent(id)}`;

function withLinks(snapshot: SnapshotMembers, context: RouteContext) {
  return { ...snapshot, href: snapshotUrl(context, snapshot.id), notarization_href: `${snapshotUrl(context, snapshot.id)}/notarization` };
}

function noSuchSnapshot(id: string): RequestProblem {
  return new RequestProblem(problem(404, 'NOT_FOUND', `The archive has no snapshot ${id}.`));
}

/** The POST body: exactly `{"passport_id": "<id>"}`. */
function creationVariables(body: unknown): Record<string, unknown> {
  const invalid = (detail: string) => new RequestProblem(problem(400, 'INVALID_BODY', detail));
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('The body must be a JSON object {"passport_id": "…"}.');
  const unknown = Object.keys(body).filter((member) => member !== 'passport_id');
  if (unknown.length > 0) throw invalid(`Unknown member${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the body takes passport_id only.`);
  const passportId = (body as { passport_id?: unknown }).passport_id;
  if (typeof passportId !== 'string') throw invalid('passport_id is required and must be a string.');
  return { passportId };
}

const CHUNKS_OPERATION = `query SnapshotChunks($id: ID!, $from: Int!, $count: Int!) { snapshot(id: $id) { chunks(from: $from, count: $count) } }`;

interface StoredArchive {
  id: string;
  size: number;
  sha512: string;
  chunkCount: number;
}

/**
 * The archive bytes, page by page. The last chunk is yielded only once the length and SHA-512 of
 * everything read match the stored digest; otherwise the transfer is cut short.
 */
async function* archiveBytes(context: RouteContext, archive: StoredArchive): AsyncGenerator<Uint8Array> {
  const hash = createHash('sha512');
  let length = 0;
  let held: Buffer | undefined;
  const page = (from: number) => {
    const request = context.graphql(CHUNKS_OPERATION, { id: archive.id, from, count: CHUNKS_PER_REQUEST });
    // Awaited below unless the client goes away first; then its failure must not go unhandled.
    request.catch(() => undefined);
    return request;
  };
  // One page is fetched ahead while the previous one is written: at most two pages are held.
  let next = archive.chunkCount > 0 ? page(0) : undefined;
  for (let from = 0; from < archive.chunkCount; from += CHUNKS_PER_REQUEST) {
    const data = await next!;
    next = from + CHUNKS_PER_REQUEST < archive.chunkCount ? page(from + CHUNKS_PER_REQUEST) : undefined;
    const chunks = (data.snapshot as { chunks: string[] } | null)?.chunks;
    if (!chunks?.length) throw new Error(`snapshot ${archive.id}: no chunks from ${from} of ${archive.chunkCount}`);
    for (const text of chunks) {
      const bytes = Buffer.from(text, 'base64');
      hash.update(bytes);
      length += bytes.length;
      if (held) yield held;
      held = bytes;
    }
  }
  const digest = hash.digest('hex');
  if (length !== archive.size || digest !== archive.sha512) {
    throw new Error(`snapshot ${archive.id}: relayed ${length} bytes with SHA-512 ${digest}, stored ${archive.size} bytes with ${archive.sha512}`);
  }
  if (held) yield held;
}

export const archiveRoutes: Route[] = [
  {
    method: 'GET',
    path: '/snapshots',
    summary: 'Lists snapshots, oldest first; filtered by passport and by what existed at an instant',
    query: {
      passport_id: { type: 'string', description: 'Only snapshots of this passport.' },
      at: { type: 'date-time', description: 'Only snapshots that existed at this instant (RFC 3339).' },
      limit: { type: 'integer', description: 'Snapshots per page (1–100, default 20).', minimum: 1, maximum: 100 },
      after: { type: 'string', description: 'Cursor from the `next` member of the previous page.' },
    },
    operation: `query Snapshots($passportId: ID, $at: DateTimeISO, $first: Int!, $after: String) {
  snapshots(passportId: $passportId, at: $at, first: $first, after: $after) { nodes { ...SnapshotMembers } pageInfo { endCursor } }
}
${SNAPSHOT_MEMBERS}`,
    // `at` is passed on in the one spelling the DateTimeISO scalar takes (RFC 3339 also allows a space for T, and a lowercase z).
    variables: ({ query }) => ({
      passportId: query.passport_id ?? null,
      at: query.at === undefined ? null : new Date(String(query.at)).toISOString(),
      first: query.limit ?? 20,
      after: query.after ?? null,
    }),
    result: (data, context) => {
      const page = data.snapshots as { nodes: SnapshotMembers[]; pageInfo: { endCursor: string | null } };
      const next = page.pageInfo.endCursor;
      const body = { snapshots: page.nodes.map((snapshot) => withLinks(snapshot, context)), next };
      if (!next) return { body };
      return { body, headers: { link: `<${context.baseUrl}/snapshots?${nextPageQuery(context, next)}>; rel="next"` } };
    },
    responses: {
      200: {
        description: 'A page of snapshots; `next` is the cursor of the following page, or null.',
        ...answer(page('snapshots', snapshotSchema), { snapshots: [SNAPSHOT_EXAMPLE], next: null }),
      },
    },
  },
  {
    method: 'POST',
    path: '/snapshots',
    summary: 'Snapshots a passport: its bag is built, stored and notarized in one step',
    role: 'writer',
    body: {
      type: 'object',
      required: ['passport_id'],
      additionalProperties: false,
      properties: { passport_id: { type: 'string', minLength: 1, maxLength: 200, description: 'The issuer passport to snapshot.' } },
    },
    operation: `mutation CreateSnapshot($passportId: ID!) { createSnapshot(passportId: $passportId) { ...SnapshotMembers } }
${SNAPSHOT_MEMBERS}`,
    variables: ({ body }) => creationVariables(body),
    result: (data, context) => {
      const snapshot = withLinks(data.createSnapshot as SnapshotMembers, context);
      return { status: 201, headers: { location: snapshot.href }, body: snapshot };
    },
    responses: {
      201: {
        headers: location('The archive bytes of the snapshot (GET /snapshots/{id}).'),
        description: 'The snapshot; `location` and `href` name its archive bytes.',
        ...answer(snapshotSchema, SNAPSHOT_EXAMPLE),
      },
    },
    // 502: the passport could not be gathered through the graph (GATHER_FAILED) or bagged (UNARCHIVABLE_CONTENT); an issuer or gateway out of reach is the 503 of every route.
    problems: [422, 502],
  },
  {
    method: 'GET',
    path: '/snapshots/{id}',
    summary: 'Re-serves the snapshot archive (AIP) byte-identically',
    params: { id: 'Snapshot id.' },
    operation: `query SnapshotArchive($id: ID!) { snapshot(id: $id) { id size sha512 mediaType contentDigest etag chunkCount } }`,
    variables: ({ params }) => ({ id: params.id }),
    result: (data, context): RouteResult => {
      const snapshot = data.snapshot as (StoredArchive & { mediaType: string; contentDigest: string; etag: string }) | null;
      if (!snapshot) throw noSuchSnapshot(context.request.params.id!);
      return {
        headers: {
          'content-type': snapshot.mediaType,
          'content-length': String(snapshot.size),
          etag: snapshot.etag,
          'content-digest': snapshot.contentDigest,
          // Stored once and never changed: any cache may keep it for good.
          'cache-control': 'public, max-age=31536000, immutable',
          'content-disposition': `attachment; filename="${snapshot.id.replace(/[^\w.-]/g, '_')}.tar"`,
          link: `<${snapshotUrl(context, snapshot.id)}/notarization>; rel="describedby"; type="application/json"`,
        },
        stream: archiveBytes(context, snapshot),
      };
    },
    responses: {
      200: {
        description: 'The archive bytes exactly as stored: a BagIt 1.0 bag in one POSIX ustar archive, with ETag and Content-Digest (RFC 9530, sha-512).',
        mediaType: 'application/x-tar',
        schema: { type: 'string', contentMediaType: 'application/x-tar' },
      },
      304: { description: 'Not modified: If-None-Match names the ETag (the archive never changes).' },
    },
  },
  {
    method: 'GET',
    path: '/snapshots/{id}/notarization',
    summary: 'The notarization of a snapshot: signed JSON by the notary key, verbatim',
    params: { id: 'Snapshot id.' },
    operation: `query SnapshotNotarization($id: ID!) { snapshot(id: $id) { notarization } }`,
    variables: ({ params }) => ({ id: params.id }),
    result: (data, context) => {
      const snapshot = data.snapshot as { notarization: Record<string, unknown> } | null;
      if (!snapshot) throw noSuchSnapshot(context.request.params.id!);
      return { headers: { 'cache-control': 'public, max-age=31536000, immutable' }, body: snapshot.notarization };
    },
    responses: {
      200: {
        description: 'Signed JSON: snapshot_id, passport_id, bag_sha512, bag_size, notarized_at, tagmanifest_sha512 and signature (detached JWS over the RFC 8785 form of the rest).',
        ...answer(notarization, NOTARIZATION_EXAMPLE),
      },
    },
  },
];

/** The query of the next page: the same filters and page size, and the cursor. */
function nextPageQuery(context: RouteContext, cursor: string): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(context.request.query)) if (name !== 'after' && value !== undefined) query.set(name, String(value));
  query.set('after', cursor);
  return query.toString();
}
