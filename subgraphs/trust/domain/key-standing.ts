/**
 * The standing of a key at an instant (lib/formats/trust/key-standing.ts says what each value
 * means), computed from the trust graph: does the graph vouch for that key then? `path` names the
 * edge ids from a root down to a `valid` key's node (empty for a root itself). A key listed by
 * several nodes stands as well as its best-standing node.
 */
import { resolvePath, type DelegationEdge, type TrustGraph } from '../../../lib/formats/trust/delegation.js';
import type { NodeKey } from '../../../lib/formats/trust/keys.js';
import type { TrustNode } from '../../../lib/formats/trust/nodes.js';
import type { KeyStandingValue } from '../../../lib/formats/trust/key-standing.js';
import { keyRevokedFrom } from '../../../lib/formats/trust/revocations.js';
import { formatInstant, instantFromUnixSeconds, type Instant } from '../../../lib/formats/trust/time.js';

export interface KeyStanding {
  readonly kid: string;
  readonly at: string;
  readonly standing: KeyStandingValue;
  readonly node_id?: string;
  /** Edge ids from a root to the node, when the standing is `valid`. */
  readonly path?: readonly string[];
  readonly reason?: string;
}

const PREFERENCE: readonly KeyStandingValue[] = ['valid', 'revoked', 'expired', 'not_yet_valid', 'unknown'];

interface KeyIndex {
  /** Every node listing a key, by kid, in graph order. */
  holders: Map<string, { node: TrustNode; key: NodeKey }[]>;
  roots: string[];
}

// Graphs are read-only values: one index per graph answers every question asked of it (a verdict
// asks about each signing key at its first and last use, a batch up to a thousand at once).
const keyIndexes = new WeakMap<TrustGraph, KeyIndex>();

function keyIndexOf(graph: TrustGraph): KeyIndex {
  let index = keyIndexes.get(graph);
  if (!index) {
    const holders = new Map<string, { node: TrustNode; key: NodeKey }[]>();
    for (const node of graph.nodes) {
      for (const key of node.keys) {
        const list = holders.get(key.kid);
        if (list) list.push({ node, key });
        else holders.set(key.kid, [{ node, key }]);
      }
    }
    index = { holders, roots: graph.nodes.filter((node) => node.kind === 'root').map((node) => node.id) };
    keyIndexes.set(graph, index);
  }
  return index;
}

export function keyStandingAt(graph: TrustGraph, kid: string, at: Instant, knownBy?: Instant): KeyStanding {
  const base = { kid, at: formatInstant(at) };
  const { holders: byKid, roots } = keyIndexOf(graph);
  const holders = byKid.get(kid) ?? [];
  if (holders.length === 0) return { ...base, standing: 'unknown', reason: `no node of the trust graph lists key ${kid}` };
  const answers = holders.map(({ node, key }): KeyStanding => {
    const held = { ...base, node_id: node.id };
    const lifetime = lifetimeAt(key, at);
    if (lifetime) return { ...held, ...lifetime };
    const revokedFrom = keyRevokedFrom(node.id, key, graph.revocations ?? [], knownBy);
    if (revokedFrom !== undefined && revokedFrom <= at) {
      return { ...held, standing: 'revoked', reason: `key ${kid} of ${node.id} is revoked from ${formatInstant(revokedFrom)}` };
    }
    const path = resolvePath(graph, roots, node.id, at, knownBy === undefined ? {} : { known_by: knownBy });
    if (!path.ok) return { ...held, standing: 'unknown', reason: path.message };
    return { ...held, standing: 'valid', path: path.value.map((edge) => edge.id) };
  });
  return answers.sort((a, b) => PREFERENCE.indexOf(a.standing) - PREFERENCE.indexOf(b.standing))[0]!;
}

function lifetimeAt(key: NodeKey, at: Instant): Pick<KeyStanding, 'standing' | 'reason'> | undefined {
  const iat = instantFromUnixSeconds(key.iat);
  if (at < iat) return { standing: 'not_yet_valid', reason: `key ${key.kid} is valid from ${formatInstant(iat)}` };
  if (key.exp !== undefined && at >= instantFromUnixSeconds(key.exp)) {
    return { standing: 'expired', reason: `key ${key.kid} expired at ${formatInstant(instantFromUnixSeconds(key.exp))}` };
  }
  return undefined;
}

/** A standing with what it rests on: the node holding the key, the root and the delegations from it. */
export interface KeyStandingDetail extends KeyStanding {
  readonly node?: TrustNode;
  /** The root the path starts from, when the standing is `valid`. */
  readonly root_id?: string;
  /** The delegation edges of `path`, in order from the root. */
  readonly delegations?: readonly DelegationEdge[];
}

/** Many standings against one graph (one read of the trust store answers them all). */
export function keyStandingDetails(graph: TrustGraph, questions: readonly { kid: string; at: Instant }[]): KeyStandingDetail[] {
  const nodes = new Map(graph.nodes.map((node) => [node.id, node]));
  const edges = new Map(graph.edges.map((edge) => [edge.id, edge]));
  return questions.map(({ kid, at }) => {
    const standing = keyStandingAt(graph, kid, at);
    const node = standing.node_id === undefined ? undefined : nodes.get(standing.node_id);
    if (standing.standing !== 'valid' || !standing.path) return { ...standing, ...(node && { node }) };
    const delegations = standing.path.map((id) => edges.get(id)).filter((edge): edge is DelegationEdge => edge !== undefined);
    return { ...standing, ...(node && { node }), root_id: delegations[0]?.iss ?? standing.node_id!, delegations };
  });
}
