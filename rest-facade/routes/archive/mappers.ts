/**
 * How the archive service's REST requests become GraphQL variables, and its GraphQL data REST
 * answers. GET /snapshots/{id} streams the archive bytes: the snapshot's metadata first (enough for
 * HEAD), then its chunks, a few per GraphQL request, decoded from base64 and written as they come.
 * The facade checks the SHA-512 of what it relayed and holds the last chunk back until that check
 * passes, so a response that completes is exactly the stored, notarized archive.
 */
import { createHash } from 'node:crypto';
import { problem } from '../../../lib/problem.js';
import { RequestProblem } from '../../../lib/http/request-problem.js';
import type { RouteContext, RouteRequest } from '../../route-table.js';
import { SNAPSHOT_CHUNKS } from './operations.js';

/** Chunks (1 MiB each) per GraphQL request while streaming: bounds what the facade holds at once. */
export const CHUNKS_PER_REQUEST = 4;

export interface SnapshotMembers {
  id: string;
  sha512: string;
  [member: string]: unknown;
}

export const snapshotUrl = (context: RouteContext, id: string) => `${context.baseUrl}/snapshots/${encodeURIComponent(id)}`;

/** A snapshot as REST writes it: its members, and the URLs of its bytes and of its notarization. */
export function withLinks(snapshot: SnapshotMembers, context: RouteContext) {
  return { ...snapshot, href: snapshotUrl(context, snapshot.id), notarization_href: `${snapshotUrl(context, snapshot.id)}/notarization` };
}

export function noSuchSnapshot(id: string): RequestProblem {
  return new RequestProblem(problem(404, 'NOT_FOUND', `The archive has no snapshot ${id}.`));
}

/** The POST body: exactly `{"passport_id": "<id>"}`. */
export function creationVariables(body: unknown): Record<string, unknown> {
  const invalid = (detail: string) => new RequestProblem(problem(400, 'INVALID_BODY', detail));
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('The body must be a JSON object {"passport_id": "…"}.');
  const unknown = Object.keys(body).filter((member) => member !== 'passport_id');
  if (unknown.length > 0) throw invalid(`Unknown member${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the body takes passport_id only.`);
  const passportId = (body as { passport_id?: unknown }).passport_id;
  if (typeof passportId !== 'string') throw invalid('passport_id is required and must be a string.');
  return { passportId };
}

// `at` is passed on in the one spelling the DateTimeISO scalar takes (RFC 3339 also allows a space for T, and a lowercase z).
export const listVariables = ({ query }: RouteRequest) => ({
  passportId: query.passport_id ?? null,
  at: query.at === undefined ? null : new Date(String(query.at)).toISOString(),
  first: query.limit ?? 20,
  after: query.after ?? null,
});

/** A page of snapshots, and the link to the next page (the same filters and page size, and the cursor). */
export function snapshotPage(data: Record<string, any>, context: RouteContext) {
  const page = data.snapshots as { nodes: SnapshotMembers[]; pageInfo: { endCursor: string | null } };
  const next = page.pageInfo.endCursor;
  const body = { snapshots: page.nodes.map((snapshot) => withLinks(snapshot, context)), next };
  if (!next) return { body };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(context.request.query)) if (name !== 'after' && value !== undefined) query.set(name, String(value));
  query.set('after', next);
  return { body, headers: { link: `<${context.baseUrl}/snapshots?${query.toString()}>; rel="next"` } };
}

export interface StoredArchive {
  id: string;
  size: number;
  sha512: string;
  chunkCount: number;
}

/** The headers of the archive bytes: its digests, and that it never changes. */
export function archiveHeaders(snapshot: StoredArchive & { mediaType: string; contentDigest: string; etag: string }, context: RouteContext): Record<string, string> {
  return {
    'content-type': snapshot.mediaType,
    'content-length': String(snapshot.size),
    etag: snapshot.etag,
    'content-digest': snapshot.contentDigest,
    // Stored once and never changed: any cache may keep it for good.
    'cache-control': 'public, max-age=31536000, immutable',
    'content-disposition': `attachment; filename="${snapshot.id.replace(/[^\w.-]/g, '_')}.tar"`,
    link: `<${snapshotUrl(context, snapshot.id)}/notarization>; rel="describedby"; type="application/json"`,
  };
}

/**
 * The archive bytes, page by page. The last chunk is yielded only once the length and SHA-512 of
 * everything read match the stored digest; otherwise the transfer is cut short.
 */
export async function* archiveBytes(context: RouteContext, archive: StoredArchive): AsyncGenerator<Uint8Array> {
  const hash = createHash('sha512');
  let length = 0;
  let held: Buffer | undefined;
  const page = (from: number) => {
    const request = context.graphql(SNAPSHOT_CHUNKS, { id: archive.id, from, count: CHUNKS_PER_REQUEST });
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
