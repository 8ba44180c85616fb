/** The GraphQL documents the archive service's routes send through the gateway. */

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

export const SNAPSHOTS = `query Snapshots($passportId: ID, $at: DateTimeISO, $first: Int!, $after: String) {
  snapshots(passportId: $passportId, at: $at, first: $first, after: $after) { nodes { ...SnapshotMembers } pageInfo { endCursor } }
}
${SNAPSHOT_MEMBERS}`;

export const CREATE_SNAPSHOT = `mutation CreateSnapshot($passportId: ID!) { createSnapshot(passportId: $passportId) { ...SnapshotMembers } }
${SNAPSHOT_MEMBERS}`;

/** What GET /snapshots/{id} answers before its bytes: enough for its headers, and for HEAD. */
export const SNAPSHOT_ARCHIVE = `query SnapshotArchive($id: ID!) { snapshot(id: $id) { id size sha512 mediaType contentDigest etag chunkCount } }`;

/** A few chunks of the archive bytes, base64; GET /snapshots/{id} runs it for every page of its streamed body. */
export const SNAPSHOT_CHUNKS = `query SnapshotChunks($id: ID!, $from: Int!, $count: Int!) { snapshot(id: $id) { chunks(from: $from, count: $count) } }`;

export const SNAPSHOT_NOTARIZATION = `query SnapshotNotarization($id: ID!) { snapshot(id: $id) { notarization } }`;
