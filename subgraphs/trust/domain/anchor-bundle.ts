/**
 * The content of the anchor bundle: what a verifier pins to check everything else offline. The
 * service signs it elsewhere (signed JSON, DESIGN §3); this builds the unsigned document.
 *
 * - roots: every root node with all its keys, including expired and revoked ones with their
 *   lifetimes, so that signatures made before a rotation still verify;
 * - quorums: quorum nodes with threshold, member keys and pinned FROST group key, which verify
 *   retroactive revocations;
 * - witness_set: the current {m, keys} of the master list (null when none is set);
 * - trust_lists: the head of each list: jurisdiction, framework, sequence number, issue time,
 *   next update, and the base64url SHA-256 of the RFC 8785 form of that version as trustListAt
 *   returns it, so a fetched list can be matched against its pinned head.
 *
 * Narrowed to a jurisdiction J, the bundle keeps the anchors without a jurisdiction and those of
 * J, of the country J belongs to (DE for DE-BY) and of J's subdivisions (DE-BY for DE): the
 * anchors that can take part in verifying something from J. Everything is sorted by id or
 * jurisdiction, so equal content gives equal bytes.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalBytes, encodeBase64Url } from '../../../lib/crypto/index.js';
import { failure, success, type TrustResult } from '../../../lib/formats/trust/errors.js';
import { normalizeJurisdiction } from '../../../lib/formats/trust/jurisdiction.js';
import type { Ed25519Jwk, NodeKey } from '../../../lib/formats/trust/keys.js';
import type { WitnessSet } from './master-list.js';
import type { TrustNode } from '../../../lib/formats/trust/nodes.js';
import { formatInstant, type Instant } from '../../../lib/formats/trust/time.js';
import type { TrustList } from './trust-lists.js';

export interface RootAnchor {
  readonly id: string;
  readonly jurisdiction?: string;
  readonly keys: readonly NodeKey[];
}

export interface QuorumAnchor extends RootAnchor {
  readonly threshold: number;
  readonly group_key?: Ed25519Jwk;
}

export interface TrustListHead {
  readonly jurisdiction: string;
  readonly framework: string;
  readonly sequence_number: number;
  readonly issued_at: string;
  readonly next_update: string;
  readonly sha256: string;
}

export interface AnchorBundle {
  readonly issued_at: string;
  readonly jurisdiction?: string;
  readonly roots: readonly RootAnchor[];
  readonly quorums: readonly QuorumAnchor[];
  readonly witness_set: WitnessSet | null;
  readonly trust_lists: readonly TrustListHead[];
}

export interface AnchorBundleSources {
  readonly nodes: readonly TrustNode[];
  readonly witnessSet?: WitnessSet;
  /** The current version of every trust list. */
  readonly trustLists: readonly TrustList[];
  readonly issuedAt: Instant;
  /** The `jurisdiction` query value, unparsed. */
  readonly jurisdiction?: string;
}

export function buildAnchorBundle(sources: AnchorBundleSources): TrustResult<AnchorBundle, 'INVALID_QUERY'> {
  let narrowTo: string | undefined;
  if (sources.jurisdiction !== undefined) {
    narrowTo = normalizeJurisdiction(sources.jurisdiction);
    if (!narrowTo) return failure('INVALID_QUERY', 'jurisdiction must be an ISO 3166-1 alpha-2 or ISO 3166-2 code');
  }
  const applies = (jurisdiction: string | undefined) => narrowTo === undefined || jurisdiction === undefined || related(jurisdiction, narrowTo);
  const nodes = sources.nodes.filter((node) => applies(node.jurisdiction)).sort((a, b) => compare(a.id, b.id));
  const anchor = (node: TrustNode): RootAnchor => ({ id: node.id, ...(node.jurisdiction && { jurisdiction: node.jurisdiction }), keys: node.keys });
  return success({
    issued_at: formatInstant(sources.issuedAt),
    ...(narrowTo && { jurisdiction: narrowTo }),
    roots: nodes.filter((node) => node.kind === 'root').map(anchor),
    quorums: nodes.filter((node) => node.kind === 'quorum').map((node) => ({ ...anchor(node), threshold: node.threshold!, ...(node.group_key && { group_key: node.group_key }) })),
    witness_set: sources.witnessSet ?? null,
    trust_lists: sources.trustLists
      .filter((list) => applies(list.jurisdiction))
      .sort((a, b) => compare(a.jurisdiction, b.jurisdiction))
      .map((list) => ({
        jurisdiction: list.jurisdiction,
        framework: list.framework,
        sequence_number: list.sequence_number,
        issued_at: list.issued_at,
        next_update: list.next_update,
        sha256: encodeBase64Url(sha256(canonicalBytes(list))),
      })),
  });
}

function related(a: string, b: string): boolean {
  const country = (jurisdiction: string) => jurisdiction.slice(0, 2);
  return a === b || (a.length === 2 && country(b) === a) || (b.length === 2 && country(a) === b);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
