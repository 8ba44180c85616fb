/**
 * Delegation credentials: the edges of the trust graph.
 *
 * A credential is either signed JSON (its members plus `signature`, a detached compact JWS over
 * the JCS form of the rest, as lib/crypto's signJson makes it) or a compact JWS whose payload is
 * the same JSON object. Its protected header names the signing key by `kid`; `alg` is Ed25519
 * (or EdDSA) or ES256 and must fit that key. Members (no others are accepted, so that nothing
 * signed is silently ignored):
 *   iss    issuer node id          sub    subject node id
 *   scope  what is delegated (scope.ts)
 *   iat    when it was issued      nbf    start of validity (optional, defaults to iat)
 *   exp    end of validity, exclusive (optional: without it the delegation stands until revoked)
 * iat, nbf and exp are each an RFC 3339 date-time or a NumericDate (RFC 7519 §2: seconds since the
 * epoch as a JSON number, as a JWT carries them); nbf < exp and iat < exp. The edge holds them as
 * RFC 3339 UTC either way.
 *
 * validateDelegation(credential, graph, now) checks, and reports the first failure in this order:
 *   MALFORMED_CREDENTIAL  not one of the two forms, bad JSON, missing/unknown/ill-typed members,
 *                         no `kid` in the header, an empty validity window;
 *   UNKNOWN_ISSUER        `iss` is not a node;          UNKNOWN_SUBJECT  `sub` is not a node;
 *   BAD_SIGNATURE         the issuer has no key with the header's kid, the algorithm does not fit
 *                         it, or the signature does not verify (RFC 8032 strict / ES256);
 *   REVOKED_KEY           the signing key is revoked at or before `iat`, by its own `revoked`
 *                         member or by a revocation of the key or of the issuer node;
 *   KEY_NOT_CURRENT       the signing key was not current at `iat` (key iat > iat, or key exp <= iat);
 *   NOT_YET_VALID         `iat` or `nbf` lies after `now`;      EXPIRED  `exp` <= `now`;
 *   WIDENED_SCOPE         the scope is not covered by what the issuer holds at `now`: everything
 *                         for a root; otherwise the union, over the delegations it receives that
 *                         stand at `now`, of each delegation's scope cut down to what its own
 *                         issuer held (so a node with no standing path from a root holds nothing);
 *   CYCLE                 `iss` = `sub`, or `sub` already reaches `iss` through any stored edge
 *                         (regardless of validity windows: the graph stays acyclic for good).
 *
 * An edge stands at instant t when nbf <= t < exp, its signing key was current and unrevoked at
 * its iat, and neither its issuer nor its subject is revoked at t. Revocations count as recorded
 * by `known_by` when one is given (what a verifier knew then), otherwise all of them.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalBytes, decodeBase64Url, encodeBase64Url, JwsError, readProtectedHeader, verifyCompact, verifyJson, type JwsHeader } from '../../crypto/index.js';
import { failure, success, type TrustResult } from './errors.js';
import { keyIsCurrentAt, type NodeKey } from './keys.js';
import { isNodeId, type TrustNode } from './nodes.js';
import { keyRevokedFrom, nodeRevokedFrom, type Revocation } from './revocations.js';
import { intersectScopes, scopeAllows, scopeCoveredBy, UNRESTRICTED_SCOPE, validateScope, type DelegationScope, type ScopeClaim } from './scope.js';
import { formatInstant, parseInstant, type Instant } from './time.js';

/** A delegation credential as submitted: signed JSON or a compact JWS. */
export type DelegationCredential = string | { readonly [member: string]: unknown };

/** A validated credential as the graph stores it; times normalized to UTC. */
export interface DelegationEdge {
  /** base64url SHA-256 of the credential: of the compact JWS text, or of the JCS form of the signed JSON. */
  readonly id: string;
  readonly iss: string;
  readonly sub: string;
  readonly scope: DelegationScope;
  readonly iat: string;
  readonly nbf: string;
  /** Absent when the credential has no `exp`: the delegation stands until revoked. */
  readonly exp?: string;
  /** The issuer key that signed it. */
  readonly kid: string;
  readonly credential: DelegationCredential;
}

export interface TrustGraph {
  readonly nodes: readonly TrustNode[];
  readonly edges: readonly DelegationEdge[];
  readonly revocations?: readonly Revocation[];
}

export type DelegationFailureCode =
  | 'MALFORMED_CREDENTIAL'
  | 'UNKNOWN_ISSUER'
  | 'UNKNOWN_SUBJECT'
  | 'BAD_SIGNATURE'
  | 'REVOKED_KEY'
  | 'KEY_NOT_CURRENT'
  | 'NOT_YET_VALID'
  | 'EXPIRED'
  | 'WIDENED_SCOPE'
  | 'CYCLE';

const CLAIMS = new Set(['iss', 'sub', 'scope', 'iat', 'nbf', 'exp']);

interface GraphIndex {
  readonly nodes: ReadonlyMap<string, TrustNode>;
  readonly incoming: ReadonlyMap<string, readonly DelegationEdge[]>;
  readonly outgoing: ReadonlyMap<string, readonly DelegationEdge[]>;
}

// Graphs are read-only values; indexing each once keeps every walk linear in its size (a graph of
// tens of thousands of edges is judged on every POST /edges).
const indexes = new WeakMap<TrustGraph, GraphIndex>();

function append(map: Map<string, DelegationEdge[]>, key: string, edge: DelegationEdge): void {
  const list = map.get(key);
  if (list) list.push(edge);
  else map.set(key, [edge]);
}

function indexOf(graph: TrustGraph): GraphIndex {
  let index = indexes.get(graph);
  if (!index) {
    const incoming = new Map<string, DelegationEdge[]>();
    const outgoing = new Map<string, DelegationEdge[]>();
    for (const edge of graph.edges) {
      append(incoming, edge.sub, edge);
      append(outgoing, edge.iss, edge);
    }
    index = { nodes: new Map(graph.nodes.map((node) => [node.id, node])), incoming, outgoing };
    indexes.set(graph, index);
  }
  return index;
}

export function delegationCredentialId(credential: DelegationCredential): string {
  const bytes = typeof credential === 'string' ? new TextEncoder().encode(credential) : canonicalBytes(credential);
  return encodeBase64Url(sha256(bytes));
}

interface ReadCredential {
  header: JwsHeader;
  claims: Record<string, unknown>;
}

/**
 * The node ids a credential names as issuer and subject, read unverified so that a store can load
 * (and lock) the part of the graph its validation needs; empty when it cannot be read, which
 * validation then reports.
 */
export function delegationParties(credential: unknown): string[] {
  const read = readCredential(credential);
  return typeof read === 'string' ? [] : [read.claims.iss, read.claims.sub].filter(isNodeId);
}

function readCredential(credential: unknown): ReadCredential | string {
  try {
    if (typeof credential === 'string') {
      const parts = credential.split('.');
      if (parts.length !== 3 || parts[1] === '') return 'a compact JWS has the form header.payload.signature';
      // Read unverified only to learn the issuer; the signature is checked against its keys below.
      const claims: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(decodeBase64Url(parts[1]!)));
      if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return 'the JWS payload is not a JSON object';
      return { header: readProtectedHeader(credential), claims: claims as Record<string, unknown> };
    }
    if (typeof credential !== 'object' || credential === null || Array.isArray(credential)) {
      return 'a delegation credential is signed JSON or a compact JWS';
    }
    const { signature, ...claims } = credential as Record<string, unknown>;
    if (typeof signature !== 'string') return 'signed JSON carries its JWS in a "signature" string member';
    return { header: readProtectedHeader(signature), claims };
  } catch (error) {
    return error instanceof JwsError ? error.message : 'the JWS payload is not base64url-encoded UTF-8 JSON';
  }
}

export function validateDelegation(credential: unknown, graph: TrustGraph, now: Instant): TrustResult<DelegationEdge, DelegationFailureCode> {
  const read = readCredential(credential);
  if (typeof read === 'string') return failure('MALFORMED_CREDENTIAL', read);
  const { header, claims } = read;
  const unknown = Object.keys(claims).find((member) => !CLAIMS.has(member));
  if (unknown) return failure('MALFORMED_CREDENTIAL', `unexpected member "${unknown}"`);
  if (!isNodeId(claims.iss) || !isNodeId(claims.sub)) return failure('MALFORMED_CREDENTIAL', 'iss and sub must be node ids');
  const scope = validateScope(claims.scope);
  if (typeof scope === 'string') return failure('MALFORMED_CREDENTIAL', scope);
  const iat = credentialTime(claims.iat);
  const nbf = claims.nbf === undefined ? iat : credentialTime(claims.nbf);
  const exp = claims.exp === undefined ? undefined : credentialTime(claims.exp);
  if (iat === undefined || nbf === undefined || (claims.exp !== undefined && exp === undefined)) {
    return failure('MALFORMED_CREDENTIAL', 'iat (and nbf and exp, when present) must be RFC 3339 date-times or NumericDates (seconds since the epoch)');
  }
  if (exp !== undefined && (nbf >= exp || iat >= exp)) return failure('MALFORMED_CREDENTIAL', 'exp must come after iat and nbf');
  if (typeof header.kid !== 'string') return failure('MALFORMED_CREDENTIAL', 'the JWS header must name the signing key by kid');

  const { nodes, outgoing } = indexOf(graph);
  const issuer = nodes.get(claims.iss);
  if (!issuer) return failure('UNKNOWN_ISSUER', `there is no node ${claims.iss}`);
  if (!nodes.has(claims.sub)) return failure('UNKNOWN_SUBJECT', `there is no node ${claims.sub}`);

  const key = issuer.keys.find((candidate) => candidate.kid === header.kid);
  if (!key) return failure('BAD_SIGNATURE', `issuer ${issuer.id} has no key ${header.kid}`);
  try {
    const resolve = () => key;
    if (typeof credential === 'string') verifyCompact(credential, resolve);
    else verifyJson(credential, resolve);
  } catch (error) {
    if (error instanceof JwsError && error.reason === 'MALFORMED') return failure('MALFORMED_CREDENTIAL', error.message);
    return failure('BAD_SIGNATURE', error instanceof Error ? error.message : 'the signature does not verify');
  }

  const revokedFrom = keyRevokedFrom(issuer.id, key, graph.revocations ?? []);
  if (revokedFrom !== undefined && revokedFrom <= iat) {
    return failure('REVOKED_KEY', `key ${key.kid} of ${issuer.id} is revoked from ${formatInstant(revokedFrom)}, before the credential was issued`);
  }
  if (!keyIsCurrentAt(key, iat)) return failure('KEY_NOT_CURRENT', `key ${key.kid} of ${issuer.id} was not current at ${formatInstant(iat)}`);
  if (iat > now) return failure('NOT_YET_VALID', `the credential is issued in the future (${formatInstant(iat)})`);
  if (nbf > now) return failure('NOT_YET_VALID', `the credential is valid from ${formatInstant(nbf)}`);
  if (exp !== undefined && exp <= now) return failure('EXPIRED', `the credential expired at ${formatInstant(exp)}`);

  const held = scopesHeldAt(graph, issuer.id, now);
  if (held.length === 0) return failure('WIDENED_SCOPE', `${issuer.id} holds no scope: no standing delegation reaches it from a root`);
  if (!scopeCoveredBy(scope, held)) return failure('WIDENED_SCOPE', `the scope delegated is wider than what ${issuer.id} holds`);
  if (claims.iss === claims.sub || reaches(outgoing, claims.sub, claims.iss)) {
    return failure('CYCLE', `${claims.sub} already delegates, directly or not, to ${claims.iss}`);
  }
  return success({
    id: delegationCredentialId(credential as DelegationCredential),
    iss: claims.iss,
    sub: claims.sub,
    scope,
    iat: formatInstant(iat),
    nbf: formatInstant(nbf),
    ...(exp !== undefined && { exp: formatInstant(exp) }),
    kid: key.kid,
    credential: credential as DelegationCredential,
  });
}

/** The latest NumericDate taken: the end of year 9999, as far as RFC 3339 goes. */
const LATEST_NUMERIC_DATE = 253_402_300_799;

/** An RFC 3339 date-time, or a NumericDate (RFC 7519 §2; fractions kept to the microsecond). */
function credentialTime(value: unknown): Instant | undefined {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 && value <= LATEST_NUMERIC_DATE ? Math.round(value * 1_000_000) : undefined;
  }
  return parseInstant(value);
}

function reaches(outgoing: GraphIndex['outgoing'], from: string, to: string): boolean {
  const seen = new Set([from]);
  const pending = [from];
  while (pending.length > 0) {
    const current = pending.pop()!;
    for (const edge of outgoing.get(current) ?? []) {
      if (seen.has(edge.sub)) continue;
      if (edge.sub === to) return true;
      seen.add(edge.sub);
      pending.push(edge.sub);
    }
  }
  return false;
}

/**
 * An edge's instants, parsed once per edge: one graph part answers every standing question of a
 * request, and each question looks at every edge of it (resolvePath), which parsed and checked the
 * same three RFC 3339 texts each time.
 */
const parsedEdgeInstants = new WeakMap<DelegationEdge, { nbf: Instant; exp: Instant | undefined; iat: Instant }>();
function edgeInstants(edge: DelegationEdge): { nbf: Instant; exp: Instant | undefined; iat: Instant } {
  let instants = parsedEdgeInstants.get(edge);
  if (!instants) {
    instants = { nbf: parseInstant(edge.nbf)!, exp: edge.exp == null ? undefined : parseInstant(edge.exp)!, iat: parseInstant(edge.iat)! };
    parsedEdgeInstants.set(edge, instants);
  }
  return instants;
}

/** Why an edge does not stand at an instant, or undefined when it does. */
export function edgeFailureAt(edge: DelegationEdge, graph: TrustGraph, at: Instant, knownBy?: Instant): string | undefined {
  const { nbf, exp, iat } = edgeInstants(edge);
  if (nbf > at) return `is valid from ${edge.nbf}`;
  if (exp !== undefined && exp <= at) return `expired at ${edge.exp}`;
  const revocations = graph.revocations ?? [];
  const issuer = indexOf(graph).nodes.get(edge.iss);
  const key: NodeKey | undefined = issuer?.keys.find((candidate) => candidate.kid === edge.kid);
  if (!issuer || !key) return `was signed by a key ${edge.kid} that ${edge.iss} no longer lists`;
  if (!keyIsCurrentAt(key, iat)) return `was signed by key ${edge.kid} outside its lifetime`;
  const keyRevoked = keyRevokedFrom(edge.iss, key, revocations, knownBy);
  if (keyRevoked !== undefined && keyRevoked <= iat) return `was signed by key ${edge.kid}, revoked from ${formatInstant(keyRevoked)}`;
  for (const nodeId of [edge.iss, edge.sub]) {
    const revoked = nodeRevokedFrom(nodeId, revocations, knownBy);
    if (revoked !== undefined && revoked <= at) return `involves ${nodeId}, revoked from ${formatInstant(revoked)}`;
  }
  return undefined;
}

/**
 * What a node holds at an instant, as a union of scopes: the unrestricted scope for a root
 * (by kind, or listed in `roots` when a verifier pins its own), otherwise what its standing
 * delegations grant, each cut down to what their issuers held.
 */
export function scopesHeldAt(graph: TrustGraph, nodeId: string, at: Instant, roots?: readonly string[], knownBy?: Instant): DelegationScope[] {
  const { nodes, incoming } = indexOf(graph);
  const isRoot = (id: string) => (roots ? roots.includes(id) : nodes.get(id)?.kind === 'root');
  const memo = new Map<string, DelegationScope[]>();
  const held = (id: string, visiting: Set<string>): DelegationScope[] => {
    const known = memo.get(id);
    if (known) return known;
    const revoked = nodeRevokedFrom(id, graph.revocations ?? [], knownBy);
    if (revoked !== undefined && revoked <= at) return [];
    if (isRoot(id)) return [UNRESTRICTED_SCOPE];
    if (visiting.has(id)) return [];
    visiting.add(id);
    const scopes = new Map<string, DelegationScope>();
    for (const edge of incoming.get(id) ?? []) {
      if (edgeFailureAt(edge, graph, at, knownBy) !== undefined) continue;
      for (const issuerScope of held(edge.iss, visiting)) {
        const cut = intersectScopes(edge.scope, issuerScope);
        if (cut) scopes.set(JSON.stringify(cut), cut);
      }
    }
    visiting.delete(id);
    const result = [...scopes.values()];
    memo.set(id, result);
    return result;
  };
  return held(nodeId, new Set());
}

export interface PathOptions {
  /** Only edges whose scope grants this act. */
  readonly scope?: ScopeClaim;
  /** Count only revocations recorded by then. */
  readonly known_by?: Instant;
}

/**
 * The shortest chain of delegations, each standing at `at`, from one of the verifier's roots
 * to `toNodeId`; an empty chain when the node is itself a root. Fails with UNKNOWN_NODE or
 * NO_PATH (with the reasons the node's own incoming delegations do not stand).
 */
export function resolvePath(graph: TrustGraph, fromRootIds: readonly string[], toNodeId: string, at: Instant, options: PathOptions = {}): TrustResult<DelegationEdge[], 'UNKNOWN_NODE' | 'NO_PATH'> {
  const { nodes, incoming } = indexOf(graph);
  if (!nodes.has(toNodeId)) return failure('UNKNOWN_NODE', `there is no node ${toNodeId}`);
  const revocations = graph.revocations ?? [];
  const isStanding = (id: string) => {
    const revoked = nodeRevokedFrom(id, revocations, options.known_by);
    return revoked === undefined || revoked > at;
  };
  if (!isStanding(toNodeId)) return failure('NO_PATH', `${toNodeId} is revoked at ${formatInstant(at)}`);

  const usable = new Map<string, DelegationEdge[]>();
  for (const edge of graph.edges) {
    if (edgeFailureAt(edge, graph, at, options.known_by) !== undefined || (options.scope && !scopeAllows(edge.scope, options.scope))) continue;
    append(usable, edge.iss, edge);
  }
  const via = new Map<string, DelegationEdge | null>();
  const queue: string[] = [];
  for (const root of fromRootIds) {
    if (via.has(root) || !isStanding(root) || !nodes.has(root)) continue;
    via.set(root, null);
    queue.push(root);
  }
  for (let next = 0; next < queue.length && !via.has(toNodeId); next += 1) {
    const current = queue[next]!;
    for (const edge of usable.get(current) ?? []) {
      if (via.has(edge.sub)) continue;
      via.set(edge.sub, edge);
      queue.push(edge.sub);
    }
  }
  if (!via.has(toNodeId)) {
    const reasons = (incoming.get(toNodeId) ?? []).map((edge) => {
      const why =
        edgeFailureAt(edge, graph, at, options.known_by) ??
        (options.scope && !scopeAllows(edge.scope, options.scope) ? 'does not grant the act asked about' : `comes from ${edge.iss}, which no root reaches`);
      return `delegation ${edge.id} from ${edge.iss} ${why}`;
    });
    const detail = reasons.length > 0 ? `: ${reasons.join('; ')}` : ': nothing delegates to it';
    return failure('NO_PATH', `no delegation path reaches ${toNodeId} at ${formatInstant(at)}${detail}`);
  }
  const path: DelegationEdge[] = [];
  for (let edge = via.get(toNodeId); edge; edge = via.get(edge.iss)) path.unshift(edge);
  return success(path);
}
