/** GraphQL operation durations, by operation name, type and outcome, as an Apollo Server plugin (the gateway's and every subgraph's). */
import type { ApolloServerPlugin } from '@apollo/server';
import type { ServerMetrics } from './metrics.js';

export function operationMetricsPlugin<Context extends object>(metrics: ServerMetrics): ApolloServerPlugin<Context> {
  // With METRICS=off an empty plugin: Apollo calls no hook of it.
  if (!metrics.enabled) return {};
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async willSendResponse({ operation, errors, response }) {
          const body = response.body;
          const failed = Boolean(errors?.length) || (body.kind === 'single' && Boolean(body.singleResult.errors?.length));
          // The name of the operation the document defines, never the client's free text for one it does not.
          metrics.graphqlOperationDone(operation?.name?.value, operation?.operation ?? '', failed ? 'error' : 'success', (performance.now() - started) / 1000);
        },
      };
    },
  };
}
