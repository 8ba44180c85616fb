import { nodeOut, type TrustDependencies } from './shared.js';

/** `TrustNode` and `TrustKeyStanding` entities named by other subgraphs, through the per-request loaders. */
export function trustReferences(deps: TrustDependencies) {
  return {
    TrustNode: async (reference: Record<string, unknown>) => {
      const node = typeof reference.id === 'string' ? await deps.nodes.load(reference.id) : null;
      return node && nodeOut(node);
    },
    TrustKeyStanding: (reference: Record<string, unknown>, context: unknown) => {
      const at = typeof reference.at === 'string' ? new Date(reference.at) : undefined;
      if (typeof reference.kid !== 'string' || !at || Number.isNaN(at.getTime())) return null;
      return deps.standings(context).load({ kid: reference.kid, at });
    },
  };
}
