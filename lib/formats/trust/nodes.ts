/**
 * Nodes of the trust graph.
 *
 * A node has an id (1–256 characters, no whitespace, control characters or `#`, which separates
 * a node from a key in revocation subjects), a kind, an optional jurisdiction and its keys. A
 * quorum node also has `threshold` (how many distinct member keys make an attestation quorate)
 * and may pin the Ed25519 `group_key` of a FROST (RFC 9591) signing group.
 *
 * Upsert rules: keys merge as keys.ts describes; `kind` and a pinned `group_key` never change
 * (NODE_CONFLICT), because past verdicts were reached under them; `jurisdiction` and `threshold`
 * may change. `threshold` and `group_key` are allowed on quorum nodes only, and a quorum must be
 * able to reach its threshold: it needs a group key or at least `threshold` member keys.
 */
import { failure, success, type TrustResult } from './errors.js';
import { normalizeJurisdiction } from './jurisdiction.js';
import { mergeNodeKeys, validatePublicJwk, type Ed25519Jwk, type NodeKey } from './keys.js';

export const NODE_KINDS = ['root', 'authority', 'issuer', 'witness', 'quorum'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

export interface TrustNode {
  readonly id: string;
  readonly kind: NodeKind;
  readonly jurisdiction?: string;
  readonly keys: readonly NodeKey[];
  readonly threshold?: number;
  readonly group_key?: Ed25519Jwk;
}

const NODE_ID = /^[^\s#\p{Cc}]{1,256}$/u;
const NODE_MEMBERS = new Set(['id', 'kind', 'jurisdiction', 'keys', 'threshold', 'group_key']);

export function isNodeId(value: unknown): value is string {
  return typeof value === 'string' && NODE_ID.test(value);
}

/** Creates a node or merges an upsert into the stored one. */
export function upsertNode(existing: TrustNode | undefined, input: unknown): TrustResult<TrustNode> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return failure('INVALID_NODE', 'a node must be a JSON object');
  const body = input as Record<string, unknown>;
  const unknown = Object.keys(body).find((member) => !NODE_MEMBERS.has(member));
  if (unknown) return failure('INVALID_NODE', `unexpected node member "${unknown}"`);
  if (!isNodeId(body.id)) return failure('INVALID_NODE', 'a node id is 1–256 characters without whitespace, control characters or "#"');
  if (existing && existing.id !== body.id) return failure('INVALID_NODE', `the upsert names node ${body.id}, not ${existing.id}`);

  const kind = body.kind ?? existing?.kind;
  if (!NODE_KINDS.includes(kind as NodeKind)) return failure('INVALID_NODE', `kind must be one of ${NODE_KINDS.join(', ')}`);
  if (existing && kind !== existing.kind) return failure('NODE_CONFLICT', `node ${existing.id} is a ${existing.kind}; its kind does not change`);

  let jurisdiction = existing?.jurisdiction;
  if (body.jurisdiction !== undefined) {
    jurisdiction = normalizeJurisdiction(body.jurisdiction);
    if (!jurisdiction) return failure('INVALID_NODE', 'jurisdiction must be an ISO 3166-1 alpha-2 or ISO 3166-2 code');
  }

  if (body.keys !== undefined && !Array.isArray(body.keys)) return failure('INVALID_NODE', 'keys must be an array of JWKs');
  const keys = mergeNodeKeys(existing?.keys ?? [], (body.keys as unknown[] | undefined) ?? []);
  if (!keys.ok) return keys;

  if (kind !== 'quorum') {
    if (body.threshold !== undefined || body.group_key !== undefined) {
      return failure('INVALID_NODE', 'only a quorum node has a threshold or a group key');
    }
    return success({ id: body.id, kind: kind as NodeKind, ...(jurisdiction && { jurisdiction }), keys: keys.value });
  }

  const threshold = body.threshold ?? existing?.threshold;
  if (typeof threshold !== 'number' || !Number.isSafeInteger(threshold) || threshold < 1) {
    return failure('INVALID_NODE', 'a quorum node needs a threshold, an integer of at least 1');
  }
  let groupKey = existing?.group_key;
  if (body.group_key !== undefined) {
    const checked = validatePublicJwk(body.group_key);
    if (!checked.ok) return failure('INVALID_NODE', `group_key: ${checked.message}`);
    if (checked.value.kty !== 'OKP') return failure('INVALID_NODE', 'a FROST group key is an Ed25519 (OKP) key');
    if (groupKey && groupKey.kid !== checked.value.kid) {
      return failure('NODE_CONFLICT', `quorum ${body.id} has pinned group key ${groupKey.kid}; a pinned group key does not change`);
    }
    groupKey = checked.value;
  }
  if (!groupKey && keys.value.length < threshold) {
    return failure('INVALID_NODE', `quorum ${body.id} has ${keys.value.length} member keys and no group key; it can never reach threshold ${threshold}`);
  }
  return success({
    id: body.id,
    kind: 'quorum',
    ...(jurisdiction && { jurisdiction }),
    keys: keys.value,
    threshold,
    ...(groupKey && { group_key: groupKey }),
  });
}
