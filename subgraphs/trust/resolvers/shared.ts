/** What the trust resolvers share: their dependencies, domain-to-problem mapping, output shapes. */
import DataLoader from 'dataloader';
import { perRequest } from '../../../lib/graphql/batching.js';
import type { Signer } from '../../../lib/crypto/index.js';
import { badRequest, ProblemError } from '../../../lib/problem.js';
import { INSTANT_EXPECTED } from '../../../lib/time.js';
import type { GraphRepository } from '../data/graph-repository.js';
import type { MasterListRepository } from '../data/master-list-repository.js';
import type { TrustListRepository } from '../data/trust-list-repository.js';
import type { PlacedKeys } from '../service/platform-keys.js';
import {
  httpStatusOf,
  instantOf,
  keyStandingDetails,
  parseInstant,
  type KeyStandingDetail,
  type DelegationEdge,
  type Instant,
  type Revocation,
  type TrustList,
  type TrustListEntry,
  type TrustNode,
  type TrustResult,
} from '../domain/index.js';
import type { DomainMetrics } from '../../../lib/ops/metrics.js';
import type { DelegationEdgeType, KeyStandingType, RevocationType, TrustListEntryType, TrustListType, TrustNodeType } from '../schema/types.js';

export interface TrustDependencies {
  graph: GraphRepository;
  trustLists: TrustListRepository;
  masterList: MasterListRepository;
  /** The origin line of this deployment's master list (master-list.ts). */
  masterListOrigin: string;
  /** The key anchor bundles are signed with. */
  serviceSigner(): Signer;
  /** Merges every service's keyring into the `platform` root node, and each operator's keys into its delegated node (service/platform-keys.ts). */
  placePlatformKeys(): Promise<PlacedKeys>;
  /** Delegations judged, revocations, key standings answered (lib/ops/metrics.ts). */
  metrics: DomainMetrics;
  /** Nodes by id, batched: one query for every reference resolved in the same tick. */
  nodes: DataLoader<string, TrustNode | null>;
  /** Key standings, per request: one read of the graph for all of a request's questions. */
  standings: ReturnType<typeof keyStandingLoader>;
}

export function trustLoaders(graph: GraphRepository): Pick<TrustDependencies, 'nodes' | 'standings'> {
  return {
    standings: keyStandingLoader(graph),
    nodes: new DataLoader<string, TrustNode | null>(
      async (ids) => {
        const found = new Map((await graph.nodes(ids)).map((node) => [node.id, node]));
        return ids.map((id) => found.get(id) ?? null);
      },
      { cache: false },
    ),
  };
}

/** The value, or the failure as an RFC 9457 problem with the domain's code and status. */
export function orThrow<T>(result: TrustResult<T>): T {
  if (result.ok) return result.value;
  throw new ProblemError(httpStatusOf(result.code), result.code, result.message);
}

/** An optional RFC 3339 argument as an instant; anything else is a 400. */
export function instantArgument(name: string, text: string | null | undefined): Instant | undefined {
  if (text === null || text === undefined) return undefined;
  const instant = parseInstant(text);
  if (instant === undefined) throw badRequest('INVALID_QUERY', `${name} must be ${INSTANT_EXPECTED}`);
  return instant;
}

/** Drops absent (null) members, so a domain body carries only what the caller sent. */
export function present(members: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(members).filter(([, value]) => value !== null && value !== undefined));
}

export function nodeOut(node: TrustNode): TrustNodeType {
  return { id: node.id, kind: node.kind, jurisdiction: node.jurisdiction ?? null, keys: [...node.keys], threshold: node.threshold ?? null, groupKey: node.group_key ?? null };
}

export function edgeOut(edge: DelegationEdge): DelegationEdgeType {
  return { id: edge.id, iss: edge.iss, sub: edge.sub, scope: edge.scope, iat: edge.iat, nbf: edge.nbf, exp: edge.exp, kid: edge.kid, credential: edge.credential };
}

export function entryOut(entry: TrustListEntry): TrustListEntryType {
  const status = (instance: Omit<TrustListEntry, 'id' | 'history'>) => ({
    serviceType: instance.service_type,
    name: instance.name ?? null,
    nodeId: instance.node_id ?? null,
    status: instance.status,
    statusStartingTime: instance.status_starting_time,
  });
  return { id: entry.id, ...status(entry), history: entry.history.map(status) };
}

export function listOut(list: TrustList): TrustListType {
  return {
    jurisdiction: list.jurisdiction,
    framework: list.framework,
    sequenceNumber: list.sequence_number,
    issuedAt: list.issued_at,
    nextUpdate: list.next_update,
    entries: list.entries.map(entryOut),
  };
}

export function revocationOut(revocation: Revocation): RevocationType {
  return {
    subject: revocation.subject,
    reason: revocation.reason,
    effectiveAt: revocation.effective_at,
    recordedAt: revocation.recorded_at,
    retroactive: revocation.retroactive,
    attestation: revocation.attestation ?? null,
  };
}

export function standingOut(detail: KeyStandingDetail): KeyStandingType {
  return {
    kid: detail.kid,
    at: new Date(detail.at),
    standing: detail.standing,
    revoked: detail.standing === 'revoked',
    nodeId: detail.node_id ?? null,
    node: detail.node ? nodeOut(detail.node) : null,
    rootId: detail.root_id ?? null,
    path: detail.delegations ? detail.delegations.map(edgeOut) : null,
    reason: detail.reason ?? null,
  };
}

/**
 * Key standings by (kid, instant), one loader per request: every standing a request asks for — the
 * representations of one `_entities` call included — is answered from one read of the part of the
 * graph those keys hang from.
 */
export function keyStandingLoader(graph: GraphRepository) {
  return perRequest<{ kid: string; at: Date }, KeyStandingType, string>(
    async (questions) => {
      const part = await graph.graphForKeys(questions.map(({ kid }) => kid));
      return keyStandingDetails(
        part,
        questions.map(({ kid, at }) => ({ kid, at: instantOf(at) })),
      ).map(standingOut);
    },
    { cacheKeyFn: ({ kid, at }) => `${kid} ${at.toISOString()}` },
  );
}
