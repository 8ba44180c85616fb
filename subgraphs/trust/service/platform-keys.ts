/**
 * Places the platform's own keys in the trust graph (domain/platform-keys.ts): every service's
 * keyring, read through the gateway, merged into the `platform` root node. Run at every start of
 * the platform and after every key rotation or revocation (lib/graphql/subgraph.ts); running it again changes
 * nothing unless a keyring did.
 */
import { SERVICES } from '../../../lib/config/services.js';
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { ProblemError } from '../../../lib/problem.js';
import type { GraphRepository } from '../data/graph-repository.js';
import { httpStatusOf, platformRootNode, type TrustNode } from '../domain/index.js';

export const KEYRINGS = `query PlatformKeyrings { ${SERVICES.map((service) => `${service} { keyring }`).join(' ')} }`;

export async function placePlatformKeys(gateway: GatewayClient, graph: GraphRepository): Promise<{ node: TrustNode; created: boolean }> {
  const answer = await gateway.request<Record<string, { keyring: { keys: Record<string, unknown>[] } }>>(KEYRINGS);
  const placed = await graph.upsertNode(platformRootNode(SERVICES.map((service) => answer[service]!.keyring)));
  if (!placed.ok) throw new ProblemError(httpStatusOf(placed.code), placed.code, `The platform's keys do not fit its trust graph: ${placed.message}`);
  return { node: placed.value.value, created: placed.value.created };
}
