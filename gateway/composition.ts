/**
 * Composes the supergraph from the running subgraphs' SDL with @apollo/composition, the same
 * library Apollo's Rover uses, so the result can be served by Apollo Router or Hive Gateway too.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'graphql';
import { SUBGRAPH_TIMEOUT_MS } from '../lib/config/runtime.js';

export interface SubgraphEndpoint {
  name: string;
  /** Where the schema is read from, and the subgraph's URL in the supergraph. */
  url: string;
  /** Every replica's URL, `url` among them, when the subgraph runs more than once (gateway/subgraph-transport.ts spreads requests over them). */
  replicas?: readonly string[];
  /** How long the gateway waits for its answers (SUBGRAPH_TIMEOUT_MS, <SERVICE>_SUBGRAPH_TIMEOUT_MS); SUBGRAPH_TIMEOUT_MS's default unless set. */
  timeoutMs?: number;
}

/** The subgraph's SDL, from `url`, else from the first other replica that gives it, each within the subgraph's deadline. */
export async function fetchSubgraphSdl(endpoint: SubgraphEndpoint): Promise<string> {
  const urls = [endpoint.url, ...(endpoint.replicas ?? []).filter((url) => url !== endpoint.url)];
  let failure: unknown;
  for (const url of urls) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ _service { sdl } }' }),
        signal: AbortSignal.timeout(endpoint.timeoutMs ?? SUBGRAPH_TIMEOUT_MS),
      });
      const body = (await response.json()) as { data?: { _service?: { sdl?: string } }; errors?: unknown[] };
      const sdl = body.data?._service?.sdl;
      if (sdl) return sdl;
      failure = new Error(`subgraph ${endpoint.name} at ${url} returned no SDL: ${JSON.stringify(body.errors ?? body)}`);
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
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

/**
 * The same across processes: every `npm start`, restart and gateway process would compose the same
 * schemas again (~0.6 s of CPU, and loading @apollo/composition). So a composition is also kept on disk
 * beside the commands' build, named by the SHA-256 of the subgraphs' names and SDL and of the
 * composition library's package.json (its version): a file read instead of a composition. Where that
 * folder cannot be written (a read-only checkout) each process composes, as before.
 */
const require = createRequire(import.meta.url);
const COMPOSITION_PACKAGE = join(dirname(require.resolve('@apollo/composition')), '..', 'package.json');
const STORED = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.cache', 'passport-compositions');

function storedComposition(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function storeComposition(file: string, supergraphSdl: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    // Whole or not at all, for processes starting side by side.
    const written = `${file}.${process.pid}`;
    writeFileSync(written, supergraphSdl);
    renameSync(written, file);
  } catch {
    // Not kept: the next process composes again.
  }
}

/** The supergraph SDL of these subgraphs, each at its URL. */
export function composeSubgraphs(subgraphs: readonly { name: string; url: string; sdl: string }[]): string {
  const key = JSON.stringify(subgraphs.map(({ name, sdl }) => [name, sdl]));
  let supergraphSdl = compositions.get(key);
  if (supergraphSdl === undefined) {
    const file = join(STORED, `${createHash('sha256').update(readFileSync(COMPOSITION_PACKAGE)).update(key).digest('hex')}.graphql`);
    supergraphSdl = storedComposition(file);
    if (supergraphSdl === undefined) {
      const { composeServices } = require('@apollo/composition') as typeof import('@apollo/composition');
      const result = composeServices(subgraphs.map(({ name, sdl }) => ({ name, url: standInUrl(name), typeDefs: parse(sdl) })));
      if (result.errors) throw new Error(`supergraph composition failed:\n${result.errors.map((error) => `- ${error.message}`).join('\n')}`);
      supergraphSdl = result.supergraphSdl;
      storeComposition(file, supergraphSdl);
    }
    compositions.set(key, supergraphSdl);
  }
  // A JSON string of a URL is also a GraphQL string with the same value.
  for (const { name, url } of subgraphs) supergraphSdl = supergraphSdl.replace(`url: ${JSON.stringify(standInUrl(name))}`, () => `url: ${JSON.stringify(url)}`);
  return supergraphSdl;
}
