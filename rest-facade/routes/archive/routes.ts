/**
 * The archive service's paths (spec §4 "Archive service") besides the common ones, plus the one
 * sub-resource the notarization recipe fetches: GET /snapshots/{id}/notarization, the signed JSON
 * itself (no specified path has that shape, so none is shadowed).
 */
import type { Route, RouteResult } from '../../route-table.js';
import { location } from '../../schemas.js';
import { archiveBytes, archiveHeaders, creationVariables, listVariables, noSuchSnapshot, snapshotPage, withLinks, type SnapshotMembers, type StoredArchive } from './mappers.js';
import * as operations from './operations.js';
import * as schemas from './schemas.js';

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
    operation: operations.SNAPSHOTS,
    variables: listVariables,
    result: snapshotPage,
    responses: { 200: { description: 'A page of snapshots; `next` is the cursor of the following page, or null.', ...schemas.snapshotPage } },
  },
  {
    method: 'POST',
    path: '/snapshots',
    summary: 'Snapshots a passport: its bag is built, stored and notarized in one step',
    role: 'writer',
    body: schemas.snapshotBody,
    operation: operations.CREATE_SNAPSHOT,
    variables: ({ body }) => creationVariables(body),
    result: (data, context) => {
      const snapshot = withLinks(data.createSnapshot as SnapshotMembers, context);
      return { status: 201, headers: { location: snapshot.href }, body: snapshot };
    },
    responses: {
      201: {
        headers: location('The archive bytes of the snapshot (GET /snapshots/{id}).'),
        description: 'The snapshot; `location` and `href` name its archive bytes.',
        ...schemas.snapshot,
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
    operation: operations.SNAPSHOT_ARCHIVE,
    variables: ({ params }) => ({ id: params.id }),
    result: (data, context): RouteResult => {
      const snapshot = data.snapshot as (StoredArchive & { mediaType: string; contentDigest: string; etag: string }) | null;
      if (!snapshot) throw noSuchSnapshot(context.request.params.id!);
      return { headers: archiveHeaders(snapshot, context), stream: archiveBytes(context, snapshot) };
    },
    responses: {
      200: {
        description: 'The archive bytes exactly as stored: a BagIt 1.0 bag in one POSIX ustar archive, with ETag and Content-Digest (RFC 9530, sha-512).',
        mediaType: 'application/x-tar',
        schema: schemas.tarArchive,
      },
      304: { description: 'Not modified: If-None-Match names the ETag (the archive never changes).' },
    },
  },
  {
    method: 'GET',
    path: '/snapshots/{id}/notarization',
    summary: 'The notarization of a snapshot: signed JSON by the notary key, verbatim',
    params: { id: 'Snapshot id.' },
    operation: operations.SNAPSHOT_NOTARIZATION,
    variables: ({ params }) => ({ id: params.id }),
    result: (data, context) => {
      const snapshot = data.snapshot as { notarization: Record<string, unknown> } | null;
      if (!snapshot) throw noSuchSnapshot(context.request.params.id!);
      return { headers: { 'cache-control': 'public, max-age=31536000, immutable' }, body: snapshot.notarization };
    },
    responses: {
      200: {
        description: 'Signed JSON: snapshot_id, passport_id, bag_sha512, bag_size, notarized_at, tagmanifest_sha512 and signature (detached JWS over the RFC 8785 form of the rest).',
        ...schemas.notarization,
      },
    },
  },
];
