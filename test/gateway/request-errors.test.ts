/**
 * Requests the gateway answered with a 500 in the soak's bad-input run (soak/malformed.ts): any
 * syntax error and any document over the token limit (graphql-armor parsed it in a plugin hook,
 * whose failure Apollo Server treats as its own), an operationName the document does not define
 * (the gateway's executor threw), and variables nested deep enough to overflow the stack when sent
 * on to a subgraph; and a subscription sent over HTTP (the graph has none). Each is the client's
 * mistake: a 400, and nothing written.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';

let platform: SharedTestStack;

beforeAll(async () => {
  platform = await sharedTestStack();
});

/** Asks for application/graphql-response+json, under which request errors are 400s (under the legacy application/json, 200s: graphql-over-http.test.ts). */
async function post(body: string, token: string = TOKENS.writer) {
  const response = await fetch(platform.stack.gateway.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${token}` },
    body,
  });
  return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] } };
}

describe('request errors at the gateway are 400s', () => {
  it('a syntax error', async () => {
    const answer = await post(JSON.stringify({ query: 'mutation { upsertTrustNode(' }));
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it('a document over the token limit (5,000)', async () => {
    const answer = await post(JSON.stringify({ query: `{ ${Array.from({ length: 3_000 }, (_, i) => `a${i}: __typename`).join(' ')} }` }));
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.message).toMatch(/5000 tokens/);
  });

  it('an operationName the document does not define', async () => {
    const answer = await post(JSON.stringify({ query: 'query A { __typename }', operationName: 'Nope' }));
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]).toMatchObject({ message: 'Unknown operation named "Nope".', extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } });
  });

  it('variables nested 5,000 deep, which no longer reach a subgraph', async () => {
    // The worker's stack holds other files' edges; none is added or removed while this file runs.
    const edges = async () => (await platform.graphql('{ trustGraph { edges { id } } }')).data.trustGraph.edges;
    const before = await edges();
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    const answer = await post(`{"query": "mutation($c: JSON!) { addTrustEdge(credential: $c) { created } }", "variables": {"c": ${deep}}}`);
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('INVALID_BODY');
    expect(await edges()).toEqual(before);
  });

  it('a subscription sent as a plain POST, to the gateway or a subgraph’s own port, refused 400 and logged as no fault of theirs', async () => {
    // What the servers write at error level while the subscriptions are answered (their logs and console.error go to this process).
    const written: string[] = [];
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => written.push(String(chunk)) > 0);
    const stderr = vi.spyOn(console, 'error').mockImplementation((...line) => void written.push(line.join(' ')));
    try {
      const body = JSON.stringify({ query: 'subscription Live { passportEvents(passportId: "any") { cursor } }' });
      for (const url of [platform.stack.gateway.graphqlUrl, `${platform.stack.subgraphUrls.issuer}graphql`]) {
        for (const accept of ['application/graphql-response+json', 'application/json']) {
          const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body });
          const answer = (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
          expect([response.status, answer.errors?.[0]?.extensions?.code, answer.data ?? null], `${url} ${accept}`).toEqual([400, 'SUBSCRIPTION_NOT_SUPPORTED', null]);
        }
      }
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
    expect(written.filter((line) => /"level":"error"|internal error/.test(line))).toEqual([]);
  });
});
