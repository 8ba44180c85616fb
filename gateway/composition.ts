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
  return composeSubgraphs(await Promise.all(endpoints.map(async (endpoint) => ({ name: endpoint.name, url: endpoint.url, sdl: await fetchSubgraphSdl(endpoint) }))));
}

/**
 * Compositions this process has made, by the subgraphs' names and SDL, made with a stand-in URL per
 * subgraph. Composing is the costliest step of a start, and a process that starts the platform more
 * than once (a test worker starts dozens of stacks) would otherwise compose the same schemas again
 * for every new set of ports. Composition only copies each URL into its `join__graph` directive.
 */
const compositions = new Map<string, string>();
const standInUrl = (name: string) => `urn:passport-subgraph-url:${name}`;

/** The supergraph SDL of these subgraphs, each at its URL. */
export function composeSubgraphs(subgraphs: readonly { name: string; url: string; sdl: string }[]): string {
  const key = JSON.stringify(subgraphs.map(({ name, sdl }) => [name, sdl]));
  let supergraphSdl = compositions.get(key);
  if (supergraphSdl === undefined) {
    const result = composeServices(subgraphs.map(({ name, sdl }) => ({ name, url: standInUrl(name), typeDefs: parse(sdl) })));
    if (result.errors) throw new Error(`supergraph composition failed:\n${result.errors.map((error) => `- ${error.message}`).join('\n')}`);
    supergraphSdl = result.supergraphSdl;
    compositions.set(key, supergraphSdl);
  }
  // A JSON string of a URL is also a GraphQL string with the same value.
  for (const { name, url } of subgraphs) supergraphSdl = supergraphSdl.replace(`url: ${JSON.stringify(standInUrl(name))}`, () => `url: ${JSON.stringify(url)}`);
  return supergraphSdl;
}
