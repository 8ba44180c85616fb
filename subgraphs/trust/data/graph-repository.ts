/**
 * The trust graph in PostgreSQL: nodes, delegation edges and revocations.
 *
 * Scale: a question or a write reads only the part of the graph it concerns (`graphPart`): the
 * nodes it names, every node from which a delegation path leads to them (one lookup of the edges
 * indexed by subject per node reached), the edges into those nodes and the revocations of those
 * nodes and their keys. The domain's answer on that part is its answer on the whole graph, because a path
 * to a node, the scope it holds and a cycle through a new edge only ever involve its ancestors.
 *
 * Concurrency: an edge write locks the rows of the nodes its validation reads (its issuer's
 * ancestors and its subject), in id order, so writes in disjoint parts of the graph proceed in
 * parallel while two writes that could together close a cycle, or one that depends on a node
 * another changes, are serialized. A node's upserts are serialized by a lock on its id.
 */
import {
  declareRevocation,
  delegationParties,
  delegationCredentialId,
  instantOf,
  isNodeId,
  revocationParties,
  success,
  upsertNode,
  validateDelegation,
  type DelegationEdge,
  type Revocation,
  type TrustGraph,
  type TrustNode,
  type TrustResult,
} from '../domain/index.js';
import { recordInTransaction } from '../../../lib/audit/admin-log.js';
import { appendToFeed, changeChannel, feedCursor } from '../../../lib/db/change-feed.js';
import { Prisma, type PrismaClient } from '../../../prisma/trust/generated/client.js';
import { asJson, now, storable, type Transaction, TRANSACTION_OPTIONS, type Written } from './storage.js';

/** The feed of revocations recorded (lib/db/change-feed.ts): keyed by the revoked node, the cursor is the revocation's id. */
export const TRUST_REVOCATIONS_FEED = 'trust-revocations';

/** Prefix of the pg_advisory_xact_lock keys of node upserts; services share a database, so it is namespaced. */
const NODE_LOCK = 'passport.trust.node:';
/** Times a graph write is tried again after PostgreSQL broke a deadlock between two of them. */
const DEADLOCK_RETRIES = 3;

/** PostgreSQL aborted the transaction to break a deadlock (40P01) or a serialization conflict. */
function isDeadlock(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2034') return true;
  return error instanceof Error && /deadlock detected|40P01/.test(error.message);
}

/** The sections of the whole graph, in the order its pages go through them. */
export const GRAPH_SECTIONS = ['nodes', 'edges', 'revocations'] as const;

/** Where the next page of the graph starts: the snapshot all pages read, its graph version, a section, and the key of the last record sent in it. */
export interface GraphCursor {
  /** pg_current_snapshot() of the first page, as text. */
  readonly snapshot: string;
  /** The graph version of that snapshot (GraphPage.version). */
  readonly version: string;
  readonly position: { readonly section: (typeof GRAPH_SECTIONS)[number]; readonly after?: string };
}

export interface GraphPage {
  /**
   * The graph version of the snapshot the pages read: the node documents, edges and revocations
   * ever written and visible in it, as triggers count them into trust_graph_writes (migration
   * 20261126160000_trust_graph_writes). Those rows are never changed or deleted (a node's new
   * document is a new row of trust_node_version), so every committed write raises the count, and a
   * later snapshot sees all an earlier one saw: equal versions are equal graphs.
   */
  readonly version: string;
  readonly nodes: TrustNode[];
  readonly edges: DelegationEdge[];
  readonly revocations: Revocation[];
  /** Absent on the last page. */
  readonly next?: GraphCursor;
}

interface GraphPartRow {
  nodes: TrustNode[];
  edges: DelegationEdge[];
  revocations: Revocation[];
}

export class GraphRepository {
  readonly #node: Prisma.Sql;
  readonly #edge: Prisma.Sql;
  readonly #revocation: Prisma.Sql;
  readonly #nodeVersion: Prisma.Sql;
  readonly #graphWrites: Prisma.Sql;
  readonly #graphPart: Prisma.Sql;
  readonly #lockedGraphPart: Prisma.Sql;
  readonly #keyHolders: Prisma.Sql;
  readonly #adoptForeignRows: Prisma.Sql;
  readonly #schema: string;
  /** The service's change channel (lib/db/change-feed.ts), notified of each revocation recorded. */
  readonly #channel: string;

  constructor(
    private readonly prisma: PrismaClient,
    schema: string,
  ) {
    this.#schema = schema;
    this.#channel = changeChannel(schema);
    const qualified = (name: string) => Prisma.raw(`"${schema.replaceAll('"', '""')}"."${name}"`);
    this.#node = qualified('trust_node');
    this.#edge = qualified('delegation_edge');
    this.#revocation = qualified('revocation');
    this.#nodeVersion = qualified('trust_node_version');
    this.#graphWrites = qualified('trust_graph_writes');
    this.#graphPart = qualified('trust_graph_part');
    this.#lockedGraphPart = qualified('trust_locked_graph_part');
    this.#keyHolders = qualified('trust_key_holders');
    this.#adoptForeignRows = qualified('trust_adopt_foreign_rows');
  }

  /**
   * Adopts the graph rows a restore brought from another cluster whose transaction ids lie in this
   * one's future (a pg_restore's; npm run restore adopts every row itself), so that every snapshot
   * sees them: the database's function `trust_adopt_foreign_rows` (its migration says why). Run at
   * each start, before the graph is served; returns the rows adopted.
   */
  async adoptForeignRows(): Promise<number> {
    const [row] = await this.prisma.$queryRaw<{ adopted: number }[]>`SELECT ${this.#adoptForeignRows}(false)::int AS adopted`;
    return row!.adopted;
  }

  // Reads

  /** The nodes of the ids given; an id outside the syntax names no node and is not looked up. */
  nodes(ids: readonly string[]): Promise<TrustNode[]> {
    return this.#nodesWhere({ id: { in: ids.filter(isNodeId) } });
  }

  /** The nodes of these kinds (by the index on kind): the anchor bundle's roots and quorums without reading every issuer. */
  nodesOfKinds(kinds: readonly TrustNode['kind'][]): Promise<TrustNode[]> {
    return this.#nodesWhere({ kind: { in: [...kinds] } });
  }

  async #nodesWhere(where: Prisma.TrustNodeWhereInput): Promise<TrustNode[]> {
    const rows = await this.prisma.trustNode.findMany({ where, orderBy: { id: 'asc' } });
    return rows.map((row) => row.document as unknown as TrustNode);
  }

  /**
   * One page of the revocations in recording order, or of those of one node and its keys (read by the
   * index on the node their subject names): the graph's revocations section, paged in one snapshot
   * as `graphPage` pages the whole graph, so its cursors are graph cursors in that section.
   */
  /** Up to `first` revocations recorded after the one of id `afterId`, in the order they were committed, each with its id. */
  async revocationsAfter(afterId: bigint, first: number): Promise<{ id: bigint; revocation: Revocation }[]> {
    const rows = await this.prisma.revocation.findMany({ where: { id: { gt: afterId } }, orderBy: { id: 'asc' }, take: first, select: { id: true, document: true } });
    return rows.map((row) => ({ id: row.id, revocation: row.document as unknown as Revocation }));
  }

  async revocationPage(first: number, after?: GraphCursor, nodeId?: string): Promise<{ revocations: Revocation[]; next?: GraphCursor }> {
    const { snapshot, version } = after ?? (await this.#currentSnapshot());
    const position = after?.position ?? { section: 'revocations' };
    const rows = await this.#sectionRows(position, snapshot, first + 1, nodeId);
    const taken = rows.slice(0, first);
    const revocations = taken.map((row) => row.document as Revocation);
    return rows.length > first ? { revocations, next: { snapshot, version, position: { section: 'revocations', after: taken.at(-1)!.key } } } : { revocations };
  }

  /**
   * PostgreSQL's estimate of the records of the graph (nodes, edges and revocations), from the
   * statistics ANALYZE and autovacuum keep; undefined while a table has none. Rows are never deleted,
   * so a stale estimate can only fall short of the count.
   */
  async estimatedGraphRecords(): Promise<number | undefined> {
    const [row] = await this.prisma.$queryRaw<{ records: number; known: boolean }[]>`
      SELECT coalesce(sum(greatest(class.reltuples, 0)), 0)::float8 AS records, count(*) = 3 AND bool_and(class.reltuples >= 0) AS known
      FROM pg_class AS class JOIN pg_namespace AS namespace ON namespace.oid = class.relnamespace
      WHERE namespace.nspname = ${this.#schema} AND class.relname IN ('trust_node', 'delegation_edge', 'revocation')`;
    return row?.known ? row.records : undefined;
  }

  /**
   * One page of the whole graph as it stood in one snapshot: nodes in id order, then edges in
   * recording order, then revocations in recording order, at most `first` records in all. The first
   * page takes the database's current snapshot; the cursor carries it, and every later page reads
   * only the rows (and node documents) written by transactions visible in it, so the pages together
   * are exactly one snapshot however long they take and whatever commits between them.
   */
  async graphPage(first: number, after?: GraphCursor): Promise<GraphPage> {
    const { snapshot, version } = after ?? (await this.#currentSnapshot());
    const page: GraphPage = { version, nodes: [], edges: [], revocations: [] };
    let position: GraphCursor['position'] = after?.position ?? { section: 'nodes' };
    let room = first;
    for (;;) {
      // One more than there is room for tells whether the section goes on past this page.
      const rows = await this.#sectionRows(position, snapshot, room + 1);
      const taken = rows.slice(0, room);
      const last = taken.at(-1);
      if (position.section === 'nodes') page.nodes.push(...taken.map((row) => row.document as TrustNode));
      else if (position.section === 'edges') page.edges.push(...taken.map((row) => row.document as DelegationEdge));
      else page.revocations.push(...taken.map((row) => row.document as Revocation));
      room -= taken.length;
      if (rows.length > taken.length) return { ...page, next: { snapshot, version, position: { section: position.section, after: last!.key } } };
      const following = GRAPH_SECTIONS[GRAPH_SECTIONS.indexOf(position.section) + 1];
      if (!following) return page;
      position = { section: following };
      if (room === 0) return { ...page, next: { snapshot, version, position } };
    }
  }

  /** The database's current snapshot and the graph version in it (summed in the statement that takes it, so it is that snapshot's). */
  async #currentSnapshot(): Promise<{ snapshot: string; version: string }> {
    const [current] = await this.prisma.$queryRaw<{ snapshot: string; version: string }[]>`
      SELECT pg_current_snapshot()::text AS snapshot, (SELECT sum(rows) FROM ${this.#graphWrites})::text AS version`;
    return current!;
  }

  /** Up to `limit` rows of one section after the position's key, as they stood in the snapshot; revocations only of `revocationsOf` when given. */
  #sectionRows(position: GraphCursor['position'], snapshot: string, limit: number, revocationsOf?: string): Promise<{ key: string; document: unknown }[]> {
    const visible = (column: Prisma.Sql) => Prisma.sql`pg_visible_in_snapshot(${column}, ${snapshot}::pg_snapshot)`;
    const { section, after } = position;
    if (section === 'nodes') {
      return this.prisma.$queryRaw`
        SELECT DISTINCT ON (version.id) version.id AS key, version.document FROM ${this.#nodeVersion} AS version
        WHERE ${visible(Prisma.sql`version.written_xid`)} ${after === undefined ? Prisma.empty : Prisma.sql`AND version.id > ${after}`}
        ORDER BY version.id, version.written_xid DESC LIMIT ${limit}`;
    }
    if (section === 'edges') {
      const [recordedAt, id] = after === undefined ? [] : (JSON.parse(after) as [string, string]);
      return this.prisma.$queryRaw`
        SELECT json_build_array(edge.recorded_at, edge.id)::text AS key, edge.document FROM ${this.#edge} AS edge
        WHERE ${visible(Prisma.sql`edge.written_xid`)} ${after === undefined ? Prisma.empty : Prisma.sql`AND (edge.recorded_at, edge.id) > (${recordedAt}::timestamptz, ${id})`}
        ORDER BY edge.recorded_at, edge.id LIMIT ${limit}`;
    }
    return this.prisma.$queryRaw`
      SELECT revocation.id::text AS key, revocation.document FROM ${this.#revocation} AS revocation
      WHERE ${visible(Prisma.sql`revocation.written_xid`)} ${after === undefined ? Prisma.empty : Prisma.sql`AND revocation.id > ${after}::bigint`}
        ${revocationsOf === undefined ? Prisma.empty : Prisma.sql`AND split_part(revocation.subject, '#', 1) = ${revocationsOf}`}
      ORDER BY revocation.id LIMIT ${limit}`;
  }

  /**
   * The part of the graph that decides the standing of these keys: the nodes listing them and
   * everything `graphPart` adds. One statement, so one snapshot, however many keys are asked.
   */
  async graphForKeys(kids: readonly string[]): Promise<TrustGraph> {
    if (kids.length === 0) return { nodes: [], edges: [], revocations: [] };
    return this.graphPart(this.prisma, Prisma.sql`${this.#keyHolders}(${[...new Set(kids)]}::text[])`);
  }

  /**
   * The seed nodes, every node from which a chain of delegations leads to one of them, the edges
   * into all of these (in graph order) and their revocations: what a path, a held scope or a cycle
   * check about the seeds can involve. The query is the database's function `trust_graph_part`
   * (its migration says why), `seeds` an SQL expression of a text[]. `locking`, in a write's
   * transaction: `trust_locked_graph_part`, which also locks the row of every node of the part, in
   * id order, and reads again until no edge into the part committed meanwhile (one statement).
   */
  private async graphPart(db: Reader, seeds: Prisma.Sql, locking = false): Promise<TrustGraph> {
    const [part] = await db.$queryRaw<GraphPartRow[]>`SELECT nodes, edges, revocations FROM ${locking ? this.#lockedGraphPart : this.#graphPart}(${seeds})`;
    return { nodes: part!.nodes, edges: part!.edges, revocations: part!.revocations };
  }

  // Graph writes

  /** Creates a node or merges keys into it (keys.ts, nodes.ts). */
  upsertNode(input: unknown): Promise<TrustResult<Written<TrustNode>>> {
    return this.graphWrite(async (tx) => {
      const id = (input as { id?: unknown } | null)?.id;
      if (isNodeId(id)) await tx.$queryRaw`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(hashtext(${NODE_LOCK + id}))) AS node_lock`;
      // An id outside the syntax is looked up nowhere; upsertNode says what is wrong with it.
      const row = isNodeId(id) ? await tx.trustNode.findUnique({ where: { id } }) : null;
      const existing = row?.document as unknown as TrustNode | undefined;
      const merged = upsertNode(existing, input);
      if (!merged.ok) return merged;
      const fit = storable(merged.value, 'INVALID_NODE');
      if (!fit.ok) return fit;
      const node = merged.value;
      const columns = { kind: node.kind, jurisdiction: node.jurisdiction ?? null, document: asJson(node) };
      if (row) await tx.trustNode.update({ where: { id: node.id }, data: columns });
      else await tx.trustNode.create({ data: { id: node.id, ...columns } });
      await recordInTransaction(tx);
      return success({ value: node, created: !row });
    });
  }

  /**
   * Validates a delegation credential against the graph and stores it as an edge. The edge id is
   * the credential's hash, so the same credential sent again finds the stored edge: among the
   * edges into its subject, which the part of the graph read for the validation holds.
   */
  addEdge(credential: unknown): Promise<TrustResult<Written<DelegationEdge>>> {
    return this.graphWrite(async (tx) => {
      const parties = delegationParties(credential);
      const graph = parties.length > 0 ? await this.graphPart(tx, nodesNamed(parties), true) : { nodes: [], edges: [], revocations: [] };
      const id = credentialId(credential);
      const stored = id === undefined ? undefined : graph.edges.find((edge) => edge.id === id);
      if (stored) return success({ value: stored, created: false });
      const validated = validateDelegation(credential, graph, now());
      if (!validated.ok) return validated;
      const fit = storable(validated.value, 'MALFORMED_CREDENTIAL');
      if (!fit.ok) return fit;
      const edge = validated.value;
      await tx.delegationEdge.create({ data: { id: edge.id, iss: edge.iss, sub: edge.sub, document: asJson(edge) } });
      await recordInTransaction(tx);
      return success({ value: edge, created: true });
    });
  }

  /** Records a revocation stamped with the server's clock, read once the graph lock is held. */
  declareRevocation(input: unknown): Promise<TrustResult<Revocation>> {
    return this.graphWrite(async (tx) => {
      // The revoked node and the quorum attesting, locked so that no key of theirs changes meanwhile.
      const named = revocationParties(input);
      if (named.length > 0) await tx.$queryRaw`SELECT id FROM ${this.#node} WHERE id = ANY(${named}::text[]) ORDER BY id FOR UPDATE`;
      const graph = await this.graphPart(tx, nodesNamed(named));
      const nodes = new Map(graph.nodes.map((node) => [node.id, node]));
      const recordedAt = instantOf(new Date());
      const declared = declareRevocation(input, { now: recordedAt, node: (id) => nodes.get(id), revocations: graph.revocations ?? [] });
      if (!declared.ok) return declared;
      const revocation = declared.value;
      const fit = storable(revocation, 'INVALID_REVOCATION');
      if (!fit.ok) return fit;
      await recordInTransaction(tx);
      // Last: the feed's order lock is held from the row's id to the commit, which the notice waits for.
      await appendToFeed(
        tx,
        { channel: this.#channel, feed: TRUST_REVOCATIONS_FEED },
        () => tx.revocation.create({ data: { subject: revocation.subject, document: asJson(revocation), recordedAt: new Date(recordedAt / 1000) }, select: { id: true } }),
        (row) => ({ key: revocation.subject.split('#')[0]!, cursor: feedCursor(row.id) }),
      );
      return success(revocation);
    });
  }

  /** A graph write in a transaction of its own, tried again when PostgreSQL broke a deadlock with another. */
  private async graphWrite<T>(run: (tx: Transaction) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.prisma.$transaction(run, TRANSACTION_OPTIONS);
      } catch (error) {
        if (attempt >= DEADLOCK_RETRIES || !isDeadlock(error)) throw error;
      }
    }
  }
}

type Reader = Pick<PrismaClient, 'trustNode' | 'delegationEdge' | 'revocation' | '$queryRaw'> | Transaction;

/**
 * The edge id a credential would get, when it has one of the two credential forms and can be
 * canonicalized at all; otherwise validation says what is wrong with it.
 */
function credentialId(credential: unknown): string | undefined {
  if (typeof credential !== 'string' && (typeof credential !== 'object' || credential === null || Array.isArray(credential))) return undefined;
  try {
    return delegationCredentialId(credential as string | Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/** Seeds of `graphPart`: the nodes of these ids. */
function nodesNamed(ids: readonly string[]): Prisma.Sql {
  return Prisma.sql`${[...new Set(ids)]}::text[]`;
}
