/** The trust service's paths (spec §4), each one GraphQL operation through the gateway. */
import type { Route } from '../../route-table.js';
import { location } from '../../schemas.js';
import {
  edgeCredential,
  entryOut,
  firstGraphPage,
  graphDocument,
  graphHeaders,
  inputOf,
  listOut,
  masterListOut,
  nodeOut,
  revocationOut,
  revocationPageVariables,
  revocationsDocument,
} from './mappers.js';
import * as operations from './operations.js';
import * as schemas from './schemas.js';

export const trustRoutes: Route[] = [
  {
    method: 'POST',
    path: '/nodes',
    summary: 'Upsert a node, merging keys by kid',
    role: 'admin',
    body: schemas.nodeBody,
    operation: operations.UPSERT_NODE,
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data, context) => {
      const { created, node } = data.upsertTrustNode;
      return { status: created ? 201 : 200, ...(created && { headers: { location: `${context.baseUrl}/graph` } }), body: nodeOut(node) };
    },
    responses: {
      200: { description: 'The node, keys merged.', ...schemas.node },
      201: { headers: location('The trust graph, which lists the node.'), description: 'The new node (listed in /graph).', ...schemas.node },
    },
    problems: [409, 422],
  },
  {
    method: 'POST',
    path: '/edges',
    summary: 'Add a delegation edge: the credential is validated, a failing one is not added',
    role: 'admin',
    body: schemas.edgeBody,
    operation: operations.ADD_EDGE,
    variables: ({ body }) => ({ credential: edgeCredential(body) }),
    result: (data, context) => {
      const { created, edge } = data.addTrustEdge;
      return { status: created ? 201 : 200, ...(created && { headers: { location: `${context.baseUrl}/graph` } }), body: edge };
    },
    responses: {
      200: { description: 'The same credential was already stored: the stored edge.', ...schemas.edge },
      201: { headers: location('The trust graph, which lists the edge.'), description: 'The edge added (listed in /graph).', ...schemas.edge },
    },
    problems: [422],
  },
  {
    method: 'GET',
    path: '/graph',
    summary: 'Every node and edge, with the credentials verbatim, and the revocations that bear on them',
    operation: operations.GRAPH_PAGE,
    variables: ({ ifNoneMatch }) => firstGraphPage(ifNoneMatch),
    result: (data, context) => ({ headers: graphHeaders(data.trustGraphPage), stream: graphDocument(data.trustGraphPage, context) }),
    responses: {
      200: {
        description:
          'Nodes, edges and revocations, read in one snapshot: enough to resolve a path at any instant without asking again. Sent as it is read (chunked, no content-length), a page of records at a time, all pages in the snapshot of the first. The ETag is the version of the graph read: it changes with every node, edge or revocation written.',
        ...schemas.graph,
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
    operation: operations.TRUST_LISTS,
    variables: ({ query }) => ({ at: query.at, jurisdiction: query.jurisdiction, framework: query.framework }),
    result: (data) => ({ body: { trust_lists: data.trustLists.map(listOut) } }),
    responses: { 200: { description: 'The lists.', ...schemas.trustLists } },
  },
  {
    method: 'POST',
    path: '/trust-lists',
    summary: 'Register the trust list of a jurisdiction',
    role: 'admin',
    body: schemas.trustListBody,
    operation: operations.REGISTER_TRUST_LIST,
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data, context) => ({
      status: 201,
      headers: { location: `${context.baseUrl}/trust-lists/${encodeURIComponent(data.registerTrustList.jurisdiction)}` },
      body: listOut(data.registerTrustList),
    }),
    responses: { 201: { headers: location('The list.'), description: 'The list, sequence number 1.', ...schemas.newTrustList } },
    problems: [409, 422],
  },
  {
    method: 'GET',
    path: '/trust-lists/{jur}',
    summary: 'One trust list, exactly as it stood at an instant',
    params: { jur: 'Jurisdiction: ISO 3166-1 alpha-2 or ISO 3166-2, any case.' },
    query: { at: { type: 'date-time', description: 'The list as it stood then (default: now).' } },
    operation: operations.TRUST_LIST,
    variables: ({ params, query }) => ({ jurisdiction: params.jur, at: query.at }),
    result: (data) => ({ body: listOut(data.trustList) }),
    responses: { 200: { description: 'The list version in force at `at`.', ...schemas.trustList } },
  },
  {
    method: 'POST',
    path: '/trust-lists/{jur}/entries',
    summary: 'Upsert one entry; superseded_at withdraws it from then on',
    role: 'admin',
    params: { jur: 'Jurisdiction of the list.' },
    body: schemas.entryBody,
    operation: operations.UPSERT_TRUST_LIST_ENTRY,
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
        ...schemas.changedEntry,
      },
      201: {
        headers: location('The list that holds the entry.'),
        description: 'A new entry, granted from now: the entry and the list after the upsert (`Location`: the list).',
        ...schemas.newEntry,
      },
    },
    problems: [409, 422],
  },
  {
    method: 'GET',
    path: '/master-list',
    summary: 'The M-of-K shape, the witnesses and every entry with its live quorum verdict',
    operation: operations.MASTER_LIST,
    result: (data) => ({ body: masterListOut(data.trustMasterList) }),
    responses: { 200: { description: 'Verdicts computed on this read against the current witness set.', ...schemas.masterList } },
  },
  {
    method: 'POST',
    path: '/master-list/witnesses',
    summary: 'Replace the witness set',
    role: 'admin',
    body: schemas.witnessSetBody,
    operation: operations.REPLACE_WITNESS_SET,
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data) => ({ body: data.replaceTrustWitnessSet }),
    responses: { 200: { description: 'The witness set now in force.', ...schemas.witnessSetInForce } },
    problems: [422],
  },
  {
    method: 'POST',
    path: '/master-list/entries',
    summary: 'Upsert a master-list entry with its cosignatures; verified at once',
    role: 'admin',
    body: schemas.masterListEntryBody,
    operation: operations.UPSERT_MASTER_LIST_ENTRY,
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data, context) => {
      const { created, ...entry } = data.upsertTrustMasterListEntry;
      // The entry has no address of its own: Location names the master list that holds it.
      return { status: created ? 201 : 200, ...(created && { headers: { location: `${context.baseUrl}/master-list` } }), body: entry };
    },
    responses: {
      200: { description: 'An entry of this id replaced: the entry with its verdict.', ...schemas.masterListEntry },
      201: { headers: location('The master list.'), description: 'A new entry (`Location`: the master list): the entry with its verdict.', ...schemas.masterListEntry },
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
    operation: operations.REVOCATION_PAGE,
    variables: revocationPageVariables,
    result: (data, context) => ({ headers: { 'content-type': 'application/json; charset=utf-8' }, stream: revocationsDocument(data, context) }),
    responses: {
      200: {
        description:
          "Matching revocations, in recording order, read in one snapshot. Sent as it is read (chunked, no content-length), a page of stored revocations at a time; with a subject only that node's are read.",
        ...schemas.revocations,
      },
    },
  },
  {
    method: 'POST',
    path: '/revocations',
    summary: 'Declare a revocation; a retroactive one needs a quorate attestation',
    role: 'admin',
    body: schemas.revocationBody,
    operation: operations.DECLARE_REVOCATION,
    variables: ({ body }) => ({ input: inputOf(body) }),
    result: (data, context) => ({
      status: 201,
      headers: { location: `${context.baseUrl}/revocations?subject=${encodeURIComponent(data.declareTrustRevocation.subject)}` },
      body: revocationOut(data.declareTrustRevocation),
    }),
    responses: { 201: { headers: location('The revocations of the subject.'), description: 'The revocation as recorded.', ...schemas.revocation } },
    problems: [422],
  },
  {
    method: 'GET',
    path: '/anchor-bundle',
    summary: 'The signed anchor bundle a verifier pins',
    query: { jurisdiction: { type: 'string', description: 'Narrow to the anchors that can take part in verifying something from this jurisdiction.' } },
    operation: operations.ANCHOR_BUNDLE,
    variables: ({ query }) => ({ jurisdiction: query.jurisdiction }),
    result: (data) => ({ headers: { 'cache-control': 'no-store' }, body: data.trustAnchorBundle }),
    responses: { 200: { description: 'Signed JSON: roots, quorums, witness set, master-list origin, trust-list heads.', ...schemas.anchorBundle } },
  },
  {
    method: 'GET',
    path: '/keys/{kid}/path',
    summary: 'The signed trust path material of one key: the part of the graph that decides its standing',
    params: { kid: 'The key: its RFC 7638 thumbprint, as a signature header names it.' },
    operation: operations.KEY_PATH,
    variables: ({ params }) => ({ kid: params.kid }),
    result: (data) => ({ headers: { 'cache-control': 'no-store' }, body: data.trustKeyPath }),
    responses: {
      200: {
        description:
          'Signed JSON by the trust service key, as the anchor bundle: the nodes listing the key, every node a delegation chain leads from to them, the edges into those (credentials verbatim) and their revocations, read in one snapshot; empty lists when no node lists the key. A verifier that pinned the anchor bundle finds the path from a pinned root in it as in the whole graph.',
        ...schemas.keyPath,
      },
    },
  },
];
