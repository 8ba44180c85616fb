/** The JSON Schemas of the trust service's request bodies and answers, each answer with its example. */
import { NODE_KINDS, REVOCATION_REASONS } from '../../../lib/formats/trust/index.js';
import type { JsonSchema } from '../../route-table.js';
import { answer, closed, dateTime, EXAMPLE_ED25519_JWK, EXAMPLE_KID, EXAMPLE_SIGNATURE, EXAMPLE_TIME, freeObject, keyRevocation, kid, nullableDateTime, publicJwk, signed } from '../../schemas.js';

const ed25519Jwk: JsonSchema = { ...publicJwk, properties: { ...(publicJwk.properties as Record<string, JsonSchema>), kty: { const: 'OKP' }, crv: { const: 'Ed25519' } } };

const nodeKey: JsonSchema = {
  type: 'object',
  description:
    "A public JWK with OpenID Federation historical-key members; registered JWK members (use, key_ops, alg, x5u, x5c, x5t, x5t#S256) and a keyring's purpose and signs may ride along, so a key from any GET /keyring is taken as it is. Any other member, or a private one, is 422 INVALID_KEY.",
  required: ['kty', 'iat'],
  properties: {
    kty: { enum: ['OKP', 'EC'] },
    crv: { enum: ['Ed25519', 'P-256'] },
    kid: { type: 'string' },
    iat: { type: 'integer', description: 'NumericDate.' },
    exp: { type: 'integer', description: 'NumericDate, exclusive.' },
    revoked: { type: 'object', properties: { revoked_at: { type: 'integer' }, reason: { type: 'string' } } },
    purpose: { type: 'string', description: 'What the key is for in the keyring that publishes it; not kept on the node.' },
    signs: { type: 'array', items: { type: 'string' }, description: 'What the key signs, as its keyring says; not kept on the node.' },
  },
};

export const nodeBody: JsonSchema = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: 'string', description: '1–256 characters, no whitespace, control characters or "#".' },
    kind: { enum: NODE_KINDS, description: 'Required for a new node; never changes.' },
    jurisdiction: { type: 'string', description: 'ISO 3166-1 alpha-2 or ISO 3166-2.' },
    keys: { type: 'array', items: nodeKey, description: 'Merged by kid; a key is never dropped.' },
    threshold: { type: 'integer', minimum: 1, description: 'Quorum nodes only.' },
    group_key: { ...ed25519Jwk, description: 'Quorum nodes only: the FROST (RFC 9591) Ed25519 group key; pinned once.' },
  },
};

/** A node's key as stored: a public JWK with its lifetime (NumericDates) and, once revoked, why. */
const storedNodeKey: JsonSchema = {
  ...publicJwk,
  required: ['kty', 'crv', 'x', 'kid', 'iat'],
  properties: {
    ...(publicJwk.properties as Record<string, JsonSchema>),
    iat: { type: 'integer', description: 'NumericDate.' },
    exp: { type: 'integer', description: 'NumericDate, exclusive.' },
    revoked: keyRevocation,
  },
};

const storedNode = closed(
  { id: { type: 'string' }, kind: { enum: NODE_KINDS } },
  { jurisdiction: { type: 'string' }, keys: { type: 'array', items: storedNodeKey }, threshold: { type: 'integer', minimum: 1 }, group_key: publicJwk },
  'A node as stored; absent members do not apply.',
);
const NODE_EXAMPLE = { id: 'acme', kind: 'issuer', jurisdiction: 'DE', keys: [{ ...EXAMPLE_ED25519_JWK, iat: 1792995600 }] };
export const node = answer(storedNode, NODE_EXAMPLE);

const delegationCredential: JsonSchema = {
  oneOf: [
    { type: 'string', description: 'Compact JWS whose payload is {iss, sub, scope, iat, nbf?, exp?} (times as RFC 3339 or NumericDate).' },
    { type: 'object', required: ['signature'], properties: { signature: { type: 'string' } }, description: 'Signed JSON: {iss, sub, scope, iat, nbf?, exp?} plus a detached JWS over its JCS form.' },
  ],
};
export const edgeBody: JsonSchema = { oneOf: [delegationCredential, { type: 'object', required: ['credential'], properties: { credential: delegationCredential } }] };

const storedEdge = closed(
  {
    id: { type: 'string', description: 'base64url SHA-256 of the credential.' },
    iss: { type: 'string' },
    sub: { type: 'string' },
    scope: freeObject('What the delegation covers, e.g. jurisdictions and event_types.'),
    iat: dateTime,
    nbf: dateTime,
    exp: { ...nullableDateTime, description: 'null: stands until revoked.' },
    kid,
    credential: delegationCredential,
  },
  {},
  'A delegation edge: the claims of its credential, and the credential verbatim.',
);
const EDGE_EXAMPLE = {
  id: 'o-TjkNgjxweivnrqiQ3iUZnThTwa2K7-H2Wz8iGT9Kk',
  iss: 'root-eu',
  sub: 'acme',
  scope: { jurisdictions: ['DE'] },
  iat: EXAMPLE_TIME,
  nbf: EXAMPLE_TIME,
  exp: '2027-05-04T10:15:30.000Z',
  kid: EXAMPLE_KID,
  credential: 'eyJhbGciOiJFZDI1NTE5Iiwia2lkIjoieVh4aWxoaWpNcllrZHQ5bDZpLVA0MFZZclNMMzE4TW91OTJpU2FjNDYzbyJ9.eyJpc3MiOiJyb290LWV1In0.S3qc_snho_3EuYgFVviRm2VxyJj64WVBSKlWV-4p9z4',
};
export const edge = answer(storedEdge, EDGE_EXAMPLE);

const entryStatus = {
  required: { service_type: { type: 'string' }, status: { enum: ['granted', 'withdrawn'] }, status_starting_time: dateTime },
  optional: { name: { type: 'string' }, node_id: { type: 'string' } },
};
const listEntry = closed(
  { id: { type: 'string' }, ...entryStatus.required, history: { type: 'array', items: closed(entryStatus.required, entryStatus.optional), description: 'Earlier instances, newest first.' } },
  entryStatus.optional,
);
const ENTRY_EXAMPLE = { id: 'acme-qc', service_type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC', name: 'Acme', node_id: 'acme', status: 'granted', status_starting_time: EXAMPLE_TIME, history: [] };

const listSchema = closed({
  jurisdiction: { type: 'string' },
  framework: { type: 'string' },
  sequence_number: { type: 'integer', minimum: 1 },
  issued_at: dateTime,
  next_update: dateTime,
  entries: { type: 'array', items: listEntry },
});
const LIST_EXAMPLE = { jurisdiction: 'DE', framework: 'eIDAS', sequence_number: 2, issued_at: EXAMPLE_TIME, next_update: '2026-10-31T10:15:30.000Z', entries: [ENTRY_EXAMPLE] };
export const trustList = answer(listSchema, LIST_EXAMPLE);
export const newTrustList = answer(listSchema, { ...LIST_EXAMPLE, sequence_number: 1, entries: [] });
export const trustLists = answer(closed({ trust_lists: { type: 'array', items: listSchema } }), { trust_lists: [LIST_EXAMPLE] });

export const trustListBody: JsonSchema = {
  type: 'object',
  required: ['jurisdiction', 'framework'],
  properties: { jurisdiction: { type: 'string' }, framework: { type: 'string' }, next_update: { ...dateTime, description: 'Default: 180 days after issue.' } },
};

export const entryBody: JsonSchema = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: 'string' },
    service_type: { type: 'string', format: 'uri', description: 'Required for a new entry.' },
    name: { type: 'string' },
    node_id: { type: 'string' },
    superseded_at: { ...dateTime, description: 'Withdraws the entry from this instant on (not in the future).' },
  },
};

const entryUpsert = closed({ changed: { type: 'boolean' }, entry: listEntry, list: listSchema });
export const changedEntry = answer(entryUpsert, {
  changed: true,
  entry: {
    ...ENTRY_EXAMPLE,
    status: 'withdrawn',
    status_starting_time: '2026-06-01T08:00:00.000Z',
    history: [{ service_type: ENTRY_EXAMPLE.service_type, name: 'Acme', node_id: 'acme', status: 'granted', status_starting_time: EXAMPLE_TIME }],
  },
  list: LIST_EXAMPLE,
});
export const newEntry = answer(entryUpsert, { changed: true, entry: ENTRY_EXAMPLE, list: LIST_EXAMPLE });

const attestation: JsonSchema = {
  oneOf: [
    closed({ quorum: { type: 'string' }, slots: { type: 'array', items: closed({ kid, signature: { type: 'string', description: 'base64url Ed25519 signature.' } }) } }),
    closed({ quorum: { type: 'string' }, group_signature: { type: 'string', description: 'base64url FROST (RFC 9591) Ed25519 group signature.' } }),
  ],
  description: 'Signatures of a quorum over the RFC 8785 form of {effective_at, reason, subject}.',
};
const revocationSchema = closed(
  {
    subject: { type: 'string', description: 'A node id, or "<node id>#<kid>".' },
    reason: { enum: REVOCATION_REASONS },
    effective_at: dateTime,
    recorded_at: dateTime,
    retroactive: { type: 'boolean' },
  },
  { attestation },
);
const REVOCATION_EXAMPLE = { subject: `acme#${EXAMPLE_KID}`, reason: 'superseded', effective_at: EXAMPLE_TIME, recorded_at: EXAMPLE_TIME, retroactive: false };
export const revocation = answer(revocationSchema, REVOCATION_EXAMPLE);
export const revocations = answer(closed({ revocations: { type: 'array', items: revocationSchema } }), { revocations: [REVOCATION_EXAMPLE] });

export const revocationBody: JsonSchema = {
  type: 'object',
  required: ['subject', 'reason'],
  properties: {
    subject: { type: 'string' },
    reason: { enum: REVOCATION_REASONS },
    effective_at: { ...dateTime, description: 'Default: the recording time. Earlier makes the revocation retroactive.' },
    attestation: {
      ...attestation,
      description: 'Needed for a retroactive revocation: {quorum, slots: [{kid, signature}]} or {quorum, group_signature}, signatures over the RFC 8785 form of {effective_at, reason, subject}.',
    },
  },
};

export const graph = answer(closed({ nodes: { type: 'array', items: storedNode }, edges: { type: 'array', items: storedEdge }, revocations: { type: 'array', items: revocationSchema } }), {
  nodes: [NODE_EXAMPLE],
  edges: [EDGE_EXAMPLE],
  revocations: [REVOCATION_EXAMPLE],
});

const witnessSet = closed({ m: { type: 'integer', minimum: 1 }, keys: { type: 'array', items: ed25519Jwk } });

export const witnessSetBody: JsonSchema = { type: 'object', required: ['m', 'keys'], properties: { m: { type: 'integer', minimum: 1 }, keys: { type: 'array', items: ed25519Jwk, minItems: 1 } } };
export const witnessSetInForce = answer(closed({ m: { type: 'integer', minimum: 1 }, keys: { type: 'array', items: ed25519Jwk }, recorded_at: dateTime }), {
  m: 1,
  keys: [EXAMPLE_ED25519_JWK],
  recorded_at: EXAMPLE_TIME,
});

const cosignature = closed({ kid, time: { type: 'integer', description: 'Seconds since the epoch.' }, signature: { type: 'string', description: 'base64url Ed25519 signature.' } });
const masterListEntrySchema = closed({
  id: { type: 'string' },
  body: freeObject('The entry as the witnesses cosigned it.'),
  cosignatures: { type: 'array', items: cosignature },
  verdict: closed({
    valid: { type: 'integer', minimum: 0, description: 'How many cosignatures are valid, from distinct witnesses of the current set.' },
    required: { type: ['integer', 'null'], description: 'M of the current witness set; null when none is set.' },
    quorate: { type: 'boolean' },
    reasons: { type: 'array', items: closed({ index: { type: 'integer' }, kid: { type: 'string' }, outcome: { enum: ['VALID', 'UNKNOWN_WITNESS', 'BAD_SIGNATURE', 'DUPLICATE'] } }) },
    explanation: { type: 'string' },
  }),
});
const MASTER_LIST_ENTRY_EXAMPLE = {
  id: 'de-root-1',
  body: { jurisdiction: 'DE', root: 'root-eu', keys: ['root-eu-key'] },
  cosignatures: [{ kid: EXAMPLE_KID, time: 1795587735, signature: '4KciJUUnqN4KqSTHw8gG6pYf4ZjeIX21q24KMwJ7zXVrwWtMhcq6OYWvmltgA2dHivXdN' }],
  verdict: {
    valid: 1,
    required: 1,
    quorate: true,
    reasons: [{ index: 0, kid: EXAMPLE_KID, outcome: 'VALID' }],
    explanation: '1 valid cosignature from distinct witnesses of the current set, 1 required: quorate',
  },
};
export const masterListEntry = answer(masterListEntrySchema, MASTER_LIST_ENTRY_EXAMPLE);

export const masterListEntryBody: JsonSchema = {
  type: 'object',
  required: ['id', 'body'],
  properties: {
    id: { type: 'string', description: '1–256 printable ASCII characters, no spaces.' },
    body: freeObject('The statement the witnesses cosign; its RFC 8785 form is hashed into the cosignature text.'),
    cosignatures: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kid', 'time', 'signature'],
        properties: { kid: { type: 'string' }, time: { type: 'integer' }, signature: { type: 'string', description: 'base64url Ed25519 signature.' } },
      },
    },
  },
};

export const masterList = answer(
  closed({
    origin: { type: 'string', description: 'The origin line witnesses cosign.' },
    shape: { type: 'string', description: '"M-of-K", or "none" before a witness set is set.' },
    m: { type: ['integer', 'null'] },
    k: { type: 'integer', minimum: 0 },
    witnesses: { type: 'array', items: ed25519Jwk },
    witness_set_recorded_at: nullableDateTime,
    entries: { type: 'array', items: masterListEntrySchema },
  }),
  {
    origin: 'passport-trust/yXxilhijMrYkdt9l6i-P40VYrSL318Mou92iSac463o/master-list',
    shape: '1-of-1',
    m: 1,
    k: 1,
    witnesses: [EXAMPLE_ED25519_JWK],
    witness_set_recorded_at: EXAMPLE_TIME,
    entries: [MASTER_LIST_ENTRY_EXAMPLE],
  },
);

const anchorBundleSchema = signed(
  {
    service: { const: 'trust' },
    issued_at: dateTime,
    roots: { type: 'array', items: closed({ id: { type: 'string' }, keys: { type: 'array', items: storedNodeKey } }, { jurisdiction: { type: 'string' } }) },
    quorums: {
      type: 'array',
      items: closed({ id: { type: 'string' }, keys: { type: 'array', items: storedNodeKey }, threshold: { type: 'integer', minimum: 1 } }, { jurisdiction: { type: 'string' }, group_key: ed25519Jwk }),
    },
    witness_set: { oneOf: [witnessSet, { type: 'null' }] },
    trust_lists: {
      type: 'array',
      items: closed({
        jurisdiction: { type: 'string' },
        framework: { type: 'string' },
        sequence_number: { type: 'integer' },
        issued_at: dateTime,
        next_update: dateTime,
        sha256: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', description: 'base64url SHA-256 of the RFC 8785 form of the list version.' },
      }),
    },
    master_list_origin: { type: 'string' },
  },
  { jurisdiction: { type: 'string', description: 'The jurisdiction the bundle is narrowed to.' } },
  'Signed JSON by the trust service key (GET /keyring).',
);
export const anchorBundle = answer(anchorBundleSchema, {
  service: 'trust',
  issued_at: EXAMPLE_TIME,
  roots: [{ id: 'root-eu', keys: [{ ...EXAMPLE_ED25519_JWK, iat: 1792995600 }] }],
  quorums: [],
  witness_set: { m: 1, keys: [EXAMPLE_ED25519_JWK] },
  trust_lists: [
    { jurisdiction: 'DE', framework: 'eIDAS', sequence_number: 2, issued_at: EXAMPLE_TIME, next_update: '2026-10-31T10:15:30.000Z', sha256: '8PXuiMRhCMuSOtoyM9sHdSPmNYAO_s18UdYqtHVZX5Y' },
  ],
  master_list_origin: 'passport-trust/yXxilhijMrYkdt9l6i-P40VYrSL318Mou92iSac463o/master-list',
  signature: EXAMPLE_SIGNATURE,
});

const keyPathSchema = signed(
  {
    service: { const: 'trust' },
    type: { const: 'key-path' },
    kid,
    issued_at: dateTime,
    nodes: { type: 'array', items: storedNode },
    edges: { type: 'array', items: storedEdge },
    revocations: { type: 'array', items: revocationSchema },
  },
  {},
  'Signed JSON by the trust service key (GET /keyring).',
);
export const keyPath = answer(keyPathSchema, {
  service: 'trust',
  type: 'key-path',
  kid: EXAMPLE_KID,
  issued_at: EXAMPLE_TIME,
  nodes: [NODE_EXAMPLE],
  edges: [EDGE_EXAMPLE],
  revocations: [],
  signature: EXAMPLE_SIGNATURE,
});
