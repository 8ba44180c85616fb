/**
 * Places the platform's own keys in the trust graph (domain/platform-keys.ts): every service's
 * keyring, read through the gateway, merged into the `platform` root node; each operator's keys into
 * its node `operator:<id>`, delegated from `platform` by an edge the trust service signs with its
 * service key (a key of the root) when the node has none from it yet. Run at every start of the
 * platform, after every key rotation or revocation (lib/graphql/subgraph.ts) and when an operator is
 * created; running it again changes nothing unless a keyring did, and completes a placement a
 * failure left halfway.
 */
import { SERVICES } from '../../../lib/config/services.js';
import { signJson, type Signer } from '../../../lib/crypto/index.js';
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { ProblemError } from '../../../lib/problem.js';
import type { GraphRepository } from '../data/graph-repository.js';
import { httpStatusOf, operatorDelegationClaims, operatorNodes, PLATFORM_ROOT_ID, platformRootNode, type TrustNode, type TrustResult } from '../domain/index.js';

export const KEYRINGS = `query PlatformKeyrings { ${SERVICES.map((service) => `${service} { keyring }`).join(' ')} }`;

function placed<T>(result: TrustResult<T>): T {
  if (!result.ok) throw new ProblemError(httpStatusOf(result.code), result.code, `The platform's keys do not fit its trust graph: ${result.message}`);
  return result.value;
}

export interface PlacedKeys {
  node: TrustNode;
  created: boolean;
  /** The operators whose nodes hold their keys under a delegation from the platform. */
  operators: string[];
}

export async function placePlatformKeys(gateway: GatewayClient, graph: GraphRepository, signer: () => Signer): Promise<PlacedKeys> {
  const answer = await gateway.request<Record<string, { keyring: { keys: Record<string, unknown>[] } }>>(KEYRINGS);
  const keyrings = SERVICES.map((service) => answer[service]!.keyring);
  const root = placed(await graph.upsertNode(platformRootNode(keyrings)));
  const operators: string[] = [];
  for (const [operator, node] of operatorNodes(keyrings)) {
    placed(await graph.upsertNode(node));
    const part = await graph.graphForKeys([String(node.keys[0]!.kid)]);
    if (!part.edges.some((edge) => edge.iss === PLATFORM_ROOT_ID && edge.sub === node.id)) {
      placed(await graph.addEdge(signJson(operatorDelegationClaims(operator, new Date()), signer())));
    }
    operators.push(operator);
  }
  return { node: root.value, created: root.created, operators };
}
