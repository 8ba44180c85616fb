/** The JSON Schemas of the archive service's request bodies and answers, each answer with its example. */
import type { JsonSchema } from '../../route-table.js';
import { answer, closed, dateTime, EXAMPLE_KID, EXAMPLE_SIGNATURE, EXAMPLE_TIME, hex512, page, signed, thumbprint, uri } from '../../schemas.js';

const notarizationSchema = signed(
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
  notarization: notarizationSchema,
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

export const snapshot = answer(snapshotSchema, SNAPSHOT_EXAMPLE);
export const snapshotPage = answer(page('snapshots', snapshotSchema), { snapshots: [SNAPSHOT_EXAMPLE], next: null });
export const notarization = answer(notarizationSchema, NOTARIZATION_EXAMPLE);

export const snapshotBody: JsonSchema = {
  type: 'object',
  required: ['passport_id'],
  additionalProperties: false,
  properties: { passport_id: { type: 'string', minLength: 1, maxLength: 200, description: 'The issuer passport to snapshot.' } },
};

/** The archive bytes: no JSON. */
export const tarArchive: JsonSchema = { type: 'string', contentMediaType: 'application/x-tar' };
