/**
 * The facade's HTTP layer as a client meets it, over real HTTP with no database: a route table shaped
 * like the registry's (fixed collections beside catch-all `/{id}` paths) in front of a stand-in
 * gateway that says which operation it was asked, with which variables. What is asserted is what a
 * client sees: the route that answered, 404s and 405s with Allow, problem bodies for refusals the
 * framework makes (413, 415, 431, 408), duplicate JSON members refused, and the OpenAPI document.
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokens, hashToken } from '../../lib/auth/tokens.js';
import type { Route, ServiceRoutes } from '../../rest-facade/route-table.js';
import { duplicateMember } from '../../lib/http/json-body.js';
import { isWellFormedHost } from '../../lib/http/server-options.js';
import { startFacade, type RunningFacade } from '../../rest-facade/server.js';

const route = (method: Route['method'], path: string, extra: Partial<Route> = {}): Route => ({
  method,
  path,
  summary: `${method} ${path}`,
  // A GraphQL operation, as every route's is (the facade names refused writes by its field), that says which route asked.
  operation: `query { echo(route: "${method} ${path}") }`,
  variables: (request) => ({ ...request }),
  result: (data) => ({ body: data.echo }),
  responses: { 200: { description: 'The echo.' } },
  ...extra,
});

const registryLike: ServiceRoutes = {
  service: 'registry',
  title: 'Registry stand-in',
  routes: [
    route('GET', '/{id}'),
    route('GET', '/{id}/supersession'),
    route('POST', '/{id}/versions', { role: 'writer', body: { type: 'object', properties: { version: { type: 'integer' }, note: { type: 'string' }, document: { type: 'object' } } } }),
    route('GET', '/', { query: { limit: { type: 'integer', description: 'Page size.', minimum: 1, maximum: 500 }, at: { type: 'date-time', description: 'Instant.' } } }),
    route('POST', '/', { role: 'writer', body: { type: 'object', properties: { id: { type: 'string' } } } }),
    route('GET', '/healthz'),
    route('POST', '/admin/seed', { role: 'admin' }),
    route('GET', '/items'),
    route('GET', '/items/{id}'),
  ],
};

const writer = 'stand-in-writer-token-0123456789';
const tokens = new AccessTokens([
  { name: 'writer', role: 'writer', sha256: hashToken(writer) },
  { name: 'admin', role: 'admin', sha256: hashToken('stand-in-admin-token-0123456789') },
]);

/** Short, so that the slow-client test takes seconds; the default is 20 s. */
const REQUEST_TIMEOUT_MS = 2_000;

let gateway: Server;
let facade: RunningFacade;
let base: string;
const asked: { operation: string; variables: unknown }[] = [];

beforeAll(async () => {
  gateway = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      const { query, variables } = JSON.parse(text) as { query: string; variables: unknown };
      const operation = /echo\(route: "([^"]*)"\)/.exec(query)?.[1] ?? query;
      asked.push({ operation, variables });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ data: { echo: { operation, ...(variables as object) } } }));
    });
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  const gatewayUrl = `http://127.0.0.1:${(gateway.address() as { port: number }).port}/graphql`;
  facade = await startFacade({
    host: '127.0.0.1',
    mounts: [{ service: 'registry', port: 0, prefix: '/registry' }],
    tables: { registry: registryLike } as never,
    gatewayUrl,
    tokens,
    bodyLimit: 1024,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
  base = facade.baseUrls.registry;
});
afterAll(async () => {
  await facade?.stop();
  await new Promise((resolve) => gateway?.close(resolve));
});

const get = async (path: string, init: RequestInit = {}) => {
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
};

describe('routing', () => {
  it('lets fixed paths win over /{id} and decodes parameters', async () => {
    expect((await get('/healthz')).body.operation).toBe('GET /healthz');
    expect((await get('/items')).body.operation).toBe('GET /items');
    expect((await get('/battery-model')).body).toMatchObject({ operation: 'GET /{id}', params: { id: 'battery-model' } });
    expect((await get('/items/supersession')).body).toMatchObject({ operation: 'GET /items/{id}', params: { id: 'supersession' } });
    expect((await get('/x/supersession')).body).toMatchObject({ operation: 'GET /{id}/supersession', params: { id: 'x' } });
    expect((await get('/items/a%20b')).body.params).toEqual({ id: 'a b' });
    expect((await get('/items/')).body.operation).toBe('GET /items');
  });

  it('answers 405 with the methods of the path, HEAD beside GET, and 404 where no path fits', async () => {
    const post = await get('/healthz', { method: 'POST' });
    expect([post.status, post.headers.get('allow'), post.headers.get('content-type'), post.body.code]).toEqual([405, 'GET, HEAD', 'application/problem+json', 'METHOD_NOT_ALLOWED']);
    const remove = await get('/', { method: 'DELETE' });
    expect([remove.status, remove.headers.get('allow')]).toEqual([405, 'GET, POST, HEAD']);
    expect((await get('/admin/seed')).headers.get('allow')).toBe('POST');
    expect((await get('/admin/seed', { method: 'PROPFIND' })).status).toBe(405);
    const head = await fetch(`${base}/healthz`, { method: 'HEAD' });
    expect([head.status, Number(head.headers.get('content-length')) > 0, await head.text()]).toEqual([200, true, '']);
    const missing = await get('/a/b/c/d');
    expect([missing.status, missing.body.code, missing.body.detail, missing.body.instance]).toEqual([404, 'NOT_FOUND', 'The registry service has no resource at /a/b/c/d.', '/registry/a/b/c/d']);
    expect((await get('/items/%E0%A4%A')).body.code).toBe('MALFORMED_PATH');
  });
});

describe('query strings', () => {
  it('take declared parameters once each, of their type, and refuse the rest with INVALID_QUERY', async () => {
    expect((await get('/?limit=5&at=2026-01-31T12:00:00Z')).body.query).toEqual({ limit: 5, at: '2026-01-31T12:00:00Z' });
    const refusals = await Promise.all(['/?limit=0', '/?limit=x', '/?limit=1&limit=2', '/?at=yesterday', '/?colour=red'].map((path) => get(path)));
    expect(refusals.map(({ status, body }) => `${status} ${body.code} ${body.detail}`)).toEqual([
      '400 INVALID_QUERY limit must be at least 1',
      '400 INVALID_QUERY limit must be an integer',
      '400 INVALID_QUERY limit may be given once',
      '400 INVALID_QUERY at must be an RFC 3339 date-time within years 0001 to 9999 in UTC, e.g. 2026-01-31T12:00:00Z',
      '400 INVALID_QUERY unknown query parameter colour; this path takes limit, at',
    ]);
  });
});

describe('bodies', () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    get(path, { method: 'POST', body, headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json', ...headers } });

  it('are checked at the top level against the route schema: declared members, scalar ones of their type', async () => {
    expect((await post('/m/versions', '{"version": 2, "document": {"deep": [1]}}')).body.body).toEqual({ version: 2, document: { deep: [1] } });
    expect((await post('/m/versions', '{"version": "2"}')).body).toMatchObject({ code: 'INVALID_REQUEST', detail: 'version must be an integer.' });
    expect((await post('/m/versions', '{"version": 1e400}')).body.detail).toBe('version must be an integer.');
    expect((await post('/m/versions', '{"colour": "red"}')).body.detail).toBe('Unknown member colour; the body takes version, note, document.');
    // Deeper members and bodies that are not objects are the service's to judge.
    expect((await post('/m/versions', '{"document": "text"}')).status).toBe(200);
    expect((await post('/m/versions', '[1]')).status).toBe(200);
  });

  it('name a member once: a duplicate, at any depth and however escaped, is 400 MALFORMED_JSON', async () => {
    const top = await post('/m/versions', '{"version": 1, "version": 2}');
    expect([top.status, top.body.code, top.body.detail]).toEqual([400, 'MALFORMED_JSON', expect.stringContaining('"version" in the body')]);
    expect((await post('/m/versions', '{"document": {"a": {"x": 1, "\\u0078": 2}}}')).body.detail).toContain('"x" in /document/a');
    expect(duplicateMember('[{"a": 1}, {"a": 2}]')).toBeUndefined();
    // Quotes, colons and braces inside strings are no members; a name is compared decoded.
    expect(duplicateMember('{"q": "{\\"q\\": 1, \\"q\\": 2}", "a\\\\": ":", "a\\u005c": 1}')).toBe('"a\\" in the body');
    expect(duplicateMember('{"q": "x\\\\", "r": "\\"q\\":", "s": {"q": 1}}')).toBeUndefined();
    expect(duplicateMember('{"query": "query { a }", "variables": {"ids": ["a", "a"], "x": {"id": 1}}, "id": 2}')).toBeUndefined();
    expect(duplicateMember('{"variables": {"x": [{"k": 1,\n "k" :2}]}}')).toBe('"k" in /variables/x/0');
    expect(asked.filter(({ variables }) => JSON.stringify(variables).includes('"version":2,"version"'))).toEqual([]);
  });

  it('are JSON or refused: 415 with Accept-Post, 413 over the limit, 400 blank or broken, also where the route takes none', async () => {
    const text = await post('/', 'id=x', { 'content-type': 'text/plain' });
    expect([text.status, text.body.code, text.headers.get('accept-post')]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE', 'application/json']);
    const large = await post('/', JSON.stringify({ id: 'x'.repeat(2000) }));
    expect([large.status, large.body.code, large.body.limit]).toEqual([413, 'BODY_TOO_LARGE', 1024]);
    expect((await post('/', '  ')).body.code).toBe('MALFORMED_JSON');
    expect((await post('/', '{"id": ')).body.code).toBe('MALFORMED_JSON');
    expect((await post('/', '{"id": "x"}', { 'content-type': 'application/merge-patch+json' })).status).toBe(200);
    const seed = (body: string, contentType?: string) =>
      get('/admin/seed', { method: 'POST', body, headers: { authorization: 'Bearer stand-in-admin-token-0123456789', ...(contentType ? { 'content-type': contentType } : {}) } });
    expect((await seed('', 'application/json')).status).toBe(200);
    expect((await seed('{"broken', 'application/json')).body.code).toBe('MALFORMED_JSON');
  });

  it('are not read for a refused caller: 401 with a Bearer challenge comes first', async () => {
    const refused = await get('/', { method: 'POST', body: '{"broken', headers: { 'content-type': 'application/json' } });
    expect([refused.status, refused.body.code, refused.headers.get('www-authenticate')]).toEqual([401, 'MISSING_TOKEN', 'Bearer realm="passport"']);
  });
});

describe('connections', () => {
  /** Writes `request` raw and reads until the server answers or closes. */
  const raw = (request: string, { wait = 5_000 } = {}) =>
    new Promise<string>((resolve, reject) => {
      const { port } = new URL(base);
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
      setTimeout(() => socket.destroy(), wait);
    });

  it('answer headers too large with 431 problem+json', async () => {
    const answer = await raw(`GET /registry/healthz HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toContain('content-type: application/problem+json');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).code).toBe('HEADERS_TOO_LARGE');
  });

  it(
    'let a client that stops sending go with 408 within the request timeout',
    async () => {
      const started = Date.now();
      const answer = await raw(`POST /registry/ HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${writer}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"id"`, {
        wait: REQUEST_TIMEOUT_MS + 10_000,
      });
      const took = Date.now() - started;
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(took).toBeLessThan(REQUEST_TIMEOUT_MS + 2_000);
    },
    REQUEST_TIMEOUT_MS + 15_000,
  );
});

describe('Host headers', () => {
  it('are parsed once while they repeat (every request of a connection names the same), and a malformed one is refused every time', () => {
    const RealUrl = globalThis.URL;
    let parsed = 0;
    globalThis.URL = class extends RealUrl {
      constructor(...args: ConstructorParameters<typeof URL>) {
        super(...args);
        parsed += 1;
      }
    };
    try {
      const answers = ['api.example:8443', 'api.example:8443', 'api.example:8443', 'a b', 'a b', 'x/y', 'api.example:8443', '[::1]:80', '[::1]:80'].map(isWellFormedHost);
      expect(answers).toEqual([true, true, true, false, false, false, true, true, true]);
      // Parsed: api.example:8443 once, x/y (a URL, though not a host alone), [::1]:80 once; `a b` fails inside the parse.
      expect(parsed).toBe(3);
      // Two servers of one process, their requests interleaved: each Host parsed once.
      expect(['127.0.0.1:4001', '127.0.0.1:4002', '127.0.0.1:4001', '127.0.0.1:4002'].map(isWellFormedHost)).toEqual([true, true, true, true]);
      expect(parsed).toBe(5);
    } finally {
      globalThis.URL = RealUrl;
    }
  });
});

describe('problem types', () => {
  it('link to the row of their code on the page the facade serves', async () => {
    const missing = await get('/a/b/c/d');
    const type = new URL(missing.body.type);
    expect([type.origin, type.pathname, type.hash]).toEqual([new URL(base).origin, '/docs/problems', '#not-found']);
    const page = await fetch(type);
    expect([page.status, page.headers.get('content-type'), page.headers.get('content-security-policy')]).toEqual([200, 'text/html; charset=utf-8', "default-src 'none'"]);
    const html = await page.text();
    for (const code of ['not-found', 'invalid-query', 'malformed-json', 'method-not-allowed', 'headers-too-large']) expect(html).toContain(`<tr id="${code}">`);
  });
});

describe('the OpenAPI document', () => {
  it('is made from the same route schemas: operations, parameters, closed bodies, problems, no 405 stand-ins', async () => {
    const doc = (await (await fetch(`${new URL(base).origin}/docs/registry/openapi.json`)).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: base }]);
    expect(Object.keys(doc.paths).sort()).toEqual(['/', '/admin/seed', '/healthz', '/items', '/items/{id}', '/{id}', '/{id}/supersession', '/{id}/versions']);
    expect(Object.keys(doc.paths['/']).sort()).toEqual(['get', 'post']);
    expect(doc.paths['/{id}/versions'].post.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
    expect(doc.paths['/'].get.parameters.map((parameter: any) => `${parameter.in} ${parameter.name}`)).toEqual(['query limit', 'query at']);
    expect(doc.paths['/{id}'].get.parameters[0]).toMatchObject({ in: 'path', name: 'id', required: true });
    expect(doc.paths['/'].post.responses['401'].content['application/problem+json'].schema.$ref).toBe('#/components/schemas/Problem');
    expect(doc.components.schemas.Problem.required).toEqual(['type', 'title', 'status', 'code', 'instance']);
    expect(doc.paths['/'].post['x-graphql-operation']).toBe('query { echo(route: "POST /") }');
  });
});
