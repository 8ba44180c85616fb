/**
 * A delegation path in an exported trust graph (GET /trust/graph), offline: from a root of the
 * pinned anchor bundle to a node, at the signing time. The trust service's own path resolution
 * (resolvePath) finds the path, every credential on it is validated again from its signed text
 * (validateDelegation: signature under the issuer's key, key current and unrevoked when it
 * signed, validity at the signing time, scope, no cycle) and must say what the exported edge says,
 * and revocations effective by the signing time count (edgeFailureAt, nodeRevokedFrom).
 *
 * What the export cannot prove: the keys of non-root nodes and the list of revocations come from
 * the export as it is (GET /trust/graph is not signed); roots and their keys come from the pinned
 * anchors only. A revocation in the export is always honoured, since it can only take trust away.
 * A key's signed trust path material (trust-material.ts) is judged here alike, its node keys and
 * revocations then the trust service's word.
 */
import { canonicalize } from '../lib/crypto/index.js';
import { edgeFailureAt, resolvePath, validateDelegation, type DelegationEdge, type TrustGraph } from '../lib/formats/trust/delegation.js';
import { keyIsCurrentAt, keyRevokedAt, type NodeKey } from '../lib/formats/trust/keys.js';
import type { TrustNode } from '../lib/formats/trust/nodes.js';
import { keyRevokedFrom, nodeRevokedFrom, parseRevocationSubject, type Revocation } from '../lib/formats/trust/revocations.js';
import { formatInstant, parseInstant, type Instant } from '../lib/formats/trust/time.js';
import { anchorBundleFinding, InputError, type PinSet } from './pins.js';
import { failed, info, makeReport, notChecked, ok, type Finding, type Report } from './report.js';

export interface PathQuestion {
  /** The node whose standing is asked. */
  readonly to: string;
  /** The signing time, RFC 3339. */
  readonly at: string;
  /** Optionally, the node's key that signed: listed, current and unrevoked at the signing time. */
  readonly kid?: string;
}

/** Reads an exported GET /trust/graph: `{nodes, edges, revocations}`; InputError when it is not one. */
export function trustGraphFrom(value: unknown): TrustGraph {
  const graph = value as { nodes?: unknown; edges?: unknown; revocations?: unknown } | null;
  if (typeof graph !== 'object' || graph === null || !Array.isArray(graph.nodes) || !Array.isArray(graph.edges)) {
    throw new InputError('MALFORMED_GRAPH', 'an exported trust graph is {nodes, edges, revocations} as GET /trust/graph answers');
  }
  const nodes = graph.nodes as TrustNode[];
  nodes.forEach((node, index) => {
    if (typeof node?.id !== 'string' || typeof node.kind !== 'string' || !Array.isArray(node.keys)) throw new InputError('MALFORMED_GRAPH', `node ${index} has no id, kind and keys`);
  });
  // An edge without exp (a delegation that stands until revoked) is exported with exp null.
  const edges = (graph.edges as (DelegationEdge & { exp?: string | null })[]).map((exported, index) => {
    if (typeof exported !== 'object' || exported === null) throw new InputError('MALFORMED_GRAPH', `edge ${index} is not an object`);
    const { exp, ...edge } = exported;
    const times = [edge?.iat, edge?.nbf].every((time) => parseInstant(time) !== undefined) && (exp == null || parseInstant(exp) !== undefined);
    if (typeof edge?.id !== 'string' || typeof edge.iss !== 'string' || typeof edge.sub !== 'string' || typeof edge.kid !== 'string' || !times || edge.credential === undefined) {
      throw new InputError('MALFORMED_GRAPH', `edge ${index} lacks id, iss, sub, kid, iat, nbf or credential, or has an exp that is not a date-time`);
    }
    return exp == null ? edge : { ...edge, exp };
  });
  const revocations = (Array.isArray(graph.revocations) ? graph.revocations : []) as Revocation[];
  revocations.forEach((revocation, index) => {
    if (!parseRevocationSubject(revocation?.subject) || parseInstant(revocation.effective_at) === undefined || parseInstant(revocation.recorded_at) === undefined) {
      throw new InputError('MALFORMED_GRAPH', `revocation ${index} lacks a subject, effective_at or recorded_at`);
    }
  });
  return { nodes, edges, revocations };
}

export function verifyDelegationPath(exported: TrustGraph, question: PathQuestion, pins: PinSet): Report {
  const at = parseInstant(question.at);
  if (at === undefined) throw new InputError('MALFORMED_TIME', `--at ${question.at} is not an RFC 3339 date-time`);
  if (!pins.roots) return makeReport('path', question.to, [noPinnedAnchors('path.anchors')]);
  const bundle = anchorBundleFinding(pins, pins.material);
  return makeReport('path', question.to, [...(bundle ? [bundle] : []), ...delegationPath(exported, question.to, at, pins, question.kid).findings]);
}

/** What a check that starts from the pinned roots says without them. */
export const noPinnedAnchors = (check: string): Finding => notChecked(check, 'NO_PINNED_ANCHORS', 'no trust anchor bundle is pinned: give it with --anchors');

/**
 * Whether a delegation path from a root of the pinned anchors (`pins.roots`, which the caller has
 * checked are there) stands to `to` at `at`, and with `kid`, whether that key of `to` did: the
 * findings, the graph as judged (its roots the pinned ones), and the nodes of the path found.
 */
export function delegationPath(exported: TrustGraph, to: string, at: Instant, pins: PinSet, kid?: string): { findings: Finding[]; graph: TrustGraph; nodes?: string[] } {
  const findings: Finding[] = [];
  const graph = withPinnedRoots(exported, pins, findings);
  const rootIds = pins.roots!.map((root) => root.id);
  const when = formatInstant(at);

  const path = resolvePath(graph, rootIds, to, at);
  if (!path.ok) {
    findings.push(failed('path', path.code, path.message));
    if (path.code === 'NO_PATH') findings.push(...diagnose(graph, to, at));
    return { findings, graph };
  }
  const root = path.value[0]?.iss ?? to;
  const nodes = [root, ...path.value.map((edge) => edge.sub)];
  findings.push(ok('path', `${nodes.join(' → ')}: ${path.value.length} delegations from pinned root ${root}, standing at ${when}`));
  for (const edge of path.value) findings.push(credentialFinding(edge, graph, at));
  const touching = (graph.revocations ?? []).filter((revocation) => nodes.includes(parseRevocationSubject(revocation.subject)!.node_id));
  findings.push(
    ok('path.revocations', `no revocation effective by ${when} takes a node of the path or a key that signed on it (${touching.length} later or unrelated revocations of its nodes in the export)`),
  );
  if (kid !== undefined) findings.push(nodeKeyFinding(graph, to, kid, at));
  return { findings, graph, nodes };
}

/** The export with its roots replaced by the pinned ones: a root the anchors do not pin is no root. */
function withPinnedRoots(exported: TrustGraph, pins: PinSet, findings: Finding[]): TrustGraph {
  const pinned = new Map(pins.roots!.map((root) => [root.id, root]));
  const nodes: TrustNode[] = exported.nodes.map((node) => {
    const root = pinned.get(node.id);
    if (root) {
      const swapped = node.keys.filter((key) => !root.keys.some((pinnedKey) => pinnedKey.kid === key.kid)).map((key) => key.kid);
      if (swapped.length > 0) findings.push(info('path.anchors', `the export lists keys of root ${node.id} that the pinned anchors do not (${swapped.join(', ')}); only the pinned keys count`));
      return { id: root.id, kind: 'root', ...(root.jurisdiction && { jurisdiction: root.jurisdiction }), keys: root.keys as NodeKey[] };
    }
    if (node.kind === 'root') {
      findings.push(info('path.anchors', `node ${node.id} is a root in the export, but not in the pinned anchors: it counts as no root`));
      return { ...node, kind: 'authority' };
    }
    return node;
  });
  for (const root of pins.roots!) {
    if (!nodes.some((node) => node.id === root.id)) nodes.push({ id: root.id, kind: 'root', keys: root.keys as NodeKey[] });
  }
  return { nodes, edges: exported.edges, revocations: exported.revocations ?? [] };
}

/** A credential on the path, validated again from its signed text, and the exported edge held to it. */
function credentialFinding(edge: DelegationEdge, graph: TrustGraph, at: Instant): Finding {
  const label = `delegation ${edge.id} (${edge.iss} → ${edge.sub})`;
  const checked = validateDelegation(edge.credential, graph, at);
  if (!checked.ok) return failed('path.credential', checked.code, `${label}: ${checked.message}`);
  const value = checked.value;
  const differing: string[] = (['id', 'iss', 'sub', 'kid', 'iat', 'nbf', 'exp'] as const).filter((member) => value[member] !== edge[member]);
  if (canonicalize(value.scope) !== canonicalize(edge.scope)) differing.push('scope');
  if (differing.length > 0) return failed('path.credential', 'EDGE_MISMATCH', `${label}: the exported edge's ${differing.join(', ')} differ from what its signed credential says`);
  return ok('path.credential', `${label}: signed by key ${value.kid} of ${value.iss}, valid ${value.nbf} to ${value.exp ?? 'revocation'}, scope ${canonicalize(value.scope)}`);
}

/**
 * Why no path stands: the node's revocation, then every delegation on the way up from it that does
 * not stand at the signing time, nearest first (so a bad credential near the root is named too).
 */
function diagnose(graph: TrustGraph, to: string, at: Instant): Finding[] {
  const findings: Finding[] = [];
  const revoked = nodeRevokedFrom(to, graph.revocations ?? []);
  if (revoked !== undefined && revoked <= at) {
    // The node's own revocation is the reason; every delegation to it fails for it alike.
    const reason = firstRevocation(graph.revocations ?? [], to)?.reason;
    return [failed('path.revocation', 'NODE_REVOKED', `${to} is revoked from ${formatInstant(revoked)}${reason ? ` (${reason})` : ''}, at or before the signing time ${formatInstant(at)}`)];
  }
  const seen = new Set([to]);
  const pending = [to];
  while (pending.length > 0) {
    const node = pending.shift()!;
    for (const edge of graph.edges.filter((candidate) => candidate.sub === node)) {
      if (!seen.has(edge.iss)) {
        seen.add(edge.iss);
        pending.push(edge.iss);
      }
      const label = `delegation ${edge.id} (${edge.iss} → ${edge.sub})`;
      const checked = validateDelegation(edge.credential, graph, at);
      if (!checked.ok) {
        findings.push(failed('path.credential', checked.code, `${label}: ${checked.message}`));
        continue;
      }
      const why = edgeFailureAt(edge, graph, at);
      if (why !== undefined) findings.push(failed('path.credential', /revoked/.test(why) ? 'REVOKED' : 'NOT_STANDING', `${label} ${why}`));
    }
  }
  return findings;
}

/** Whether a node lists the key, and it was current and unrevoked (by its own `revoked` or a revocation record) at the instant; `check` names the finding. */
export function nodeKeyFinding(graph: TrustGraph, nodeId: string, kid: string, at: Instant, check = 'path.key'): Finding {
  const node = graph.nodes.find((candidate) => candidate.id === nodeId)!;
  const key = node.keys.find((candidate) => candidate.kid === kid);
  if (!key) return failed(check, 'KEY_NOT_LISTED', `${nodeId} lists no key ${kid}`);
  if (!keyIsCurrentAt(key, at)) return failed(check, 'KEY_NOT_CURRENT', `key ${kid} of ${nodeId} was not current at ${formatInstant(at)}`);
  return revokedKeyFinding(graph, node, key, at, check) ?? ok(check, `key ${kid} of ${nodeId} was current and unrevoked at ${formatInstant(at)}`);
}

/**
 * nodeKeyFinding, and no other node that lists the key has revoked it (or been revoked) by then: a
 * key several nodes list is trusted through one of them, but a revocation only takes trust away.
 */
export function keyStandingFinding(graph: TrustGraph, nodeId: string, kid: string, at: Instant, check: string): Finding {
  const own = nodeKeyFinding(graph, nodeId, kid, at, check);
  if (own.status !== 'ok') return own;
  for (const node of graph.nodes) {
    const key = node.keys.find((candidate) => candidate.kid === kid);
    const revoked = node.id !== nodeId && key && revokedKeyFinding(graph, node, key, at, check);
    if (revoked) return revoked;
  }
  return own;
}

function revokedKeyFinding(graph: TrustGraph, node: TrustNode, key: NodeKey, at: Instant, check: string): Finding | undefined {
  const revoked = keyRevokedFrom(node.id, key, graph.revocations ?? []);
  if (revoked === undefined || revoked > at) return undefined;
  const reason = keyRevokedAt(key) === revoked ? key.revoked!.reason : firstRevocation(graph.revocations ?? [], node.id, key.kid)?.reason;
  return failed(check, 'KEY_REVOKED', `key ${key.kid} of ${node.id} is revoked from ${formatInstant(revoked)}${reason ? ` (${reason})` : ''}, at or before the signing time ${formatInstant(at)}`);
}

/** The revocation of the node (with a kid: of the node or of that key of it) that takes effect first. */
export function firstRevocation(revocations: readonly Revocation[], nodeId: string, kid?: string): Revocation | undefined {
  const taking = revocations.filter((revocation) => {
    const subject = parseRevocationSubject(revocation.subject);
    return subject?.node_id === nodeId && (subject.kid === undefined || subject.kid === kid);
  });
  return taking.sort((a, b) => parseInstant(a.effective_at)! - parseInstant(b.effective_at)!)[0];
}
