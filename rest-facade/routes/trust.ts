/** The trust service's paths (spec §4), each one GraphQL operation through the gateway. */
import type { JsonSchema, Route, RouteRequest } from '../route-table.js';
import {
  answer,
  closed,
  dateTime,
  EXAMPLE_ED25519_JWK,
  EXAMPLE_KID,
  EXAMPLE_SIGNATURE,
  EXAMPLE_TIME,
  freeObject,
  keyRevocation,
  kid,
  location,
  nullableDateTime,
  publicJwk,
  signed,
} from '../schemas.js';

const NODE_KINDS = ['root', 'authority', 'issuer', 'witness', 'quorum'];

// Selections with aliases, so REST bodies come out in snake_case.
const NODE = 'id kind jurisdiction keys threshold group_key: groupKey';
const EDGE = 'id iss sub scope iat nbf exp kid credential';
const ENTRY_STATUS = 'service_type: serviceType name node_id: nodeId status status_starting_time: statusStartingTime';
const ENTRY = `id ${ENTRY_STATUS} history { ${ENTRY_STATUS} }`;
const LIST = `jurisdiction framework sequence_number: sequenceNumber issued_at: issuedAt next_update: nextUpdate entries { ${ENTRY} }`;
const VERDICT = 'valid required quorate reasons { index kid outcome } explanation';
const MASTER_LIST_ENTRY = `id body cosignatures verdict { ${VERDICT} }`;
const REVOCATION = 'subject reason effective_at: effectiveAt recorded_at: recordedAt retroactive attestation';

type Json = Record<string, any>;

/**
 * A request body as GraphQL input: top-level members renamed to camelCase, values untouched. Every
 * member below the top is opaque (keys, bodies, attestations) and is passed on verbatim, however
 * deeply nested; a body that is not an object goes on as it is, for GraphQL to refuse (400).
 */
function inputOf(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).map(([name, value]) => [name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase()), value]));
}

/** Absent optional members are left out rather than sent as null, as the domain documents have them. */
function withoutNulls<T extends Json>(document: T): T {
  return Object.fromEntries(Object.entries(document).filter(([, value]) => value !== null)) as T;
}

const nodeOut = (node: Json) => withoutNulls(node);
const entryOut = (entry: Json) => withoutNulls({ ...entry, history: entry.history.map(withoutNulls) });
const listOut = (list: Json) => ({ ...list, entries: list.entries.map(entryOut) });
const revocationOut = (revocation: Json) => withoutNulls(revocation);

/** Records per GraphQL page while GET /graph streams: bounds what the facade holds at once. */
export const GRAPH_PAGE_SIZE = 1000;
const GRAPH_PAGE_OPERATION = `query TrustGraphPage($first: Int, $after: String) { trustGraphPage(first: $first, after: $after) { version nodes { ${NODE} } edges { ${EDGE} } revocations { ${REVOCATION} } pageInfo { endCursor } } }`;

/**
 * The variables of the first page: a client revalidating its copy (If-None-Match) usually holds the
 * current version, and one record is enough to learn it; when it does not, the stream goes on from
 * there in the same snapshot.
 */
const firstGraphPage = (ifNoneMatch: string | undefined) => ({ first: ifNoneMatch === undefined ? GRAPH_PAGE_SIZE : 1 });

const REVOCATION_PAGE_OPERATION = `query RevocationPage($first: Int, $after: String, $at: String, $knownBy: String, $window: String, $subject: String, $retroactive: Boolean) {
  trustRevocationPage(first: $first, after: $after, at: $at, knownBy: $knownBy, window: $window, subject: $subject, retroactive: $retroactive) { nodes { ${REVOCATION} } pageInfo { endCursor } }
}`;
const REVOCATION_SECTIONS: Sections = [['revocations', revocationOut]];
/** A page of trustRevocationPage as a page of the {"revocations":[…]} document. */
const revocationsOf = ({ trustRevocationPage: page }: Json) => ({ revocations: page.nodes, pageInfo: page.pageInfo });
const revocationPageVariables = ({ query }: RouteRequest) => ({
  first: GRAPH_PAGE_SIZE,
  at: query.at,
  knownBy: query.known_by,
  window: query.window,
  subject: query.subject,
  retroactive: query.retroactive,
});

type GraphPage = { version: string; nodes: Json[]; edges: Json[]; revocations: Json[]; pageInfo: { endCursor: string | null } };

/** A document's arrays, in the order its pages go through them: the member's name and how a record is written. */
type Sections = readonly (readonly [name: string, out: (record: Json) => Json])[];
type Page = { pageInfo: { endCursor: string | null } };

const GRAPH_SECTIONS: Sections = [
  ['nodes', nodeOut],
  ['edges', (edge: Json) => edge],
  ['revocations', revocationOut],
];

/**
 * The headers of the graph document whose first page this is: its ETag is the graph version, so a
 * client holding the document revalidates it (If-None-Match) for one record read instead of the
 * whole graph, and gets it again only once something was written.
 */
function graphHeaders(first: GraphPage): Record<string, string> {
  return { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache', etag: `"trust-graph-${first.version}"` };
}

/**
 * A document of arrays ({"nodes":[…],"edges":[…],…}) written page by page: each page's records as
 * JSON, the next page fetched (`nextPage`) while this one is written, so the writer holds two pages
 * at most. The pages come in section order, so a section's array is closed when the next one's
 * records begin.
 */
async function* pagedDocument(sections: Sections, first: Page, nextPage: (after: string) => Promise<Page>): AsyncGenerator<Uint8Array> {
  let section = 0;
  let written = 0;
  const text: string[] = [`{"${sections[0]![0]}":[`];
  const advanceTo = (target: number) => {
    for (; section < target; section += 1, written = 0) text.push(`],"${sections[section + 1]![0]}":[`);
  };
  const page = (after: string) => {
    const request = nextPage(after);
    // Awaited below unless the client goes away first; then its failure must not go unhandled.
    request.catch(() => undefined);
    return request;
  };
  let current: Page | undefined = first;
  while (current) {
    const next: Promise<Page> | undefined = current.pageInfo.endCursor === null ? undefined : page(current.pageInfo.endCursor);
    sections.forEach(([name, out], index) => {
      const records = (current as Json)[name] as Json[];
      if (records.length === 0) return;
      advanceTo(index);
      for (const record of records) text.push(`${written++ > 0 ? ',' : ''}${JSON.stringify(out(record))}`);
    });
    yield Buffer.from(text.join(''));
    text.length = 0;
    current = next && (await next);
  }
  advanceTo(sections.length - 1);
  text.push(']}');
  yield Buffer.from(text.join(''));
}

/** The graph document {"nodes":[…],"edges":[…],"revocations":[…]} from its first page on; `nextPage` runs GRAPH_PAGE_OPERATION. */
function graphDocument(first: GraphPage, nextPage: (variables: { first: number; after: string }) => Promise<Json>): AsyncGenerator<Uint8Array> {
  return pagedDocument(GRAPH_SECTIONS, first, async (after) => (await nextPage({ first: GRAPH_PAGE_SIZE, after })).trustGraphPage);
}

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

const nodeSchema: JsonSchema = {
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

const delegationCredential: JsonSchema = {
  oneOf: [
    { type: 'string', description: 'Compact JWS whose payload is {iss, sub, scope, iat, nbf?, exp?} (times as RFC 3339 or NumericDate).' },
    { type: 'object', required: ['signature'], properties: { signature: { type: 'string' } }, description: 'Signed JSON: {iss, sub, scope, iat, nbf?, exp?} plus a detached JWS over its JCS form.' },
  ],
};

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
const entryUpsert = closed({ changed: { type: 'boolean' }, entry: listEntry, list: listSchema });

const REVOCATION_REASONS = ['unspecified', 'keyCompromise', 'cACompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation', 'privilegeWithdrawn', 'aACompromise'];
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

const witnessSet = closed({ m: { type: 'integer', minimum: 1 }, keys: { type: 'array', items: ed25519Jwk } });

const cosignature = closed({ kid, time: { type: 'integer', description: 'Seconds since the epoch.' }, signature: { type: 'string', description: 'base64url Ed25519 signature.' } });
const masterListEntry = closed({
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

const anchorBundle = signed(
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

const keyPath = signed(
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

export const trustRoutes: Route[] = [
  {
    method: 'POST',
    path: '/nodes',
    summary: 'Upsert a node, merging keys by kid',
    role: 'writer',
    body: nodeSchema,
    operation: `mutation UpsertTrustNode($input: TrustNodeInput!) { upsertTrustNode(input: $input) { created node { ${NODE} } } }`,
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data, context) => {
      const { created, node } = data.upsertTrustNode;
      return { status: created ? 201 : 200, ...(created && { headers: { location: `${context.baseUrl}/graph` } }), body: nodeOut(node) };
    },
    responses: {
      200: { description: 'The node, keys merged.', ...answer(storedNode, NODE_EXAMPLE) },
      201: { headers: location('The trust graph, which lists the node.'), description: 'The new node (listed in /graph).', ...answer(storedNode, NODE_EXAMPLE) },
    },
    problems: [409, 422],
  },
  {
    method: 'POST',
    path: '/edges',
    summary: 'Add a delegation edge: the credential is validated, a failing one is not added',
    role: 'writer',
    body: { oneOf: [delegationCredential, { type: 'object', required: ['credential'], properties: { credential: delegationCredential } }] },
    operation: `mutation AddTrustEdge($credential: JSON!) { addTrustEdge(credential: $credential) { created edge { ${EDGE} } } }`,
    // The body is the credential itself, or {credential}: signed JSON never has a `credential` member.
    variables: ({ body }) => {
      const wrapped = typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 1 && 'credential' in body;
      return { credential: wrapped ? (body as { credential: unknown }).credential : body };
    },
    result: (data, context) => {
      const { created, edge } = data.addTrustEdge;
      return { status: created ? 201 : 200, ...(created && { headers: { location: `${context.baseUrl}/graph` } }), body: edge };
    },
    responses: {
      200: { description: 'The same credential was already stored: the stored edge.', ...answer(storedEdge, EDGE_EXAMPLE) },
      201: { headers: location('The trust graph, which lists the edge.'), description: 'The edge added (listed in /graph).', ...answer(storedEdge, EDGE_EXAMPLE) },
    },
    problems: [422],
  },
  {
    method: 'GET',
    path: '/graph',
    summary: 'Every node and edge, with the credentials verbatim, and the revocations that bear on them',
    operation: GRAPH_PAGE_OPERATION,
    variables: ({ ifNoneMatch }) => firstGraphPage(ifNoneMatch),
    result: (data, context) => ({
      headers: graphHeaders(data.trustGraphPage),
      stream: graphDocument(data.trustGraphPage, (variables) => context.graphql(GRAPH_PAGE_OPERATION, variables)),
    }),
    responses: {
      200: {
        description:
          'Nodes, edges and revocations, read in one snapshot: enough to resolve a path at any instant without asking again. Sent as it is read (chunked, no content-length), a page of records at a time, all pages in the snapshot of the first. The ETag is the version of the graph read: it changes with every node, edge or revocation written.',
        ...answer(closed({ nodes: { type: 'array', items: storedNode }, edges: { type: 'array', items: storedEdge }, revocations: { type: 'array', items: revocationSchema } }), {
          nodes: [NODE_EXAMPLE],
          edges: [EDGE_EXAMPLE],
          revocations: [REVOCATION_EXAMPLE],
        }),
        headers: { ETag: { type: 'string', description: 'The graph version, e.g. "trust-graph-1042".' } },
      },
      304: { description: 'Not modified: If-None-Match names the ETag of the current graph version; nothing was written since.' },
    },
  },
  {
    method: 'GET',
    path: '/trust-lists',
    summary: 'Trust lists as they stood at an instant',
    query: {
      at: { type: 'date-time', description: 'The lists as they stood then (default: now).' },
      jurisdiction: { type: 'string', description: 'Only the list of this jurisdiction.' },
      framework: { type: 'string', description: 'Only lists of this framework.' },
    },
    operation: `query TrustLists($at: String, $jurisdiction: String, $framework: String) { trustLists(at: $at, jurisdiction: $jurisdiction, framework: $framework) { ${LIST} } }`,
    variables: ({ query }) => ({ at: query.at, jurisdiction: query.jurisdiction, framework: query.framework }),
    result: (data) => ({ body: { trust_lists: data.trustLists.map(listOut) } }),
    responses: { 200: { description: 'The lists.', ...answer(closed({ trust_lists: { type: 'array', items: listSchema } }), { trust_lists: [LIST_EXAMPLE] }) } },
  },
  {
    method: 'POST',
    path: '/trust-lists',
    summary: 'Register the trust list of a jurisdiction',
    role: 'writer',
    body: {
      type: 'object',
      required: ['jurisdiction', 'framework'],
      properties: { jurisdiction: { type: 'string' }, framework: { type: 'string' }, next_update: { ...dateTime, description: 'Default: 180 days after issue.' } },
    },
    operation: `mutation RegisterTrustList($input: TrustListInput!) { registerTrustList(input: $input) { ${LIST} } }`,
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data, context) => ({
      status: 201,
      headers: { location: `${context.baseUrl}/trust-lists/${encodeURIComponent(data.registerTrustList.jurisdiction)}` },
      body: listOut(data.registerTrustList),
    }),
    responses: { 201: { headers: location('The list.'), description: 'The list, sequence number 1.', ...answer(listSchema, { ...LIST_EXAMPLE, sequence_number: 1, entries: [] }) } },
    problems: [409, 422],
  },
  {
    method: 'GET',
    path: '/trust-lists/{jur}',
    summary: 'One trust list, exactly as it stood at an instant',
    params: { jur: 'Jurisdiction: ISO 3166-1 alpha-2 or ISO 3166-2, any case.' },
    query: { at: { type: 'date-time', description: 'The list as it stood then (default: now).' } },
    operation: `query TrustList($jurisdiction: String!, $at: String) { trustList(jurisdiction: $jurisdiction, at: $at) { ${LIST} } }`,
    variables: ({ params, query }) => ({ jurisdiction: params.jur, at: query.at }),
    result: (data) => ({ body: listOut(data.trustList) }),
    responses: { 200: { description: 'The list version in force at `at`.', ...answer(listSchema, LIST_EXAMPLE) } },
  },
  {
    method: 'POST',
    path: '/trust-lists/{jur}/entries',
    summary: 'Upsert one entry; superseded_at withdraws it from then on',
    role: 'writer',
    params: { jur: 'Jurisdiction of the list.' },
    body: {
      type: 'object',
      required: ['id'],
      properties: {
        id: { type: 'string' },
        service_type: { type: 'string', format: 'uri', description: 'Required for a new entry.' },
        name: { type: 'string' },
        node_id: { type: 'string' },
        superseded_at: { ...dateTime, description: 'Withdraws the entry from this instant on (not in the future).' },
      },
    },
    operation: `mutation UpsertTrustListEntry($jurisdiction: String!, $input: TrustListEntryInput!) {
  upsertTrustListEntry(jurisdiction: $jurisdiction, input: $input) { created changed entry { ${ENTRY} } list { ${LIST} } }
}`,
    variables: ({ params, body }) => ({ jurisdiction: params.jur, input: inputOf(body) }),
    result: (data, context) => {
      const { created, changed, entry, list } = data.upsertTrustListEntry;
      // The entry has no address of its own: Location names the list that now holds it.
      return {
        status: created ? 201 : 200,
        ...(created && { headers: { location: `${context.baseUrl}/trust-lists/${encodeURIComponent(list.jurisdiction)}` } }),
        body: { changed, entry: entryOut(entry), list: listOut(list) },
      };
    },
    responses: {
      200: {
        description: 'An existing entry changed or restated: the entry and the list after the upsert; `changed` is false when nothing was recorded.',
        ...answer(entryUpsert, {
          changed: true,
          entry: {
            ...ENTRY_EXAMPLE,
            status: 'withdrawn',
            status_starting_time: '2026-06-01T08:00:00.000Z',
            history: [{ service_type: ENTRY_EXAMPLE.service_type, name: 'Acme', node_id: 'acme', status: 'granted', status_starting_time: EXAMPLE_TIME }],
          },
          list: LIST_EXAMPLE,
        }),
      },
      201: {
        headers: location('The list that holds the entry.'),
        description: 'A new entry, granted from now: the entry and the list after the upsert (`Location`: the list).',
        ...answer(entryUpsert, { changed: true, entry: ENTRY_EXAMPLE, list: LIST_EXAMPLE }),
      },
    },
    problems: [409, 422],
  },
  {
    method: 'GET',
    path: '/master-list',
    summary: 'The M-of-K shape, the witnesses and every entry with its live quorum verdict',
    operation: `query MasterList { trustMasterList { origin shape m k witnessSet { keys recordedAt } entries { ${MASTER_LIST_ENTRY} } } }`,
    result: (data) => {
      const { origin, shape, m, k, witnessSet, entries } = data.trustMasterList;
      return { body: { origin, shape, m, k, witnesses: witnessSet?.keys ?? [], witness_set_recorded_at: witnessSet?.recordedAt ?? null, entries } };
    },
    responses: {
      200: {
        description: 'Verdicts computed on this read against the current witness set.',
        ...answer(
          closed({
            origin: { type: 'string', description: 'The origin line witnesses cosign.' },
            shape: { type: 'string', description: '"M-of-K", or "none" before a witness set is set.' },
            m: { type: ['integer', 'null'] },
            k: { type: 'integer', minimum: 0 },
            witnesses: { type: 'array', items: ed25519Jwk },
            witness_set_recorded_at: nullableDateTime,
            entries: { type: 'array', items: masterListEntry },
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
        ),
      },
    },
  },
  {
    method: 'POST',
    path: '/master-list/witnesses',
    summary: 'Replace the witness set',
    role: 'writer',
    body: { type: 'object', required: ['m', 'keys'], properties: { m: { type: 'integer', minimum: 1 }, keys: { type: 'array', items: ed25519Jwk, minItems: 1 } } },
    operation: 'mutation ReplaceWitnessSet($input: TrustWitnessSetInput!) { replaceTrustWitnessSet(input: $input) { m keys recorded_at: recordedAt } }',
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data) => ({ body: data.replaceTrustWitnessSet }),
    responses: {
      200: {
        description: 'The witness set now in force.',
        ...answer(closed({ m: { type: 'integer', minimum: 1 }, keys: { type: 'array', items: ed25519Jwk }, recorded_at: dateTime }), { m: 1, keys: [EXAMPLE_ED25519_JWK], recorded_at: EXAMPLE_TIME }),
      },
    },
    problems: [422],
  },
  {
    method: 'POST',
    path: '/master-list/entries',
    summary: 'Upsert a master-list entry with its cosignatures; verified at once',
    role: 'writer',
    body: {
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
    },
    operation: `mutation UpsertMasterListEntry($input: TrustMasterListEntryInput!) { upsertTrustMasterListEntry(input: $input) { created ${MASTER_LIST_ENTRY} } }`,
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data, context) => {
      const { created, ...entry } = data.upsertTrustMasterListEntry;
      // The entry has no address of its own: Location names the master list that holds it.
      return { status: created ? 201 : 200, ...(created && { headers: { location: `${context.baseUrl}/master-list` } }), body: entry };
    },
    responses: {
      200: { description: 'An entry of this id replaced: the entry with its verdict.', ...answer(masterListEntry, MASTER_LIST_ENTRY_EXAMPLE) },
      201: { headers: location('The master list.'), description: 'A new entry (`Location`: the master list): the entry with its verdict.', ...answer(masterListEntry, MASTER_LIST_ENTRY_EXAMPLE) },
    },
    problems: [422],
  },
  {
    method: 'GET',
    path: '/revocations',
    summary: 'Revocations, bitemporal',
    query: {
      at: { type: 'date-time', description: 'Effective by then (effective_at <= at).' },
      known_by: { type: 'date-time', description: 'Recorded by then (recorded_at <= known_by).' },
      window: { type: 'interval', description: 'effective_at within [start, end).' },
      subject: { type: 'string', description: 'A node id (its revocations and its keys\') or "<node id>#<kid>".' },
      retroactive: { type: 'boolean', description: 'Only retroactive ones, or only the others.' },
    },
    operation: REVOCATION_PAGE_OPERATION,
    variables: revocationPageVariables,
    result: (data, context) => ({
      headers: { 'content-type': 'application/json; charset=utf-8' },
      // Every page with the first page's filters, from the cursor on.
      stream: pagedDocument(REVOCATION_SECTIONS, revocationsOf(data), async (after) =>
        revocationsOf(await context.graphql(REVOCATION_PAGE_OPERATION, { ...revocationPageVariables(context.request), after })),
      ),
    }),
    responses: {
      200: {
        description:
          "Matching revocations, in recording order, read in one snapshot. Sent as it is read (chunked, no content-length), a page of stored revocations at a time; with a subject only that node's are read.",
        ...answer(closed({ revocations: { type: 'array', items: revocationSchema } }), { revocations: [REVOCATION_EXAMPLE] }),
      },
    },
  },
  {
    method: 'POST',
    path: '/revocations',
    summary: 'Declare a revocation; a retroactive one needs a quorate attestation',
    role: 'writer',
    body: {
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
    },
    operation: `mutation DeclareRevocation($input: TrustRevocationInput!) { declareTrustRevocation(input: $input) { ${REVOCATION} } }`,
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data, context) => ({
      status: 201,
      headers: { location: `${context.baseUrl}/revocations?subject=${encodeURIComponent(data.declareTrustRevocation.subject)}` },
      body: revocationOut(data.declareTrustRevocation),
    }),
    responses: { 201: { headers: location('The revocations of the subject.'), description: 'The revocation as recorded.', ...answer(revocationSchema, REVOCATION_EXAMPLE) } },
    problems: [422],
  },
  {
    method: 'GET',
    path: '/anchor-bundle',
    summary: 'The signed anchor bundle a verifier pins',
    query: { jurisdiction: { type: 'string', description: 'Narrow to the anchors that can take part in verifying something from this jurisdiction.' } },
    operation: 'query AnchorBundle($jurisdiction: String) { trustAnchorBundle(jurisdiction: $jurisdiction) }',
    variables: ({ query }) => ({ jurisdiction: query.jurisdiction }),
    result: (data) => ({ headers: { 'cache-control': 'no-store' }, body: data.trustAnchorBundle }),
    responses: {
      200: {
        description: 'Signed JSON: roots, quorums, witness set, master-list origin, trust-list heads.',
        ...answer(anchorBundle, {
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
        }),
      },
    },
  },
  {
    method: 'GET',
    path: '/keys/{kid}/path',
    summary: 'The signed trust path material of one key: the part of the graph that decides its standing',
    params: { kid: 'The key: its RFC 7638 thumbprint, as a signature header names it.' },
    operation: 'query KeyPath($kid: String!) { trustKeyPath(kid: $kid) }',
    variables: ({ params }) => ({ kid: params.kid }),
    result: (data) => ({ headers: { 'cache-control': 'no-store' }, body: data.trustKeyPath }),
    responses: {
      200: {
        description:
          'Signed JSON by the trust service key, as the anchor bundle: the nodes listing the key, every node a delegation chain leads from to them, the edges into those (credentials verbatim) and their revocations, read in one snapshot; empty lists when no node lists the key. A verifier that pinned the anchor bundle finds the path from a pinned root in it as in the whole graph.',
        ...answer(keyPath, {
          service: 'trust',
          type: 'key-path',
          kid: EXAMPLE_KID,
          issued_at: EXAMPLE_TIME,
          nodes: [NODE_EXAMPLE],
          edges: [EDGE_EXAMPLE],
          revocations: [],
          signature: EXAMPLE_SIGNATURE,
        }),
      },
    },
  },
];
