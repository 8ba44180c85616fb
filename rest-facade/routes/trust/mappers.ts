/** How the trust service's REST requests become GraphQL variables, and its GraphQL data REST answers. */
import { pagedDocument, type Sections } from '../../paged-document.js';
import type { RouteContext, RouteRequest } from '../../route-table.js';
import { GRAPH_PAGE, REVOCATION_PAGE } from './operations.js';

type Json = Record<string, any>;

/**
 * A request body as GraphQL input: top-level members renamed to camelCase, values untouched. Every
 * member below the top is opaque (keys, bodies, attestations) and is passed on verbatim, however
 * deeply nested; a body that is not an object goes on as it is, for GraphQL to refuse (400).
 */
export function inputOf(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).map(([name, value]) => [name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase()), value]));
}

/** The credential of POST /edges: the body is the credential itself, or {credential}: signed JSON never has a `credential` member. */
export function edgeCredential(body: unknown): unknown {
  const wrapped = typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 1 && 'credential' in body;
  return wrapped ? (body as { credential: unknown }).credential : body;
}

/** Absent optional members are left out rather than sent as null, as the domain documents have them. */
function withoutNulls<T extends Json>(document: T): T {
  return Object.fromEntries(Object.entries(document).filter(([, value]) => value !== null)) as T;
}

export const nodeOut = (node: Json) => withoutNulls(node);
export const entryOut = (entry: Json) => withoutNulls({ ...entry, history: entry.history.map(withoutNulls) });
export const listOut = (list: Json) => ({ ...list, entries: list.entries.map(entryOut) });
export const revocationOut = (revocation: Json) => withoutNulls(revocation);

/** The master list as REST writes it: the witness set's keys and time as members of their own. */
export function masterListOut({ origin, shape, m, k, witnessSet, entries }: Json) {
  return { origin, shape, m, k, witnesses: witnessSet?.keys ?? [], witness_set_recorded_at: witnessSet?.recordedAt ?? null, entries };
}

/** Records per GraphQL page while GET /graph streams: bounds what the facade holds at once. */
export const GRAPH_PAGE_SIZE = 1000;

/**
 * The variables of the first page: a client revalidating its copy (If-None-Match) usually holds the
 * current version, and one record is enough to learn it; when it does not, the stream goes on from
 * there in the same snapshot.
 */
export const firstGraphPage = (ifNoneMatch: string | undefined) => ({ first: ifNoneMatch === undefined ? GRAPH_PAGE_SIZE : 1 });

type GraphPage = { version: string; nodes: Json[]; edges: Json[]; revocations: Json[]; pageInfo: { endCursor: string | null } };

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
export function graphHeaders(first: GraphPage): Record<string, string> {
  return { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache', etag: `"trust-graph-${first.version}"` };
}

/** The graph document {"nodes":[…],"edges":[…],"revocations":[…]} from its first page on, the next pages in the first's snapshot. */
export function graphDocument(first: GraphPage, context: Pick<RouteContext, 'graphql'>): AsyncGenerator<Uint8Array> {
  return pagedDocument(GRAPH_SECTIONS, first, async (after) => (await context.graphql(GRAPH_PAGE, { first: GRAPH_PAGE_SIZE, after })).trustGraphPage);
}

const REVOCATION_SECTIONS: Sections = [['revocations', revocationOut]];

/** A page of trustRevocationPage as a page of the {"revocations":[…]} document. */
const revocationsOf = ({ trustRevocationPage: page }: Json) => ({ revocations: page.nodes, pageInfo: page.pageInfo });

export const revocationPageVariables = ({ query }: RouteRequest) => ({
  first: GRAPH_PAGE_SIZE,
  at: query.at,
  knownBy: query.known_by,
  window: query.window,
  subject: query.subject,
  retroactive: query.retroactive,
});

/** The {"revocations":[…]} document from its first page on: every page with the first page's filters, from the cursor on. */
export function revocationsDocument(first: Json, context: Pick<RouteContext, 'graphql' | 'request'>): AsyncGenerator<Uint8Array> {
  return pagedDocument(REVOCATION_SECTIONS, revocationsOf(first), async (after) => revocationsOf(await context.graphql(REVOCATION_PAGE, { ...revocationPageVariables(context.request), after })));
}
