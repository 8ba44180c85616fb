/** GraphQL operation durations, by operation name, type and outcome, as an Apollo Server plugin (the gateway's and every subgraph's). */
import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import type { ServerMetrics } from './metrics.js';

/**
 * What a plugin's hook returns when it has nothing to wait for. Apollo's hooks are typed as
 * promises; one settled promise shared by every request, rather than an async function's new
 * one per call, saves the gateway and every subgraph two promises (and their async-context hooks)
 * a request (docs/OPS-COST.md).
 */
export const SETTLED: Promise<undefined> = Promise.resolve(undefined);

export function operationMetricsPlugin<Context extends object>(metrics: ServerMetrics): ApolloServerPlugin<Context> {
  // With METRICS=off an empty plugin: Apollo calls no hook of it.
  if (!metrics.enabled) return {};
  return {
    requestDidStart() {
      const started = performance.now();
      const listener: GraphQLRequestListener<Context> = {
        willSendResponse({ operation, errors, response }) {
          const body = response.body;
          const failed = Boolean(errors?.length) || (body.kind === 'single' && Boolean(body.singleResult.errors?.length));
          // The name of the operation the document defines, never the client's free text for one it does not.
          metrics.graphqlOperationDone(operation?.name?.value, operation?.operation ?? '', failed ? 'error' : 'success', (performance.now() - started) / 1000);
          return SETTLED;
        },
      };
      return Promise.resolve(listener);
    },
  };
}
