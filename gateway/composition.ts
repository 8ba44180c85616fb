/**
 * Composes the supergraph from the running subgraphs' SDL with @apollo/composition, the same
 * library Apollo's Rover uses, so the result can be served by Apollo Router or Hive Gateway too.
 */
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';

export interface SubgraphEndpoint {
  name: string;
  /** Where the schema is read from, and the subgraph's URL in the supergraph. */
  url: string;
  /** Every replica's URL, `url` among them, when the subgraph runs more than once (gateway/index.ts spreads requests over them). */
  replicas?: readonly string[];
}

async function fetchSubgraphSdl(endpoint: SubgraphEndpoint): Promise<string> {
  const response = await fetch(endpoint.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ _service { sdl } }' }),
  });
  const body = (await response.json()) as { data?: { _service?: { sdl?: string } }; errors?: unknown[] };
  const sdl = body.data?._service?.sdl;
  if (!sdl) throw new Error(`subgraph ${endpoint.name} at ${endpoint.url} returned no SDL: ${JSON.stringify(body.errors ?? body)}`);
  return sdl;
}

export async function composeSupergraph(endpoints: readonly SubgraphEndpoint[]): Promise<string> {
  const services = await Promise.all(endpoints.map(async (endpoint) => ({ name: endpoint.name, url: endpoint.url, typeDefs: parse(await fetchSubgraphSdl(endpoint)) })));
  const result = composeServices(services);
  if (result.errors) throw new Error(`supergraph composition failed:\n${result.errors.map((error) => `- ${error.message}`).join('\n')}`);
  return result.supergraphSdl;
}
