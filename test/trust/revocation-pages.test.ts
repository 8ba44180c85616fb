/**
 * GET /revocations at scale: the answer streams a page of stored revocations at a time, in one
 * snapshot, and equals the one-shot trustRevocations answer byte for byte, with and without
 * filters; trustRevocationPage's pages hold to the snapshot of the first and refuse foreign cursors;
 * trustRevocations answers whole up to 20,000 stored revocations and is refused beyond (the REST
 * path still streams them all).
 *
 * The bulk goes in by SQL, as in graph-pages.test.ts; the writes between pages go through the API.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawGet } from '../support/raw-http.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { DAY, newKey, seconds } from './support.js';

/** More than two of the facade's pages (1,000 stored revocations each). */
const REVOCATIONS = 2500;
const ISSUERS = 50;
/** Where the seeded revocations' effective times begin: one a minute from then on. */
const FIRST_EFFECTIVE = Date.parse('2026-01-01T00:00:00Z');
const MINUTE = 60_000;

let platform: TestStack;
let db: pg.Client;

const REVOCATION = 'subject reason effective_at: effectiveAt recorded_at: recordedAt retroactive attestation';
const ONE_SHOT = `query($at: String, $subject: String, $window: String) { trustRevocations(at: $at, subject: $subject, window: $window) { ${REVOCATION} } }`;
const PAGE = `query($first: Int, $after: String, $subject: String) { trustRevocationPage(first: $first, after: $after, subject: $subject) { nodes { ${REVOCATION} } pageInfo { hasNextPage endCursor } } }`;

type Revocation = Record<string, unknown>;
const withoutNulls = (record: Revocation) => Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null));
const issuer = (index: number) => `r-issuer-${String(index).padStart(3, '0')}`;
const iso = (time: number) => new Date(time).toISOString();

async function oneShot(variables: Record<string, string> = {}): Promise<Revocation[]> {
  const { data, errors } = await platform.graphql<{ trustRevocations: Revocation[] }>(ONE_SHOT, variables);
  expect(errors).toBeUndefined();
  return data!.trustRevocations;
}

async function page(first: number, after?: string | null, subject?: string): Promise<{ nodes: Revocation[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } }> {
  const { data, errors } = await platform.graphql(PAGE, { first, after, subject });
  expect(errors).toBeUndefined();
  return data.trustRevocationPage;
}

/** GET /revocations over plain HTTP: status, headers and the body as it arrived. */
const getRevocations = (query = '') => rawGet(`${platform.base('trust')}/revocations${query}`);

/** `count` revocations by SQL, numbered from `from`: issuer i % ISSUERS, effective a minute apart, recorded now. */
async function seedRevocations(from: number, count: number): Promise<void> {
  await db.query(
    `INSERT INTO trust.revocation (subject, document, recorded_at)
     SELECT subject, jsonb_build_object('subject', subject, 'reason', 'keyCompromise', 'effective_at', effective, 'recorded_at', $3::text, 'retroactive', false), $3::timestamptz
     FROM (SELECT 'r-issuer-' || lpad((g % ${ISSUERS})::text, 3, '0') AS subject,
                  to_char(to_timestamp($4::double precision / 1000 + g * 60) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS effective
           FROM generate_series($1::int, $1::int + $2::int - 1) AS g) AS seeded`,
    [from, count, iso(Date.parse('2026-06-01T00:00:00Z')), FIRST_EFFECTIVE],
  );
}

beforeAll(async () => {
  platform = await startTestStack();
  db = new pg.Client({ connectionString: platform.databaseUrl.replace(/\?.*$/, '') });
  await db.connect();
  const keys = await Promise.all(Array.from({ length: ISSUERS }, () => newKey()));
  await db.query('INSERT INTO trust.trust_node (id, kind, document) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])', [
    keys.map((_, index) => issuer(index)),
    keys.map(() => 'issuer'),
    keys.map((key, index) => JSON.stringify({ id: issuer(index), kind: 'issuer', jurisdiction: 'DE', keys: [{ ...key.jwk, iat: seconds(new Date(Date.now() - 30 * DAY)) }] })),
  ]);
  await seedRevocations(0, REVOCATIONS);
}, 120_000);
afterAll(async () => {
  await db?.end();
  await platform?.stop();
});

describe('GET /revocations, streamed', () => {
  it('equals the one-shot trustRevocations answer byte for byte, sent chunked without a content-length', async () => {
    const expected = { revocations: (await oneShot()).map(withoutNulls) };
    expect(expected.revocations).toHaveLength(REVOCATIONS);
    const response = await getRevocations();
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['content-length']).toBeUndefined();
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(response.body).toBe(JSON.stringify(expected));
  });

  it('filters every page alike: at, window and subject give what the one-shot answer gives', async () => {
    // Effective by the 1,200th minute: the first 1,201 revocations, spread over two pages of the stream.
    const at = iso(FIRST_EFFECTIVE + 1200 * MINUTE);
    const byAt = await getRevocations(`?at=${encodeURIComponent(at)}`);
    expect(byAt.status).toBe(200);
    expect(JSON.parse(byAt.body).revocations).toHaveLength(1201);
    expect(byAt.body).toBe(JSON.stringify({ revocations: (await oneShot({ at })).map(withoutNulls) }));

    const window = `${iso(FIRST_EFFECTIVE + 990 * MINUTE)}/${iso(FIRST_EFFECTIVE + 1010 * MINUTE)}`;
    const byWindow = await getRevocations(`?window=${encodeURIComponent(window)}`);
    expect(JSON.parse(byWindow.body).revocations).toHaveLength(20);
    expect(byWindow.body).toBe(JSON.stringify({ revocations: (await oneShot({ window })).map(withoutNulls) }));

    const bySubject = await getRevocations(`?subject=${issuer(7)}`);
    const subjects = JSON.parse(bySubject.body).revocations.map((revocation: Revocation) => revocation.subject);
    expect(subjects).toHaveLength(REVOCATIONS / ISSUERS);
    expect(new Set(subjects)).toEqual(new Set([issuer(7)]));
    expect(bySubject.body).toBe(JSON.stringify({ revocations: (await oneShot({ subject: issuer(7) })).map(withoutNulls) }));
  });

  it('refuses a malformed filter with a problem before anything is streamed', async () => {
    const response = await getRevocations('?at=yesterday');
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(response.body)).toMatchObject({ status: 400 });
  });
});

describe('trustRevocationPage', () => {
  it('pages in the snapshot of the first page: a revocation declared between pages appears only in a new read', async () => {
    const first = await page(1000);
    expect(first.nodes).toHaveLength(1000);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const declared = await platform.rest('trust', '/revocations', { body: { subject: issuer(3), reason: 'superseded' }, as: 'admin' });
    expect(declared.status).toBe(201);
    const read = [...first.nodes];
    for (let after = first.pageInfo.endCursor; after !== null; ) {
      const next = await page(1000, after);
      read.push(...next.nodes);
      after = next.pageInfo.endCursor;
    }
    expect(read).toHaveLength(REVOCATIONS);
    expect(read.some((revocation) => revocation.reason === 'superseded')).toBe(false);
    // In recording order, each once.
    expect(read).toEqual((await oneShot()).slice(0, REVOCATIONS));
    const fresh = await oneShot({ subject: issuer(3) });
    expect(fresh.at(-1)).toMatchObject({ subject: issuer(3), reason: 'superseded' });
  });

  it("reads only the subject's node with a subject, page by page", async () => {
    const seen: Revocation[] = [];
    let after: string | null = null;
    do {
      const next = await page(7, after, issuer(11));
      seen.push(...next.nodes);
      after = next.pageInfo.endCursor;
    } while (after !== null);
    expect(seen).toHaveLength(REVOCATIONS / ISSUERS);
    expect(seen.every((revocation) => revocation.subject === issuer(11))).toBe(true);
  });

  it('refuses cursors that are not its own and pages out of range', async () => {
    const graphCursor = (await platform.graphql('{ trustGraphPage(first: 1) { pageInfo { endCursor } } }')).data.trustGraphPage.pageInfo.endCursor;
    for (const after of ['not-a-cursor', graphCursor]) {
      const { errors } = await platform.graphql(PAGE, { first: 10, after });
      expect(errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_CURSOR', problem: { status: 400 } });
    }
    for (const first of [0, 2001]) {
      const { errors } = await platform.graphql(PAGE, { first });
      expect(errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_QUERY' });
    }
  });
});

describe('beyond one answer', () => {
  it('trustRevocations answers up to 20,000 stored revocations and refuses more; a subject still narrows it, and GET /revocations streams them all', async () => {
    const stored = Number((await db.query('SELECT count(*) FROM trust.revocation')).rows[0].count);
    await seedRevocations(REVOCATIONS, 20_000 - stored);
    expect(await oneShot()).toHaveLength(20_000);

    await seedRevocations(REVOCATIONS + 20_000, 1);
    const refused = await platform.graphql(ONE_SHOT, {});
    expect(refused.data).toBeNull();
    expect(refused.errors![0].extensions).toMatchObject({ code: 'TOO_MANY_REVOCATIONS', problem: { status: 400 } });
    expect(await oneShot({ subject: issuer(5) })).toHaveLength(400);

    const response = await getRevocations();
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).revocations).toHaveLength(20_001);
  });
});
