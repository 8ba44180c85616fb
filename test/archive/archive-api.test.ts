/**
 * The archive through the whole stack (REST facade → gateway → archive subgraph → PostgreSQL), for
 * everything that does not need the issuer: snapshots are taken by the archive's own snapshot
 * service on the stack's database, with the gathered content stood in for, and then read, listed,
 * verified and tampered with through the public interfaces. POST /snapshots for a real passport is
 * in issuer-end-to-end.test.ts.
 */
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SnapshotRecord } from '../../subgraphs/archive/data/snapshot-repository.js';
import type { NotarizationRecipe } from '../../subgraphs/archive/domain/index.js';
import { sqlSessions } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { bagFromTar, validateBag } from './support/bagit-check.js';
import { openArchive, PLATFORM, stubGateway, type ArchiveParts, type StubGateway } from './support/harness.js';
import { followRecipe } from './support/recipe.js';
import { syntheticPassport } from './support/synthetic-passport.js';

// One connection for the counts and the tampering (each new connection costs PostgreSQL ~34 ms of CPU).
const { sql, end: endSql } = sqlSessions();
let platform: TestStack;
let gateway: StubGateway;
let seeder: ArchiveParts;
const seeded: Record<'alpha1' | 'alpha2' | 'beta' | 'rot' | 'tampered' | 'forged', SnapshotRecord> = {} as never;

beforeAll(async () => {
  platform = await startTestStack();
  gateway = stubGateway([syntheticPassport(40, { passportId: 'pp-alpha' }), syntheticPassport(8_000, { passportId: 'pp-beta' }), syntheticPassport(25, { passportId: 'pp-gamma' })]);
  seeder = await openArchive(platform.databaseUrl, gateway);
  seeded.alpha1 = await seeder.service.create('pp-alpha', PLATFORM);
  seeded.beta = await seeder.service.create('pp-beta', PLATFORM);
  seeded.alpha2 = await seeder.service.create('pp-alpha', PLATFORM);
  seeded.rot = await seeder.service.create('pp-gamma', PLATFORM);
  seeded.tampered = await seeder.service.create('pp-gamma', PLATFORM);
  seeded.forged = await seeder.service.create('pp-gamma', PLATFORM);
}, 180_000);
afterAll(async () => {
  await seeder?.close();
  await endSql();
  await platform?.stop();
});

const base = () => platform.base('archive');

async function fetchArchive(id: string, init: RequestInit = {}) {
  const response = await fetch(`${base()}/snapshots/${id}`, init);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

const downloads = new Map<string, Promise<{ headers: Headers; bytes: Buffer }>>();

/**
 * A snapshot's archive as a GET answers it (headers and bytes), downloaded once for the tests that
 * examine it (pp-beta's is megabytes) and checked against the SHA-512 it had at creation. The tests
 * of a conditional or repeated download, or of a snapshot tampered with, use fetchArchive.
 */
function downloadedOnce(record: SnapshotRecord): Promise<{ headers: Headers; bytes: Buffer }> {
  let download = downloads.get(record.id);
  if (!download) {
    download = fetchArchive(record.id).then(({ status, headers, bytes }) => {
      expect(status).toBe(200);
      expect(bytesToHex(sha512(bytes))).toBe(record.sha512);
      return { headers, bytes };
    });
    downloads.set(record.id, download);
  }
  return download;
}

/**
 * How a download of a damaged archive ends: refused with a 5xx problem when the damage shows before
 * the first byte is sent, cut short when it shows later; never a complete 200.
 */
async function neverComplete(id: string): Promise<'refused' | 'cut short' | 'complete'> {
  const answer = await fetchArchive(id).catch((error: Error) => error);
  if (answer instanceof Error) return 'cut short';
  if (answer.status >= 500 && answer.headers.get('content-type') === 'application/problem+json') return 'refused';
  return 'complete';
}

async function snapshotCount(): Promise<number> {
  const { rows } = await sql<{ count: string }>(platform.databaseUrl, 'SELECT count(*) FROM archive.snapshot');
  return Number(rows[0]!.count);
}

async function discovery() {
  const response = await platform.rest('archive', '/');
  expect(response.status).toBe(200);
  return response.body as {
    notarization_recipe: NotarizationRecipe;
    oais_mapping: Record<string, any>;
    notary: { current_kid: string; keyring: string };
    endpoints: { method: string; path: string }[];
  };
}

describe('GET /snapshots/{id}', () => {
  it('returns exactly the stored bytes three times over, with media type, strong ETag and Content-Digest', async () => {
    const fetched = [await fetchArchive(seeded.alpha1.id), await fetchArchive(seeded.alpha1.id), await fetchArchive(seeded.alpha1.id)];
    for (const { status, headers, bytes } of fetched) {
      expect(status).toBe(200);
      expect(bytesToHex(sha512(bytes))).toBe(seeded.alpha1.sha512);
      expect(bytes.length).toBe(seeded.alpha1.size);
      expect(headers.get('content-type')).toBe('application/x-tar');
      expect(headers.get('content-length')).toBe(String(seeded.alpha1.size));
      expect(headers.get('etag')).toBe(`"${seeded.alpha1.sha512}"`);
      expect(headers.get('content-digest')).toBe(`sha-512=:${Buffer.from(sha512(bytes)).toString('base64')}:`);
      expect(headers.get('link')).toBe(`<${base()}/snapshots/${seeded.alpha1.id}/notarization>; rel="describedby"; type="application/json"`);
    }
    expect(fetched[1]!.bytes.equals(fetched[0]!.bytes) && fetched[2]!.bytes.equals(fetched[0]!.bytes)).toBe(true);
    expect(seeded.alpha1.notarization.bag_sha512).toBe(bytesToHex(sha512(fetched[0]!.bytes)));
  });

  it('answers a conditional GET or HEAD with 304 and no bytes while the ETag matches (RFC 9110 §13.1.2)', async () => {
    const etag = `"${seeded.alpha1.sha512}"`;
    for (const [method, ifNoneMatch] of [
      ['GET', etag],
      ['HEAD', etag],
      ['GET', `"other", W/${etag}`],
      ['GET', '*'],
    ] as const) {
      const { status, headers, bytes } = await fetchArchive(seeded.alpha1.id, { method, headers: { 'if-none-match': ifNoneMatch } });
      expect(status, `${method} If-None-Match: ${ifNoneMatch}`).toBe(304);
      expect(bytes.length).toBe(0);
      expect(headers.get('etag')).toBe(etag);
      expect(headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(headers.get('content-digest')).toBeNull();
    }
    const stale = await fetchArchive(seeded.alpha1.id, { headers: { 'if-none-match': `"${seeded.beta.sha512}"` } });
    expect(stale.status).toBe(200);
    expect(bytesToHex(sha512(stale.bytes))).toBe(seeded.alpha1.sha512);
  });

  it('streams a snapshot of many chunks page by page, byte-identical', async () => {
    expect(seeded.beta.chunkCount).toBeGreaterThan(4);
    const { bytes } = await downloadedOnce(seeded.beta);
    expect(bytes.length).toBe(seeded.beta.size);
    expect(bytesToHex(sha512(bytes))).toBe(seeded.beta.sha512);
  });

  it('answers HEAD with the same headers and no body', async () => {
    const get = await downloadedOnce(seeded.beta);
    const head = await fetchArchive(seeded.beta.id, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.bytes.length).toBe(0);
    for (const name of ['content-type', 'content-length', 'etag', 'content-digest', 'cache-control', 'link']) expect(head.headers.get(name), name).toBe(get.headers.get(name));
  });

  it('holds an RFC 8493 bag, as an independent validator checks it', async () => {
    for (const record of [seeded.alpha1, seeded.beta]) {
      const { name, bag } = bagFromTar((await downloadedOnce(record)).bytes);
      expect(name).toBe(record.id);
      expect(validateBag(bag)).toEqual([]);
    }
  });

  it('answers 404 problems for unknown snapshots, and 405 for other methods', async () => {
    for (const path of ['/snapshots/no-such-snapshot', '/snapshots/no-such-snapshot/notarization']) {
      const response = await platform.rest('archive', path);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(response.body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    }
    // Ids no snapshot can have, down to a NUL that PostgreSQL text cannot even hold.
    for (const id of ['%00', 'a%00b', encodeURIComponent('é'.repeat(300)), '..%2F..%2Fetc']) {
      const response = await platform.rest('archive', `/snapshots/${id}`);
      expect(response.status, id).toBe(404);
    }
    const head = await fetchArchive('no-such-snapshot', { method: 'HEAD' });
    expect(head.status).toBe(404);
    const post = await platform.rest('archive', `/snapshots/${seeded.alpha1.id}`, { method: 'POST', as: 'writer', body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serves the notarization itself, verbatim, at /snapshots/{id}/notarization', async () => {
    const response = await platform.rest('archive', `/snapshots/${seeded.alpha1.id}/notarization`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(seeded.alpha1.notarization);
  });
});

describe('the discovery document', () => {
  it('carries the OAIS mapping and a recipe whose commands name this deployment', async () => {
    const document = await discovery();
    expect(Object.keys(document.oais_mapping.preservation_description_information).sort()).toEqual(['access_rights', 'context', 'fixity', 'provenance', 'reference']);
    expect(document.oais_mapping.content_information).toHaveProperty('content_data_object');
    expect(JSON.stringify(document)).not.toContain('{base_url}');
    const commands = document.notarization_recipe.steps.flatMap((step) => step.run).join('\n');
    expect(commands).toContain(`'${base()}/snapshots/{id}'`);
    expect(commands).toContain(`'${base()}/snapshots/{id}/notarization'`);
    expect(commands).toContain(`'${base()}/keyring'`);
    expect(document.notary.keyring).toBe(`${base()}/keyring`);
    const keyring = (await platform.rest('archive', '/keyring')).body as { keys: { kid: string }[] };
    expect(keyring.keys.map((key) => key.kid)).toContain(document.notary.current_kid);
    const paths = document.endpoints.map((endpoint) => `${endpoint.method} ${endpoint.path}`);
    expect(paths).toEqual(expect.arrayContaining(['GET /', 'GET /healthz', 'GET /admin/log', 'GET /keyring', 'GET /snapshots', 'POST /snapshots', 'GET /snapshots/{id}']));
  });

  it('gives a recipe that, followed literally with public tools, verifies a snapshot', async () => {
    const document = await discovery();
    const outcome = await followRecipe(document.notarization_recipe, { id: seeded.beta.id, notaryKid: seeded.beta.notaryKid });
    expect(outcome.failedStep, outcome.output).toBeUndefined();
    expect(outcome.output).toContain('snapshot.tar: OK');
    expect(outcome.output).toContain(`verified: snapshot ${seeded.beta.id}`);
    expect(outcome.output).toContain('data/passport/events.jsonl: OK');
    // Fifteen commands, a node process among them: on a loaded machine 30 s ran out.
  }, 120_000);

  it('is described in OpenAPI with every archive path', async () => {
    const openapi = (await (await fetch(`${new URL(base()).origin}/docs/archive/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/snapshots', '/snapshots/{id}', '/snapshots/{id}/notarization', '/keyring']));
    expect(Object.keys(openapi.paths['/snapshots/{id}']!.get.responses['200'].content)).toEqual(['application/x-tar']);
  });
});

describe('a flipped byte', () => {
  it('in a downloaded copy is found by the BagIt check and by the recipe digest check', async () => {
    const copy = Buffer.from((await downloadedOnce(seeded.alpha1)).bytes);
    copy[copy.indexOf('"seq":7,')]! ^= 0x01;
    expect(validateBag(bagFromTar(copy).bag)).toEqual(['data/passport/events.jsonl does not match its digest in manifest-sha512.txt']);
    expect(bytesToHex(sha512(copy))).not.toBe(seeded.alpha1.notarization.bag_sha512);
  });

  it('in storage is never served as a complete answer, even when the chunk digest was updated to match', async () => {
    const { bytes } = await fetchArchive(seeded.tampered.id);
    const offset = bytes.indexOf('"seq":3,');
    // Bit rot: the chunk no longer matches its own digest.
    await sql(platform.databaseUrl, 'UPDATE archive.snapshot_chunk SET bytes = set_byte(bytes, $2, get_byte(bytes, $2) # 1) WHERE snapshot_id = $1 AND seq = 0', [seeded.tampered.id, offset]);
    expect(await neverComplete(seeded.tampered.id)).not.toBe('complete');
    const graphql = await platform.graphql('query($id: ID!) { snapshot(id: $id) { chunks(from: 0, count: 1) } }', { id: seeded.tampered.id });
    expect(graphql.errors?.[0].extensions.code).toBe('SNAPSHOT_CORRUPT');
    // A deliberate change that fixes the chunk digest too: the archive's own digest still gives it away.
    await sql(platform.databaseUrl, 'UPDATE archive.snapshot_chunk SET sha512 = sha512(bytes) WHERE snapshot_id = $1', [seeded.tampered.id]);
    expect(await neverComplete(seeded.tampered.id)).not.toBe('complete');
    const recipe = (await discovery()).notarization_recipe;
    expect((await followRecipe(recipe, { id: seeded.tampered.id, notaryKid: seeded.tampered.notaryKid })).failedStep).toBe(1);
  });

  it('in storage with every stored digest rewritten is caught by the notarization', async () => {
    const { bytes } = await fetchArchive(seeded.forged.id);
    const forged = Buffer.from(bytes);
    forged[forged.indexOf('"seq":3,')]! ^= 0x01;
    await sql(platform.databaseUrl, 'UPDATE archive.snapshot_chunk SET bytes = $2, sha512 = sha512($2) WHERE snapshot_id = $1 AND seq = 0', [seeded.forged.id, forged]);
    await sql(platform.databaseUrl, 'UPDATE archive.snapshot SET sha512 = $2 WHERE id = $1', [seeded.forged.id, bytesToHex(sha512(forged))]);
    const served = await fetchArchive(seeded.forged.id);
    expect(served.status).toBe(200);
    expect(served.bytes.equals(forged)).toBe(true);
    const recipe = (await discovery()).notarization_recipe;
    const outcome = await followRecipe(recipe, { id: seeded.forged.id, notaryKid: seeded.forged.notaryKid });
    expect(outcome.failedStep, outcome.output).toBe(2);
  });
});

describe('GET /snapshots', () => {
  it('lists snapshots oldest first, with links and notarizations', async () => {
    const response = await platform.rest('archive', '/snapshots');
    expect(response.status).toBe(200);
    const ids = response.body.snapshots.map((snapshot: { id: string }) => snapshot.id);
    expect(ids).toEqual([seeded.alpha1, seeded.beta, seeded.alpha2, seeded.rot, seeded.tampered, seeded.forged].map((record) => record.id));
    expect(response.body.next).toBeNull();
    expect(response.body.snapshots[0]).toEqual({
      id: seeded.alpha1.id,
      passport_id: 'pp-alpha',
      created_at: seeded.alpha1.createdAt.toISOString(),
      size: seeded.alpha1.size,
      sha512: seeded.alpha1.sha512,
      media_type: 'application/x-tar',
      content_digest: `sha-512=:${Buffer.from(seeded.alpha1.sha512, 'hex').toString('base64')}:`,
      tagmanifest_sha512: seeded.alpha1.tagmanifestSha512,
      payload_oxum: seeded.alpha1.payloadOxum,
      notary_kid: seeded.alpha1.notaryKid,
      notarization: seeded.alpha1.notarization,
      href: `${base()}/snapshots/${seeded.alpha1.id}`,
      notarization_href: `${base()}/snapshots/${seeded.alpha1.id}/notarization`,
    });
  });

  it('filters by passport_id and by what existed at an instant', async () => {
    const ids = async (query: string) => ((await platform.rest('archive', `/snapshots?${query}`)).body.snapshots as { id: string }[]).map((snapshot) => snapshot.id);
    expect(await ids('passport_id=pp-alpha')).toEqual([seeded.alpha1.id, seeded.alpha2.id]);
    expect(await ids('passport_id=pp-nobody')).toEqual([]);
    expect(await ids(`passport_id=pp-alpha&at=${encodeURIComponent(seeded.alpha1.createdAt.toISOString())}`)).toEqual([seeded.alpha1.id]);
    expect(await ids(`at=${encodeURIComponent(seeded.beta.createdAt.toISOString())}`)).toEqual([seeded.alpha1.id, seeded.beta.id]);
    expect(await ids('at=2000-01-01T00:00:00Z')).toEqual([]);
    expect(await ids('passport_id=pp%00alpha')).toEqual([]);
    // The same instant written with an offset.
    const inParis = new Date(seeded.alpha1.createdAt.getTime() + 3_600_000).toISOString().replace('Z', '+01:00');
    expect(await ids(`passport_id=pp-alpha&at=${encodeURIComponent(inParis)}`)).toEqual([seeded.alpha1.id]);
    expect(await ids(`passport_id=pp-alpha&at=${encodeURIComponent(seeded.alpha1.createdAt.toISOString().replace('T', ' ').replace('Z', 'z'))}`)).toEqual([seeded.alpha1.id]);
  });

  it('pages with limit and a cursor, keeping the filters in the next link', async () => {
    const first = await platform.rest('archive', '/snapshots?passport_id=pp-alpha&limit=1');
    expect(first.body.snapshots.map((snapshot: { id: string }) => snapshot.id)).toEqual([seeded.alpha1.id]);
    expect(typeof first.body.next).toBe('string');
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '');
    expect(link).not.toBeNull();
    const next = new URL(link![1]!);
    expect(Object.fromEntries(next.searchParams)).toEqual({ passport_id: 'pp-alpha', limit: '1', after: first.body.next });
    const second = await fetch(next);
    const body = (await second.json()) as { snapshots: { id: string }[]; next: string | null };
    expect(body.snapshots.map((snapshot) => snapshot.id)).toEqual([seeded.alpha2.id]);
    expect(body.next).toBeNull();
    expect(second.headers.get('link')).toBeNull();
  });

  it('answers bad queries with 400 problems', async () => {
    for (const [query, code] of [
      ['limit=0', 'INVALID_QUERY'],
      ['limit=101', 'INVALID_QUERY'],
      ['limit=ten', 'INVALID_QUERY'],
      ['at=yesterday', 'INVALID_QUERY'],
      ['colour=red', 'INVALID_QUERY'],
      ['after=not-a-cursor', 'INVALID_CURSOR'],
      [`after=${Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'a\u0000b'])).toString('base64url')}`, 'INVALID_CURSOR'],
      ['passport_id=a&passport_id=b', 'INVALID_QUERY'],
    ]) {
      const response = await platform.rest('archive', `/snapshots?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.code, query).toBe(code);
    }
    for (const at of ['2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01T24:00:01Z', '2026-01-01T00:00:00+25:00', '0000-00-00T00:00:00Z']) {
      const response = await platform.rest('archive', `/snapshots?at=${encodeURIComponent(at)}`);
      expect(response.status, at).toBe(400);
    }
  });
});

describe('POST /snapshots', () => {
  it('needs a bearer token', async () => {
    const missing = await platform.rest('archive', '/snapshots', { body: { passport_id: 'pp-alpha' } });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const invalid = await platform.rest('archive', '/snapshots', { body: { passport_id: 'pp-alpha' }, headers: { authorization: 'Bearer not-a-token' } });
    expect(invalid.status).toBe(401);
    expect(invalid.body.code).toBe('INVALID_TOKEN');
  });

  it('refuses malformed bodies with 4xx problems, storing nothing', async () => {
    const before = await snapshotCount();
    const cases: [unknown, number, string, Record<string, string>?][] = [
      ['{"passport_id":', 400, 'MALFORMED_JSON'],
      ['', 400, 'MALFORMED_JSON'],
      [[], 400, 'INVALID_BODY'],
      [{}, 400, 'INVALID_BODY'],
      [{ passport_id: 5 }, 400, 'INVALID_REQUEST'],
      [{ passport_id: null }, 400, 'INVALID_BODY'],
      [{ passport_id: 'pp-alpha', also: 'this' }, 400, 'INVALID_REQUEST'],
      [{ passport_id: '' }, 400, 'INVALID_PASSPORT_ID'],
      [{ passport_id: 'pp\nalpha' }, 400, 'INVALID_PASSPORT_ID'],
      [{ passport_id: 'p'.repeat(300) }, 400, 'INVALID_PASSPORT_ID'],
      ['passport_id=pp-alpha', 415, 'UNSUPPORTED_MEDIA_TYPE', { 'content-type': 'application/x-www-form-urlencoded' }],
    ];
    for (const [body, status, code, headers] of cases) {
      const response = await platform.rest('archive', '/snapshots', { method: 'POST', body, as: 'writer', ...(headers ? { headers } : {}) });
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(response.body.code, JSON.stringify(body)).toBe(code);
    }
    expect(await snapshotCount()).toBe(before);
  });
});

describe('the federated graph', () => {
  it('serves a snapshot with its bytes as base64 chunks, and null for an unknown id', async () => {
    const result = await platform.graphql(
      'query($id: ID!) { snapshot(id: $id) { id passportId size sha512 contentDigest etag chunkCount chunks(from: 0, count: 8) } missing: snapshot(id: "nope") { id } }',
      { id: seeded.alpha1.id },
    );
    expect(result.errors).toBeUndefined();
    const snapshot = result.data.snapshot;
    expect(snapshot).toMatchObject({ id: seeded.alpha1.id, passportId: 'pp-alpha', size: seeded.alpha1.size, sha512: seeded.alpha1.sha512, etag: `"${seeded.alpha1.sha512}"` });
    const bytes = Buffer.concat(snapshot.chunks.map((chunk: string) => Buffer.from(chunk, 'base64')));
    expect(bytesToHex(sha512(bytes))).toBe(seeded.alpha1.sha512);
    expect(result.data.missing).toBeNull();
  });

  it('bounds chunk requests and pages of snapshots', async () => {
    for (const query of [
      `{ snapshot(id: "${seeded.alpha1.id}") { chunks(from: 0, count: 9) } }`,
      `{ snapshot(id: "${seeded.alpha1.id}") { chunks(from: -1, count: 1) } }`,
      '{ snapshots(first: 0) { nodes { id } } }',
    ]) {
      const result = await platform.graphql(query);
      expect(result.errors?.[0].extensions.problem.status, query).toBe(400);
    }
  });

  it('refuses createSnapshot without a token', async () => {
    const result = await platform.graphql('mutation { createSnapshot(passportId: "pp-alpha") { id } }');
    expect(result.errors?.[0].extensions.code).toBe('MISSING_TOKEN');
  });

  it('resolves Snapshot entity references in one batch', async () => {
    const response = await fetch(platform.stack.subgraphUrls.archive, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Snapshot { id sha512 } } }',
        variables: { representations: [seeded.alpha1.id, 'missing', seeded.beta.id].map((id) => ({ __typename: 'Snapshot', id })) },
      }),
    });
    const result = (await response.json()) as { data: { _entities: ({ id: string; sha512: string } | null)[] } };
    expect(result.data._entities).toEqual([{ id: seeded.alpha1.id, sha512: seeded.alpha1.sha512 }, null, { id: seeded.beta.id, sha512: seeded.beta.sha512 }]);
  });
});

describe('the notary key', () => {
  it('rotates without breaking older notarizations; new snapshots are signed by the new key', async () => {
    const oldKid = seeded.rot.notaryKid;
    expect((await discovery()).notary.current_kid).toBe(oldKid);
    const rotated = await platform.graphql('mutation { archiveRotateKey(purpose: "notary") }', {}, 'admin');
    expect(rotated.errors).toBeUndefined();
    const newKid = rotated.data.archiveRotateKey.kid as string;
    expect(newKid).not.toBe(oldKid);

    const keyring = (await platform.rest('archive', '/keyring')).body as { keys: { kid: string; exp?: number }[] };
    expect(typeof keyring.keys.find((key) => key.kid === oldKid)!.exp).toBe('number');
    const document = await discovery();
    expect(document.notary.current_kid).toBe(newKid);
    const old = await followRecipe(document.notarization_recipe, { id: seeded.rot.id, notaryKid: oldKid });
    expect(old.failedStep, old.output).toBeUndefined();

    // A fresh archive process picks the new key up from the key store.
    const reopened = await openArchive(platform.databaseUrl, gateway);
    try {
      const fresh = await reopened.service.create('pp-gamma', PLATFORM);
      expect(fresh.notaryKid).toBe(newKid);
      const outcome = await followRecipe(document.notarization_recipe, { id: fresh.id, notaryKid: newKid });
      expect(outcome.failedStep, outcome.output).toBeUndefined();
      expect((await followRecipe(document.notarization_recipe, { id: fresh.id, notaryKid: oldKid })).failedStep).toBe(3);
    } finally {
      await reopened.close();
    }
    // Three recipes followed and a second archive kernel opened: on a loaded machine 30 s ran out.
  }, 120_000);
});

describe('after a restart of the whole stack', () => {
  it('serves every snapshot with the SHA-512 it had at creation', async () => {
    const before = await platform.rest('archive', '/snapshots');
    await platform.restart();
    for (const record of [seeded.alpha1, seeded.beta, seeded.alpha2, seeded.rot]) {
      const { status, bytes, headers } = await fetchArchive(record.id);
      expect(status).toBe(200);
      expect(bytesToHex(sha512(bytes))).toBe(record.sha512);
      expect(headers.get('etag')).toBe(`"${record.sha512}"`);
    }
    // The stack comes back on other ports, so the links differ; everything else is the same.
    const withoutLinks = (body: { snapshots: Record<string, unknown>[] }) => body.snapshots.map(({ href: _href, notarization_href: _notarization, ...snapshot }) => snapshot);
    expect(withoutLinks((await platform.rest('archive', '/snapshots')).body)).toEqual(withoutLinks(before.body));
    // A whole stack stopped and started again: on a loaded machine 30 s ran out.
  }, 120_000);
});
