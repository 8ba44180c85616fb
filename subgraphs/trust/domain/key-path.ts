/**
 * The trust path material of one key: what a verifier that pinned only the anchor bundle needs to
 * judge a signature by that key, without the rest of the graph. It is the part of the graph that
 * decides the key's standing (the nodes listing the key, every node a chain of delegations leads
 * from to them, the edges into all of these and their revocations: `graphForKeys`), so a path
 * found in it, or the absence of one, is the same as in the whole graph.
 *
 * The service signs it (signed JSON, the key that signs the anchor bundle), which binds the node
 * keys and the revocations it lists to the service as the bundle binds the roots; the delegation
 * credentials inside are verified on their own, from the pinned roots down. `type` keeps it from
 * being taken for an anchor bundle, `kid` from being taken for another key's material, and
 * `issued_at` lets a verifier refuse material too old to know of recent revocations.
 */
import { failure, success, type TrustResult } from '../../../lib/formats/trust/errors.js';
import type { DelegationEdge, TrustGraph } from '../../../lib/formats/trust/delegation.js';
import type { TrustNode } from '../../../lib/formats/trust/nodes.js';
import type { Revocation } from '../../../lib/formats/trust/revocations.js';
import { formatInstant, type Instant } from '../../../lib/formats/trust/time.js';

export const KEY_PATH_TYPE = 'key-path';

/** Every node key's kid is its RFC 7638 thumbprint (SHA-256, base64url): anything else names no key. */
export const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

export interface KeyPathMaterial {
  readonly type: typeof KEY_PATH_TYPE;
  readonly kid: string;
  readonly issued_at: string;
  readonly nodes: readonly TrustNode[];
  readonly edges: readonly DelegationEdge[];
  readonly revocations: readonly Revocation[];
}

/** The unsigned document; `part` is the graph part of exactly this key. */
export function buildKeyPathMaterial(kid: string, part: TrustGraph, issuedAt: Instant): TrustResult<KeyPathMaterial, 'INVALID_QUERY'> {
  if (!THUMBPRINT.test(kid)) return failure('INVALID_QUERY', 'kid must be an RFC 7638 thumbprint: 43 base64url characters');
  return success({ type: KEY_PATH_TYPE, kid, issued_at: formatInstant(issuedAt), nodes: part.nodes, edges: part.edges, revocations: part.revocations ?? [] });
}
