/**
 * Registry records end to end, through the REST facade and the federated graph: creation, fixed
 * paths against /{id}, versions with optimistic concurrency and races, supersession, listing,
 * authorisation, the admin log, bad inputs, and entity references.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;
beforeAll(async () => {
  platform = await startTestStack();
});
afterAll(() => platform?.stop());

const rest = (path: string, init?: Parameters<TestStack['rest']>[2]) => platform.rest('registry', path, init);
const create = (kind: string, id: string, body: Record<string, unknown> = { label: id }, extra: Record<string, unknown> = {}) => rest('/', { body: { kind, id, body, ...extra }, as: 'writer' });
const addVersion = (path: string, expectedVersion: unknown, body: unknown = { label: 'changed' }, extra: Record<string, unknown> = {}) =>
  rest(`${path}/versions`, { body: { expected_version: expectedVersion, body, ...extra }, as: 'writer' });

/** Rows in the registry's tables, to show that a refused request wrote nothing. */
async function stored() {
  const { rows } = await sql<{ records: number; versions: number }>(
    platform.databaseUrl,
    'SELECT (SELECT count(*) FROM registry.record)::int AS records, (SELECT count(*) FROM registry.record_version)::int AS versions',
  );
  return rows[0]!;
}

/** The registry table of the specification (§4), method and path. */
const SPECIFIED = [
  'GET /',
  'POST /',
  'GET /admin/log',
  'POST /admin/seed',
  'GET /applicability',
  'GET /cross-register-mappings',
  'GET /cross-register-mappings/{id}',
  'GET /cross-register-mappings/{id}/supersession',
  'POST /cross-register-mappings/{id}/versions',
  'GET /healthz',
  'GET /items',
  'GET /items/{id}',
  'GET /items/{id}/supersession',
  'POST /items/{id}/versions',
  'GET /models',
  'GET /models/{id}',
  'POST /models/{id}/validate',
  'GET /protocol-bindings',
  'GET /protocol-bindings/{id}',
  'GET /schemas/profile-manifest',
  'GET /services',
  'GET /services/{id}',
  'GET /services/{id}/supersession',
  'POST /services/{id}/versions',
  'GET /verification-mechanisms',
  'GET /verification-mechanisms/{id}',
  'GET /{id}',
  'GET /{id}/supersession',
  'POST /{id}/versions',
];

describe('the contract', () => {
  it("serves exactly the paths of the specification's registry table, in discovery and OpenAPI", async () => {
    const discovery = await rest('/');
    const endpoints = discovery.body.endpoints.map((endpoint: { method: string; path: string }) => `${endpoint.method} ${endpoint.path}`);
    expect([...endpoints].sort()).toEqual([...SPECIFIED].sort());
    const openapi = (await (await fetch(discovery.body.openapi)).json()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(openapi.paths).flatMap(([path, operations]) =>
      Object.keys(operations)
        .filter((key) => ['get', 'post'].includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual([...SPECIFIED].sort());
  });
});

describe('creating and reading records', () => {
  it('creates a record of the kind named in the body and serves it at its collection', async () => {
    const created = await create('item', 'widget.a', { label: 'Widget A', zeta: 1, alpha: 2 });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${platform.base('registry')}/items/widget.a`);
    expect(created.body).toMatchObject({ id: 'widget.a', kind: 'item', version: 1, status: 'active', supersedes: null, superseded_by: null, current: true, current_version: 1 });
    // The body comes back as it was given, members in their order.
    expect(Object.keys(created.body.body)).toEqual(['label', 'zeta', 'alpha']);

    const read = await rest('/items/widget.a');
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    // An item is not a generic record: the root does not serve it, nor does another collection.
    expect((await rest('/widget.a')).status).toBe(404);
    expect((await rest('/services/widget.a')).status).toBe(404);
    expect((await rest('/items/no-such-item')).body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('tags each version, and answers If-None-Match with 304 until a new version is current', async () => {
    await create('item', 'tagged', { label: 'v1' });
    const first = await rest('/items/tagged');
    expect(first.headers.get('etag')).toBe('"tagged@1"');
    const unchanged = await rest('/items/tagged', { headers: { 'if-none-match': '"tagged@1"' } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.get('etag')).toBe('"tagged@1"');
    const appended = await rest('/items/tagged/versions', { body: { expected_version: 1, body: { label: 'v2' } }, as: 'writer' });
    expect(appended.status).toBe(201);
    const changed = await rest('/items/tagged', { headers: { 'if-none-match': '"tagged@1"' } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).toBe('"tagged@2"');
    expect(changed.body.body).toEqual({ label: 'v2' });
  });

  it('takes null for the optional members: the default status, an open window', async () => {
    const created = await create('item', 'nulls', { label: 'n' }, { status: null, effective_from: '2026-01-01T00:00:00+01:00', effective_to: null });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'active', effective_from: '2025-12-31T23:00:00.000Z', effective_to: null });
  });

  it('accepts collection names and hyphenated names as kinds', async () => {
    expect((await create('services', 'svc-by-collection')).body.kind).toBe('service');
    expect((await create('cross-register-mapping', 'map-by-hyphen')).body.kind).toBe('cross_register_mapping');
    expect((await rest('/cross-register-mappings/map-by-hyphen')).status).toBe(200);
  });

  it('keeps ids unique across kinds: a taken id is 409 whatever the kind', async () => {
    await create('generic', 'shared-id');
    const again = await create('item', 'shared-id');
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'RECORD_EXISTS', kind: 'generic' });
    expect((await create('generic', 'shared-id')).status).toBe(409);
  });

  it('refuses generic ids that a fixed path would shadow, and fixed paths keep answering', async () => {
    const before = await stored();
    for (const id of ['healthz', 'items', 'models', 'services', 'cross-register-mappings', 'protocol-bindings', 'verification-mechanisms', 'admin', 'schemas', 'applicability']) {
      const refused = await create('generic', id);
      expect(refused.status, id).toBe(422);
      expect(refused.body.code).toBe('RESERVED_ID');
    }
    expect(await stored()).toEqual(before);
    // Inside a collection these names shadow nothing.
    expect((await create('item', 'healthz')).status).toBe(201);
    expect((await rest('/items/healthz')).body.id).toBe('healthz');
    const health = await rest('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ service: 'registry', status: 'ok' });
    expect((await rest('/items')).body).toHaveProperty('records');
    expect((await rest('/admin/log', { as: 'admin' })).body).toHaveProperty('entries');
  });

  it('serves generic records at the root, with versions and supersession', async () => {
    expect((await create('generic', 'note-1', { text: 'first' })).status).toBe(201);
    expect((await rest('/note-1')).body).toMatchObject({ id: 'note-1', kind: 'generic', version: 1 });
    const second = await addVersion('/note-1', 1, { text: 'second' });
    expect(second.status).toBe(201);
    expect(second.headers.get('location')).toBe(`${platform.base('registry')}/note-1?version=2`);
    expect((await rest('/note-1')).body.body).toEqual({ text: 'second' });
    expect((await rest('/note-1?version=1')).body.body).toEqual({ text: 'first' });
    expect((await rest('/note-1/supersession')).body.current).toBe(2);
    // A record named like a path word is still reached through /{id}.
    await create('generic', 'supersession');
    expect((await rest('/supersession')).body.id).toBe('supersession');
    expect((await rest('/supersession/supersession')).body.versions).toHaveLength(1);
  });
});

describe('versions', () => {
  it.each([
    ['item', '/items'],
    ['service', '/services'],
    ['cross_register_mapping', '/cross-register-mappings'],
    ['generic', ''],
  ])('adds versions to a %s record, keeps every old one and reads the chain', async (kind, collection) => {
    const id = `chain-${kind.replaceAll('_', '-')}`;
    const path = `${collection}/${id}`;
    await create(kind, id, { n: 1 }, { status: 'draft' });
    expect((await addVersion(path, 1, { n: 2 }, { status: 'active' })).status).toBe(201);
    const third = await addVersion(path, 2, { n: 3 });
    expect(third.body).toMatchObject({ version: 3, status: 'active', supersedes: 2, current: true });

    const old = await rest(`${path}?version=1`);
    expect(old.body).toMatchObject({ version: 1, status: 'draft', body: { n: 1 }, supersedes: null, superseded_by: 2, current: false, current_version: 3 });
    expect((await rest(`${path}?version=2`)).body).toMatchObject({ version: 2, supersedes: 1, superseded_by: 3, current: false });
    expect((await rest(`${path}?version=4`)).status).toBe(404);

    const chain = await rest(`${path}/supersession`);
    expect(chain.status).toBe(200);
    expect(chain.body).toMatchObject({ id, kind, current: 3 });
    expect(chain.body.versions.map((link: any) => [link.version, link.predecessor, link.successor, link.current, link.status])).toEqual([
      [1, null, 2, false, 'draft'],
      [2, 1, 3, false, 'active'],
      [3, 2, null, true, 'active'],
    ]);
  });

  it('answers a stale expected version with 409 and writes nothing', async () => {
    await create('item', 'stale.one');
    await addVersion('/items/stale.one', 1);
    const before = await stored();
    for (const expected of [1, 0, 7]) {
      const stale = await addVersion('/items/stale.one', expected, { label: 'lost update' });
      expect(stale.status, String(expected)).toBe(409);
      expect(stale.body.code).toBe('STALE_VERSION');
    }
    expect(await stored()).toEqual(before);
    expect((await rest('/items/stale.one')).body).toMatchObject({ version: 2, body: { label: 'changed' } });
  });

  it('lets exactly one of concurrent writers on the same base version win', async () => {
    await create('service', 'raced');
    for (let round = 1; round <= 3; round++) {
      const writers = await Promise.all(Array.from({ length: 8 }, (_, i) => addVersion('/services/raced', round, { writer: i, round })));
      const statuses = writers.map((writer) => writer.status).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
      expect(writers.filter((writer) => writer.status === 409).every((writer) => writer.body.code === 'STALE_VERSION')).toBe(true);
      const winner = writers.find((writer) => writer.status === 201)!;
      expect((await rest('/services/raced')).body.body).toEqual(winner.body.body);
    }
    const chain = await rest('/services/raced/supersession');
    expect(chain.body.versions.map((link: any) => link.version)).toEqual([1, 2, 3, 4]);
    const { rows } = await sql(platform.databaseUrl, `SELECT count(*)::int AS n FROM registry.record_version WHERE id = 'raced'`);
    expect(rows[0]!.n).toBe(4);
  });

  it('lets exactly one of concurrent creators of one id win', async () => {
    const creators = await Promise.all(Array.from({ length: 6 }, (_, i) => create(i % 2 ? 'item' : 'generic', 'contested', { creator: i })));
    expect(creators.map((creator) => creator.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const { rows } = await sql(platform.databaseUrl, `SELECT count(*)::int AS n FROM registry.record_version WHERE id = 'contested'`);
    expect(rows[0]!.n).toBe(1);
  });

  it('follows the status rules: a withdrawn record takes no further version', async () => {
    await create('item', 'to-withdraw');
    expect((await addVersion('/items/to-withdraw', 1, { label: 'gone' }, { status: 'withdrawn' })).body.status).toBe('withdrawn');
    const after = await addVersion('/items/to-withdraw', 2, { label: 'back' }, { status: 'active' });
    expect(after.status).toBe(409);
    expect(after.body.code).toBe('ILLEGAL_STATUS_TRANSITION');
  });

  it('offers no versions path for models, protocol bindings and verification mechanisms', async () => {
    const model = await create('model', 'no-versions', { title: 'Tiny', schema: { type: 'object' } });
    expect(model.status).toBe(201);
    expect((await addVersion('/models/no-versions', 1)).status).toBe(404);
    expect((await rest('/models/no-versions/supersession')).status).toBe(404);
    const graph = await platform.graphql(
      'mutation($input: RegistryVersionInput!) { appendRegistryRecordVersion(id: "no-versions", input: $input) { version } }',
      { input: { expectedVersion: 1, body: { title: 'Tiny 2', schema: { type: 'object' } } } },
      'writer',
    );
    expect(graph.errors?.[0].extensions).toMatchObject({ code: 'NOT_VERSIONABLE', problem: { status: 405 } });
    // A model is not a generic record, so the root's versions path does not reach it either.
    expect((await addVersion('/no-versions', 1)).status).toBe(404);
  });
});

describe('lists', () => {
  beforeAll(async () => {
    for (const letter of 'abcdefg') await create('item', `list.${letter}`, { letter }, letter === 'c' ? { status: 'draft' } : {});
    await addVersion('/items/list.e', 1, { letter: 'e' }, { status: 'deprecated' });
  });

  it('pages through a collection in id order with cursors and Link headers', async () => {
    const seen: string[] = [];
    let url: string | null = `${platform.base('registry')}/items?id_prefix=list.&limit=3`;
    let pages = 0;
    while (url) {
      const response: Response = await fetch(url);
      const page = (await response.json()) as { records: { id: string; current: boolean }[]; next_cursor: string | null };
      expect(response.status).toBe(200);
      seen.push(...page.records.map((record) => record.id));
      expect(page.records.every((record) => record.current)).toBe(true);
      const link = response.headers.get('link');
      expect(Boolean(link)).toBe(page.next_cursor !== null);
      // The Link header carries the cursor; the filters go with it.
      url = page.next_cursor ? `${platform.base('registry')}/items?id_prefix=list.&limit=3&cursor=${page.next_cursor}` : null;
      if (link) expect(link).toContain(`cursor=${page.next_cursor}`);
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(['list.a', 'list.b', 'list.c', 'list.d', 'list.e', 'list.f', 'list.g']);
  });

  it('filters by status, id prefix and update time', async () => {
    const ids = async (query: string) => (await rest(`/items?${query}`)).body.records.map((record: { id: string }) => record.id);
    expect(await ids('id_prefix=list.&status=draft')).toEqual(['list.c']);
    expect(await ids('id_prefix=list.&status=draft,deprecated')).toEqual(['list.c', 'list.e']);
    expect((await rest('/items?id_prefix=list.e')).body.records[0]).toMatchObject({ version: 2, status: 'deprecated' });
    expect(await ids('id_prefix=list.&updated_since=2999-01-01T00:00:00Z')).toEqual([]);
    expect((await ids('id_prefix=list.&updated_since=2000-01-01T00:00:00Z')).length).toBe(7);
    expect(await ids('id_prefix=list.zz')).toEqual([]);
  });

  it('lists each collection only with its own kind', async () => {
    const services = (await rest('/services?limit=500')).body.records;
    expect(services.length).toBeGreaterThan(0);
    expect(services.every((record: { kind: string }) => record.kind === 'service')).toBe(true);
    for (const collection of ['models', 'protocol-bindings', 'verification-mechanisms', 'cross-register-mappings']) {
      expect((await rest(`/${collection}`)).status).toBe(200);
    }
  });

  it('refuses malformed list parameters with 400', async () => {
    for (const query of ['limit=0', 'limit=501', 'limit=ten', 'cursor=not-a-cursor', 'status=retired', 'id_prefix=UPPER', 'updated_since=yesterday', 'colour=red']) {
      const response = await rest(`/items?${query}`);
      expect(response.status, query).toBe(400);
      expect(['INVALID_QUERY'], query).toContain(response.body.code);
    }
  });
});

describe('authorisation and the admin log', () => {
  it('needs a writer token for writes and an admin token for the seed', async () => {
    const before = await stored();
    expect((await rest('/', { body: { kind: 'item', id: 'anon', body: {} } })).status).toBe(401);
    expect((await rest('/', { body: { kind: 'item', id: 'anon', body: {} }, headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await rest('/items/widget.a/versions', { body: { expected_version: 1, body: {} } })).status).toBe(401);
    expect((await rest('/widget.a/versions', { body: { expected_version: 1, body: {} } })).status).toBe(401);
    expect((await rest('/models/any/validate', { body: {} })).status).toBe(401);
    expect((await rest('/admin/seed', { method: 'POST' })).status).toBe(401);
    expect((await rest('/admin/seed', { method: 'POST', as: 'writer' })).status).toBe(403);
    expect(await stored()).toEqual(before);
    // The subgraph checks too, for callers of the graph.
    const graph = await platform.graphql('mutation { seedRegistry { records } }', {}, 'writer');
    expect(graph.errors?.[0].extensions.code).toBe('INSUFFICIENT_ROLE');
    const anonymous = await platform.graphql('mutation { createRegistryRecord(input: { kind: "item", id: "anon", body: {} }) { id } }');
    expect(anonymous.errors?.[0].extensions.code).toBe('MISSING_TOKEN');
    expect(await stored()).toEqual(before);
  });

  it('writes every write to the admin log with its outcome', async () => {
    await create('item', 'logged');
    await addVersion('/items/logged', 5);
    const log = await rest('/admin/log?limit=5', { as: 'admin' });
    const [stale, created] = log.body.entries;
    expect(stale).toMatchObject({ action: 'appendRegistryRecordVersion', target: 'logged', outcome: 'STALE_VERSION', actor: 'test-writer' });
    expect(created).toMatchObject({ action: 'createRegistryRecord', target: 'logged', outcome: 'ok' });
  });
});

describe('bad input', () => {
  it('is refused with a 4xx problem and changes nothing', async () => {
    await create('item', 'target');
    const before = await stored();
    const cases: [string, string, unknown, number][] = [
      ['POST', '/', [], 400],
      ['POST', '/', 'text', 400],
      ['POST', '/', null, 400],
      ['POST', '/', { kind: 'item', id: 'x' }, 400],
      ['POST', '/', { kind: 'item', id: 'x', body: {}, colour: 'red' }, 400],
      ['POST', '/', { kind: 'planet', id: 'x', body: {} }, 400],
      ['POST', '/', { kind: 'item', id: 'Upper', body: {} }, 400],
      ['POST', '/', { kind: 'item', id: 'a'.repeat(129), body: {} }, 400],
      ['POST', '/', { kind: 'item', id: '..', body: {} }, 400],
      ['POST', '/', { kind: 'item', id: 7, body: {} }, 400],
      ['POST', '/', { kind: 'item', id: null, body: {} }, 400],
      ['POST', '/', { kind: 'item', id: 'a\u0000b', body: {} }, 400],
      ['POST', '/', { kind: 'item\u0000', id: 'x', body: {} }, 400],
      ['POST', '/', { kind: 'item', id: 'x', body: {}, status: 1 }, 400],
      ['POST', '/', { kind: 'item', id: 'x', body: [1, 2] }, 400],
      ['POST', '/', { kind: 'item', id: 'x', body: 'text' }, 400],
      ['POST', '/', { kind: 'item', id: 'x', body: {}, status: 'retired' }, 422],
      ['POST', '/', { kind: 'item', id: 'x', body: {}, effective_from: 'soon' }, 422],
      ['POST', '/', { kind: 'item', id: 'x', body: {}, effective_from: '2030-01-01T00:00:00Z', effective_to: '2020-01-01T00:00:00Z' }, 422],
      ['POST', '/', { kind: 'model', id: 'x', body: { title: 'No schema' } }, 422],
      ['POST', '/items/target/versions', {}, 400],
      ['POST', '/items/target/versions', { expected_version: '1', body: {} }, 400],
      ['POST', '/items/target/versions', { expected_version: 1.5, body: {} }, 400],
      ['POST', '/items/target/versions', { expected_version: -1, body: {} }, 400],
      ['POST', '/items/target/versions', { expected_version: 2 ** 40, body: {} }, 400],
      ['POST', '/items/target/versions', { expected_version: 1, body: null }, 400],
      ['POST', '/items/target/versions', { expected_version: 1, body: {}, status: 'gone' }, 422],
      ['POST', '/items/absent/versions', { expected_version: 1, body: {} }, 404],
      ['POST', '/services/target/versions', { expected_version: 1, body: {} }, 404],
      ['GET', '/items/target?version=0', undefined, 400],
      ['GET', '/items/target?version=x', undefined, 400],
      ['GET', '/items/target?version=99999999999', undefined, 400],
      ['GET', '/items/target?at=now', undefined, 400],
      ['GET', `/items/${'z'.repeat(5000)}`, undefined, 404],
      ['GET', '/items/%E0%A4%A', undefined, 400],
      ['GET', '/items/%00', undefined, 404],
      ['GET', '/%00', undefined, 404],
      ['GET', '/a%00b/supersession', undefined, 404],
      ['POST', '/%00/versions', { expected_version: 1, body: {} }, 404],
      ['POST', '/models/%00/validate', {}, 404],
      ['POST', '/', { kind: 'item', id: 'x', body: JSON.parse(`${'{"a":'.repeat(100)}1${'}'.repeat(100)}`) }, 422],
      ['DELETE', '/items/target', undefined, 405],
    ];
    for (const [method, path, body, status] of cases) {
      const response = await rest(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }), as: 'writer' });
      expect(response.status, `${method} ${path} ${JSON.stringify(body)}: ${response.text}`).toBe(status);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(response.body.code).toMatch(/^[A-Z_]+$/);
    }
    const wrongType = await rest('/', { body: '{"kind":"item"', as: 'writer' });
    expect(wrongType.body.code).toBe('MALFORMED_JSON');
    const notJson = await rest('/', { body: 'kind=item', headers: { 'content-type': 'text/plain' }, as: 'writer' });
    expect(notJson.status).toBe(415);
    expect(await stored()).toEqual(before);
  });
});

describe('in the graph', () => {
  it('answers registryRecord by id and version, null when unknown', async () => {
    const query = 'query($id: ID!, $version: Int) { registryRecord(id: $id, version: $version) { id version kind status current supersededBy body } }';
    const current = await platform.graphql(query, { id: 'note-1' });
    expect(current.data.registryRecord).toMatchObject({ id: 'note-1', version: 2, kind: 'generic', current: true, supersededBy: null });
    expect((await platform.graphql(query, { id: 'note-1', version: 1 })).data.registryRecord).toMatchObject({ version: 1, current: false, supersededBy: 2 });
    expect((await platform.graphql(query, { id: 'nothing-here' })).data.registryRecord).toBeNull();
    expect((await platform.graphql(query, { id: 'note-1', version: 9 })).data.registryRecord).toBeNull();
  });

  it('resolves RegistryRecord references by id and version, in one batch', async () => {
    const representations = [
      { __typename: 'RegistryRecord', id: 'note-1', version: 1 },
      { __typename: 'RegistryRecord', id: 'note-1', version: 2 },
      { __typename: 'RegistryRecord', id: 'widget.a', version: 1 },
      { __typename: 'RegistryRecord', id: 'note-1', version: 3 },
      { __typename: 'RegistryRecord', id: 'missing', version: 1 },
    ];
    const response = await fetch(platform.stack.subgraphUrls.registry, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on RegistryRecord { id version kind body current } } }',
        variables: { r: representations },
      }),
    });
    const result = (await response.json()) as { data: { _entities: ({ id: string; version: number; body: unknown; current: boolean } | null)[] } };
    expect(result.data._entities.map((entity) => entity && `${entity.id}@${entity.version}:${entity.current}`)).toEqual(['note-1@1:false', 'note-1@2:true', 'widget.a@1:true', null, null]);
    expect(result.data._entities[0]!.body).toEqual({ text: 'first' });
  });
});

describe('the sample register under concurrency', () => {
  it('is loaded once when two admins seed at the same moment', async () => {
    const seeds = await Promise.all([1, 2].map(() => rest('/admin/seed', { method: 'POST', as: 'admin' })));
    expect(seeds.map((seed) => seed.status)).toEqual([200, 200]);
    const inserted = seeds.map((seed) => seed.body.versions_inserted).sort((a, b) => a - b);
    // One load stored everything; the other, waiting on the lock, found it all present.
    expect(inserted[0]).toBe(0);
    expect(inserted[1]).toBe(seeds[0]!.body.versions_inserted + seeds[1]!.body.versions_inserted);
    expect(seeds.every((seed) => seed.body.skipped.length === 0)).toBe(true);
    const { rows } = await sql(platform.databaseUrl, `SELECT count(*)::int AS n FROM registry.record_version WHERE id = 'battery-passport'`);
    expect(rows[0]!.n).toBe(1);
  });
});
