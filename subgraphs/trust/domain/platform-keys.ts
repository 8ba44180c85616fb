/**
 * The platform's own keys in its trust graph: without them the trust service cannot vouch for the
 * keys that sign events, log heads, packs and notarizations, and every verdict stays `incomplete`.
 *
 * They are held by one root node, `platform`: the keys are the deployment's own trust anchors, as
 * the keyrings every service publishes already are for a verifier that pins them. Each key enters
 * with its lifetime from the keyring (`iat`, and `exp` / `revoked` once retired or revoked), so a
 * key stands for exactly what it signed while current. Node keys merge by kid and lose nothing
 * (keys.ts), which makes placing them again after a restart or a rotation change nothing but the
 * new keys and the new `exp` / `revoked` members.
 *
 * An operator's keys (a keyring entry with `operator`) are held by its own issuer node,
 * `operator:<id>`, which the platform delegates to (docs/OPERATORS.md). The default operator's keys
 * are the platform's issuer keys of before operators: the root holds them too, as it always did.
 */
import { DEFAULT_OPERATOR } from '../../../lib/auth/operators.js';
import { operatorNodeId } from '../../../lib/formats/trust/operators.js';

export const PLATFORM_ROOT_ID = 'platform';

/** The node members a keyring entry carries over: the public JWK and its lifetime, not `purpose`, `signs` or `operator`. */
const NODE_KEY_MEMBERS = ['kty', 'crv', 'x', 'y', 'kid', 'alg', 'use', 'iat', 'exp', 'revoked'] as const;

type KeyringEntry = Record<string, unknown>;

const nodeKey = (entry: KeyringEntry) => Object.fromEntries(NODE_KEY_MEMBERS.filter((member) => entry[member] !== undefined).map((member) => [member, entry[member]]));

/** The upsert of the platform root node holding every key of the given keyrings (JWK Sets) but those of operators other than the default. */
export function platformRootNode(keyrings: readonly { keys: readonly KeyringEntry[] }[]): { id: string; kind: 'root'; keys: Record<string, unknown>[] } {
  const keys = keyrings.flatMap((keyring) => keyring.keys.filter((entry) => entry.operator === undefined || entry.operator === DEFAULT_OPERATOR).map(nodeKey));
  return { id: PLATFORM_ROOT_ID, kind: 'root', keys };
}

/** The upserts of every operator's issuer node, holding that operator's keys, by operator id. */
export function operatorNodes(keyrings: readonly { keys: readonly KeyringEntry[] }[]): Map<string, { id: string; kind: 'issuer'; keys: Record<string, unknown>[] }> {
  const nodes = new Map<string, { id: string; kind: 'issuer'; keys: Record<string, unknown>[] }>();
  for (const entry of keyrings.flatMap((keyring) => keyring.keys)) {
    if (typeof entry.operator !== 'string') continue;
    const node = nodes.get(entry.operator) ?? { id: operatorNodeId(entry.operator), kind: 'issuer' as const, keys: [] };
    node.keys.push(nodeKey(entry));
    nodes.set(entry.operator, node);
  }
  return nodes;
}

/** The claims of the delegation from the platform to an operator's node: everything, until revoked (a suspension revokes the node). */
export function operatorDelegationClaims(operator: string, at: Date): { iss: string; sub: string; scope: Record<string, never>; iat: number } {
  return { iss: PLATFORM_ROOT_ID, sub: operatorNodeId(operator), scope: {}, iat: Math.floor(at.getTime() / 1000) };
}
