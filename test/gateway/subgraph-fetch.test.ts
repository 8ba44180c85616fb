/**
 * The gateway's HTTP client to the subgraphs (gateway/subgraph-transport.ts sharingPost): identical
 * queries in flight at once go out once, and nothing else is shared — not across credentials, not
 * mutations, not after the answer has come. Queries started at once to one subgraph go out as one
 * batched request (gateway/subgraph-batching.ts), which the server below answers as Apollo Server
 * does: an array of results, or one status for the whole batch.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RemoteGraphQLDataSource, type GraphQLDataSource } from '@apollo/gateway';
import { GraphQLError } from 'graphql';
import { SubgraphDataSource, type GatewayContext } from '../../gateway/data-source.js';
import { sharingPost } from '../../gateway/subgraph-transport.js';
import { GATEWAY_CREDENTIAL_HEADER } from '../../lib/graphql/gateway-credential.js';
import { batchingPost, parsedAnswer, type JsonPost } from '../../gateway/subgraph-batching.js';
import { jsonPoster } from '../../lib/http/post-json.js';

const received: { authorization?: string; body: string }[] = [];
let url = '';
const server = createServer((request: IncomingMessage, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  request.on('end', () => {
    received.push({ authorization: request.headers.authorization, body });
    // Slow enough that the callers of one test are all in flight together.
    setTimeout(() => {
      const status = body.includes('refuse') ? 400 : 200;
      response.writeHead(status, { 'content-type': 'application/json', 'x-seen': String(received.length) });
      const answer = (operation: string) => ({ data: { echo: operation.length, n: received.length } });
      response.end(JSON.stringify(body.startsWith('[') ? (JSON.parse(body) as unknown[]).map((operation) => answer(JSON.stringify(operation))) : answer(body)));
    }, 60);
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => void (received.length = 0));

/** What a caller of the subgraph client gets: the status, headers and parsed body of its own answer. */
type Fetcher = (url: string, body: string, headers: Record<string, string>) => Promise<{ status: number; headers: { get(name: string): string | undefined }; json(): Promise<any> }>;
const answering =
  (post: JsonPost): Fetcher =>
  async (...request) => {
    const answer = await post(...request);
    return { status: answer.status, headers: { get: (name) => answer.headers[name] as string | undefined }, json: async () => parsedAnswer(answer) };
  };
const subgraphFetch = () => answering(sharingPost());
const post = (fetcher: Fetcher, body: unknown, authorization?: string) => fetcher(url, JSON.stringify(body), { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) });

describe('the gateway’s subgraph fetch', () => {
  it('sends identical queries in flight at once only once, and gives each caller its own parsed answer', async () => {
    const fetcher = subgraphFetch();
    const query = { query: 'query ($id: ID!) { passport(id: $id) { id } }', variables: { id: 'a' } };
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(fetcher, query, 'Bearer t')));
    expect(received).toHaveLength(1);
    const parsed = await Promise.all(answers.map((answer) => answer.json()));
    expect(new Set(parsed.map((value) => JSON.stringify(value))).size).toBe(1);
    expect(parsed[0]).not.toBe(parsed[1]);
    expect(answers.every((answer) => answer.status === 200 && answer.headers.get('x-seen') === '1')).toBe(true);
  });

  it('does not share between different credentials, variables or bodies', async () => {
    const fetcher = subgraphFetch();
    const query = (id: string) => ({ query: '{ passport(id: "x") { id } }', variables: { id } });
    await Promise.all([post(fetcher, query('a'), 'Bearer one'), post(fetcher, query('a'), 'Bearer two'), post(fetcher, query('a')), post(fetcher, query('b'), 'Bearer one')]);
    expect(received.map((request) => request.authorization)).toEqual(expect.arrayContaining(['Bearer one', 'Bearer two', undefined, 'Bearer one']));
    expect(received).toHaveLength(4);
  });

  it('sends every mutation, identical or not', async () => {
    const fetcher = subgraphFetch();
    const mutation = { query: 'mutation { appendPassportEvent(passportId: "a", type: "ObjectEvent", payload: {}) { status } }' };
    await Promise.all(Array.from({ length: 5 }, () => post(fetcher, mutation, 'Bearer t')));
    expect(received).toHaveLength(5);
  });

  it('keeps nothing once the answer has come: the same query later is sent again', async () => {
    const fetcher = subgraphFetch();
    const query = { query: '{ trustGraph { nodes { id } } }' };
    const first = await (await post(fetcher, query)).json();
    const second = await (await post(fetcher, query)).json();
    expect(received).toHaveLength(2);
    expect([first.data.n, second.data.n]).toEqual([1, 2]);
  });

  it('gives a caller that needs an answer begun after it asked (a live read: cache-control no-cache) none already in flight', async () => {
    const source = new SubgraphDataSource(url, sharingPost());
    const read = (context: Partial<GatewayContext>) =>
      source.process({ kind: 'incoming operation', request: { query: '{ passportEventsAfter(passportId: "a") { nodes { seq } } }' }, context } as never);
    await Promise.all([read({}), read({})]);
    expect(received).toHaveLength(1);
    received.length = 0;
    await Promise.all([read({}), read({ freshAnswer: true })]);
    expect(received).toHaveLength(2);
  });

  it('passes a refusal on with its status', async () => {
    const answer = await post(subgraphFetch(), { query: '{ refuse }' });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ data: { n: 1 } });
  });
});

describe('batching of the gateway’s subgraph fetch', () => {
  const batchingFetch = () => answering(sharingPost(batchingPost(jsonPoster())));
  const query = (id: string) => ({ query: 'query ($id: ID!) { passport(id: $id) { id } }', variables: { id } });

  it('sends queries started at once to one subgraph as one request, and gives each caller the answer to its own', async () => {
    const fetcher = batchingFetch();
    const bodies = ['a', 'bb', 'ccc'].map(query);
    const answers = await Promise.all(bodies.map((body) => post(fetcher, body, 'Bearer t')));
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!.body)).toEqual(bodies);
    expect(await Promise.all(answers.map((answer) => answer.json()))).toEqual(bodies.map((body) => ({ data: { echo: JSON.stringify(body).length, n: 1 } })));
  });

  it('gives each caller of an operation shared within a batch its own parsed answer, alike', async () => {
    const fetcher = batchingFetch();
    const answers = await Promise.all([query('a'), query('bb'), query('bb'), query('bb')].map((body) => post(fetcher, body, 'Bearer t')));
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!.body)).toEqual([query('a'), query('bb')]);
    const parsed = await Promise.all(answers.map((answer) => answer.json()));
    // The gateway merges into what it is given: a change to one caller's answer is not another's.
    parsed[1].data.echo = -1;
    expect(parsed.slice(2)).toEqual([{ data: { echo: JSON.stringify(query('bb')).length, n: 1 } }, { data: { echo: JSON.stringify(query('bb')).length, n: 1 } }]);
    expect(new Set(parsed.slice(1))).toHaveProperty('size', 3);
  });

  it('batches neither across credentials nor mutations', async () => {
    const fetcher = batchingFetch();
    const mutation = { query: 'mutation { mintPassportPack(passportId: "a") { passportId } }' };
    await Promise.all([post(fetcher, query('a'), 'Bearer one'), post(fetcher, query('b'), 'Bearer two'), post(fetcher, mutation, 'Bearer one'), post(fetcher, mutation, 'Bearer one')]);
    expect(received).toHaveLength(4);
    expect(received.every((request) => !request.body.startsWith('['))).toBe(true);
  });

  it('gathers fetches started in different turns into one batch while the subgraph is still answering an earlier one', async () => {
    const fetcher = batchingFetch();
    const first = post(fetcher, query('a'));
    // The first batch is out (its answer takes 60 ms); the next fetches start a turn of the event loop apart.
    while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const second = post(fetcher, query('b'));
    await new Promise((resolve) => setImmediate(resolve));
    const third = post(fetcher, query('c'));
    const answers = await Promise.all([first, second, third]);
    expect(received.map((request) => request.body)).toEqual([JSON.stringify(query('a')), JSON.stringify([query('b'), query('c')])]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
  });

  it('sends a refused batch again one operation at a time, so each gets its own status', async () => {
    const fetcher = batchingFetch();
    const answers = await Promise.all([post(fetcher, query('a')), post(fetcher, { query: '{ refuse }' }), post(fetcher, query('c'))]);
    expect(received.map((request) => request.body.startsWith('['))).toEqual([true, false, false, false]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 400, 200]);
  });
});

describe('the gateway’s subgraph data source', () => {
  /** Answers by path, as a subgraph might: JSON with a cache hint, refusals, other errors, bodies that are not JSON objects. */
  const answers: Record<string, [number, string, string, Record<string, string>?]> = {
    '/ok': [200, 'application/json; charset=utf-8', '{"data":{"passport":{"id":"a"}}}', { 'cache-control': 'max-age=60, public' }],
    '/private': [200, 'application/graphql-response+json', '{"data":{"x":1},"errors":[{"message":"partly"}]}', { 'cache-control': 'private, max-age="30"' }],
    '/refused': [400, 'application/json', '{"errors":[{"message":"Variable \\"$v\\" got invalid value"}]}'],
    '/unauthenticated': [401, 'application/json', '{"errors":[{"message":"no"}]}'],
    '/forbidden': [403, 'text/plain', 'forbidden'],
    '/broken': [500, 'text/plain', 'it broke'],
    '/scalar': [200, 'application/json', '42'],
    '/text': [200, 'text/html', '<p>not json</p>'],
  };
  const seen: { path: string; headers: Record<string, unknown>; body: string }[] = [];
  const subgraph = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      // What the subgraph reads: the media type and the credentials (each client adds other headers of its own).
      const headers = Object.fromEntries(['content-type', 'authorization', GATEWAY_CREDENTIAL_HEADER].map((name) => [name, request.headers[name]]));
      seen.push({ path: request.url!, headers, body });
      const [status, type, text, extra] = answers[request.url!]!;
      response.writeHead(status, { 'content-type': type, ...extra });
      response.end(text);
    });
  });
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => subgraph.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(subgraph.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => subgraph.close(() => resolve())));

  /** What the gateway used before: @apollo/gateway's own data source, forwarding the credentials and passing a 400 on as BAD_USER_INPUT. */
  class Reference extends RemoteGraphQLDataSource<{ authorization?: string }> {
    override willSendRequest({ request, context }: { request: { http?: { headers: { set(name: string, value: string): void } } }; context: { authorization?: string } }) {
      if (context.authorization) request.http?.headers.set('authorization', context.authorization);
      request.http?.headers.set(GATEWAY_CREDENTIAL_HEADER, 'gateway-secret');
    }
    override async errorFromResponse(response: Parameters<RemoteGraphQLDataSource['errorFromResponse']>[0]) {
      const error = await super.errorFromResponse(response);
      if (response.status !== 400) return error;
      const body = (error.extensions.response as { body?: { errors?: { message?: string }[] } } | undefined)?.body;
      return new GraphQLError(body?.errors?.[0]?.message ?? error.message, { extensions: { code: 'BAD_USER_INPUT' } });
    }
  }

  /** What one fetch comes to: the answer (without the reference's `http`) or the error, the cache hints given, and the request the subgraph saw. */
  async function outcome(source: GraphQLDataSource<{ authorization?: string }>) {
    seen.length = 0;
    const hints: unknown[] = [];
    const options = {
      kind: 'incoming operation',
      request: { query: 'query Q($v: ID) { passport(id: $v) { id } }', variables: { v: 'a' }, operationName: 'Q' },
      incomingRequestContext: { overallCachePolicy: { restrict: (hint: unknown) => hints.push(hint) } },
      context: { authorization: 'Bearer caller' },
    } as unknown as Parameters<GraphQLDataSource['process']>[0];
    try {
      const { http: _http, ...answer } = (await source.process(options)) as Record<string, unknown>;
      return { answer, hints, seen: [...seen] };
    } catch (error) {
      const { message, extensions } = error as GraphQLError;
      return { error: { graphql: error instanceof GraphQLError, message, extensions: JSON.parse(JSON.stringify(extensions ?? {})) }, hints, seen: [...seen] };
    }
  }

  it('sends, answers, fails and hints as @apollo/gateway’s RemoteGraphQLDataSource does, for every kind of answer', async () => {
    for (const path of Object.keys(answers)) {
      const url = `${base}${path}`;
      const ours = await outcome(new SubgraphDataSource(url, jsonPoster(), 'gateway-secret'));
      const reference = await outcome(new Reference({ url, fetcher: fetch as never }));
      expect(ours, path).toEqual(reference);
    }
    const ok = await outcome(new SubgraphDataSource(`${base}/ok`, jsonPoster(), 'gateway-secret'));
    expect(ok).toMatchObject({ answer: { data: { passport: { id: 'a' } } }, hints: [{ maxAge: 60, scope: 'PUBLIC' }] });
    expect(ok.seen[0]).toMatchObject({ headers: { authorization: 'Bearer caller', [GATEWAY_CREDENTIAL_HEADER]: 'gateway-secret' } });
    expect(JSON.parse(ok.seen[0]!.body)).toEqual({ query: 'query Q($v: ID) { passport(id: $v) { id } }', variables: { v: 'a' }, operationName: 'Q' });
  });
});
