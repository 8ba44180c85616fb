/**
 * A subgraph's port reached directly, as someone who scans the host finds it: the same limits as the
 * gateway (aliases, depth, cost, tokens), refused at once and without touching the database, a
 * bounded body, while requests through the front door go on being answered.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack, startTestStack, TOKENS, type SharedTestStack, type TestStack } from '../support/stack.js';

/** The worker's shared stack: the tests below on it change no data and no setting. */
let platform: SharedTestStack;
/**
 * One stack of its own for the two settings tested at the end (REQUEST_TIMEOUT_MS shortened,
 * SUBGRAPH_SECRET set): neither bears on what the other's tests ask (a request cut off before its
 * body is read; a write without the gateway's credential), so one start serves both.
 */
let configured: TestStack;
const timeoutMs = 2_000;
const secret = 'a-shared-secret-of-the-platform-0123';

async function askSubgraph(query: string): Promise<{ status: number; body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } }> {
  const response = await fetch(platform.stack.subgraphUrls.trust, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  return { status: response.status, body: (await response.json()) as never };
}

beforeAll(async () => {
  [platform, configured] = await Promise.all([sharedTestStack(), startTestStack({ env: { REQUEST_TIMEOUT_MS: String(timeoutMs), SUBGRAPH_SECRET: secret } })]);
});
afterAll(() => configured?.stop());

describe('a subgraph reached directly', () => {
  it('refuses 2,000 aliases of trustGraph before running any, while the facade keeps answering', async () => {
    const aliases = Array.from({ length: 2_000 }, (_, i) => `g${i}: trustGraph { nodes { id } }`).join(' ');
    const [refused, ...others] = await Promise.all([askSubgraph(`{ ${aliases} }`), ...Array.from({ length: 10 }, () => platform.rest('trust', '/graph'))]);
    expect(refused.body.data).toBeUndefined();
    // 12,000 tokens: the token limit is met before the alias limit would be.
    expect(refused.body.errors?.[0]?.message).toMatch(/more that \d+ tokens|alias/i);
    expect(others.map((answer) => answer.status)).toEqual(others.map(() => 200));
    const hundred = await askSubgraph(`{ ${Array.from({ length: 100 }, (_, i) => `g${i}: trustGraph { nodes { id } }`).join(' ')} }`);
    expect(hundred.body.data).toBeUndefined();
    expect(hundred.body.errors?.[0]?.message).toMatch(/alias/i);
  });

  it('refuses an operation of more tokens than the limit allows, and accepts the gateway-sized ones', async () => {
    expect((await askSubgraph(`{ ${'__typename '.repeat(100)} }`)).body.errors).toBeUndefined();
    const huge = await askSubgraph(`{ ${'__typename '.repeat(20_000)} }`);
    expect(huge.body.data).toBeUndefined();
    expect(huge.body.errors?.[0]?.message).toMatch(/token/i);
  });
});

describe("a subgraph's body limit", () => {
  // BODY_LIMIT_BYTES, 1 MiB by default: what the gateway takes from a client; a subgraph takes four times that.
  const limit = 4 * 1024 * 1024;
  const bodyOf = (bytes: number) => {
    const envelope = '{"query":"{ __typename }","variables":{"padding":""}}';
    return envelope.replace('""', `"${'x'.repeat(bytes - envelope.length)}"`);
  };

  it('takes bodies larger than the gateway takes, as entity representations can be, up to four times its limit', async () => {
    const answer = await fetch(platform.stack.subgraphUrls.trust, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodyOf(limit) });
    expect([answer.status, await answer.json()]).toEqual([200, { data: { __typename: 'Query' } }]);
  });

  it("refuses a larger body with 413 in GraphQL's shape (a 36 MiB one used to end a subgraph under its heap limit), and keeps answering", async () => {
    const refused = await fetch(platform.stack.subgraphUrls.trust, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodyOf(36 * 1024 * 1024) });
    expect(refused.status).toBe(413);
    expect(await refused.json()).toEqual({ errors: [{ message: `The request body exceeds ${limit} bytes.`, extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
    expect((await askSubgraph('{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
    expect((await platform.rest('trust', '/graph')).status).toBe(200);
  });
});

describe('a request a subgraph cannot read', () => {
  const send = async (init: RequestInit) => {
    const answer = await fetch(platform.stack.subgraphUrls.trust, init);
    return { status: answer.status, allow: answer.headers.get('allow'), body: (await answer.json()) as { errors: { message: string; extensions: { code: string } }[] } };
  };
  const json = (body: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it("is refused with a 4xx in GraphQL's shape, never a 500: broken or empty JSON, a form, another method", async () => {
    const broken = await send(json('{"query": '));
    expect([broken.status, broken.body.errors[0]!.extensions.code]).toEqual([400, 'MALFORMED_JSON']);
    expect(broken.body.errors[0]!.message).toMatch(/^The body is not valid JSON/);
    const empty = await send(json(''));
    expect([empty.status, empty.body.errors[0]!.extensions.code]).toEqual([400, 'MALFORMED_JSON']);
    const form = await send({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'query=%7B__typename%7D' });
    expect([form.status, form.body.errors[0]!.extensions.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const removal = await send({ method: 'DELETE' });
    expect([removal.status, removal.allow, removal.body.errors[0]!.extensions.code]).toEqual([405, 'GET, POST', 'METHOD_NOT_ALLOWED']);
    expect((await askSubgraph('{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('a client that stops sending', () => {
  // REQUEST_TIMEOUT_MS, shortened here from its 20 s, holds at the subgraphs' ports as at the front doors.
  /** Half a request sent over a socket by a writer (the facade reads no body of a refused caller); what comes back before the server closes it, and when. */
  const halfRequest = (url: string, path: string) =>
    new Promise<{ answer: string; took: number }>((resolve, reject) => {
      const started = Date.now();
      const socket = connect(Number(new URL(url).port), '127.0.0.1', () =>
        socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKENS.writer}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"query"`),
      );
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('close', () => resolve({ answer, took: Date.now() - started }));
      socket.on('error', reject);
      setTimeout(() => socket.destroy(), timeoutMs + 10_000);
    });

  it('is let go with 408 within REQUEST_TIMEOUT_MS by a subgraph, the gateway and the facade alike', async () => {
    const doors = [
      [configured.stack.subgraphUrls.trust, '/'],
      [configured.stack.gateway.graphqlUrl, '/graphql'],
      [configured.base('issuer'), '/issuer/passports'],
    ] as const;
    const answers = await Promise.all(doors.map(([url, path]) => halfRequest(url, path)));
    for (const { answer, took } of answers) {
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      // Within the timeout and the one-second check interval.
      expect(took).toBeLessThan(timeoutMs + 2_000);
    }
  }, 20_000);
});

describe('subgraphs with the gateway credential (SUBGRAPH_SECRET)', () => {
  const mutation = 'mutation { upsertTrustNode(input: { id: "door-root", kind: "root" }) { created } }';
  const post = (headers: Record<string, string>) =>
    fetch(configured.stack.subgraphUrls.trust, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test-writer-token-0123456789', ...headers },
      body: JSON.stringify({ query: mutation }),
    });

  it('refuse a write sent to their port without it, even with a writer token, and take reads', async () => {
    for (const headers of [{}, { 'passport-gateway-credential': 'a-guess-of-the-secret-0123456789' }] as Record<string, string>[]) {
      const refused = await post(headers);
      const body = (await refused.json()) as { data?: unknown; errors: { extensions: { code: string } }[] };
      expect([refused.status, body.errors[0]!.extensions.code, body.data ?? null]).toEqual([403, 'GATEWAY_CREDENTIAL_REQUIRED', null]);
    }
    expect((await configured.graphql('{ trustNode(id: "door-root") { id } }')).data.trustNode).toBeNull();
    const read = await fetch(configured.stack.subgraphUrls.trust, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ trustGraph { nodes { id } } }' }),
    });
    expect(read.status).toBe(200);
  });

  it('take the same write through the gateway and the REST facade, which send it', async () => {
    expect((await configured.graphql(mutation, {}, 'admin')).data.upsertTrustNode.created).toBe(true);
    const rest = await configured.rest('trust', '/nodes', { body: { id: 'door-issuer', kind: 'issuer' }, as: 'admin' });
    expect(rest.status, rest.text).toBe(201);
  });
});
