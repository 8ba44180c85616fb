/**
 * The Digital Link resolver and the one-live-passport rule, end to end on one platform whose issuer
 * has a configured public base URL (ISSUER_PUBLIC_URL, as behind a TLS proxy): every absolute URL the
 * resolver and POST /passports write is made from it, and the test maps it back to the loopback
 * address as the proxy would. Linksets are read by parties that are not ours: GS1's own JSON Schema
 * of resolver linksets (test/issuer/fixtures) with Ajv, and the `application/linkset` form and the
 * redirect's Link header with http-link-header (RFC 8288).
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import LinkHeader from 'http-link-header';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { startTestStack, TOKENS, type TestStack } from '../support/stack.js';
import { appendEvent, CONFIG_VECTOR, createModel, PAYLOADS } from './support.js';

const PUBLIC_ISSUER = 'https://dpp.example.test/products';
const MODEL = 'resolver-battery';
const GTIN = '09520123456788';
const GS1 = 'https://ref.gs1.org/voc/';
const LINKSET = 'application/linkset+json';

let platform: TestStack;
const validateLinkset = new Ajv({ strict: false, allErrors: true }).compile(JSON.parse(readFileSync(new URL('./fixtures/gs1-linkset-schema.json', import.meta.url), 'utf8')));

beforeAll(async () => {
  platform = await startTestStack({ env: { ISSUER_PUBLIC_URL: `${PUBLIC_ISSUER}/` } });
  await createModel(platform, MODEL);
}, 60_000);
afterAll(() => platform?.stop());

/** A public URL of the issuer as the proxy in front of it would forward it. */
const local = (url: string) => (url.startsWith(PUBLIC_ISSUER) ? `${platform.base('issuer')}${url.slice(PUBLIC_ISSUER.length)}` : url);

/** A GET of a resolver path (under the issuer's base), redirects not followed. */
async function resolve(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${platform.base('issuer')}${path}`, { headers, redirect: 'manual' });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

function create(identity: string, extra: Record<string, unknown> = {}) {
  return platform.rest('issuer', '/passports', { body: { identity, type_ref: { id: MODEL, version: 1 }, config_vector: CONFIG_VECTOR, ...extra }, as: 'writer' });
}

async function issue(identity: string): Promise<string> {
  const response = await create(identity);
  expect(response.status, response.text).toBe(201);
  return response.body.passport_id as string;
}

let serial = 0;
const fresh = (prefix: string) => `${prefix}-${process.pid}-${(serial += 1)}`;

/** The one context object of a linkset answer, after GS1's schema has accepted the document. */
async function linksetOf(path: string, headers: Record<string, string> = { accept: LINKSET }) {
  const answer = await resolve(path, headers);
  expect(answer.status, answer.text).toBe(200);
  expect(answer.headers.get('content-type')).toBe(LINKSET);
  // By its Accept; and by Accept-Encoding where the answer is large enough to be compressed for a client that takes a coding (COMPRESSION_MIN_BYTES).
  expect(answer.headers.get('vary')).toBe(answer.text.length >= 1024 ? 'Accept, accept-encoding' : 'Accept');
  expect(answer.headers.get('access-control-allow-origin')).toBe('*');
  const document = answer.json();
  expect(validateLinkset(document), JSON.stringify(validateLinkset.errors)).toBe(true);
  expect(document.linkset).toHaveLength(1);
  return document.linkset[0] as Record<string, any>;
}

const passportUrl = (id: string) => `${PUBLIC_ISSUER}/passports/${id}`;

describe('the Digital Link resolver', () => {
  it('answers every granularity the issuer issues with an RFC 9264 linkset of the passport, its credential, the verification page and its archive', async () => {
    const lot = fresh('LOT');
    const item = fresh('SN');
    const variant = fresh('V').slice(0, 20);
    const cases = [
      { identity: `https://id.gs1.org/01/${GTIN}`, path: `/01/${GTIN}`, granularity: 'model' },
      { identity: `https://id.gs1.org/01/${GTIN}/10/${lot}`, path: `/01/${GTIN}/10/${lot}`, granularity: 'batch' },
      { identity: `https://id.gs1.org/01/${GTIN}/21/${item}`, path: `/01/${GTIN}/21/${item}`, granularity: 'item' },
      { identity: `https://id.gs1.org/01/${GTIN}/22/${variant}`, path: `/01/${GTIN}/22/${variant}`, granularity: 'model' },
      { identity: `https://id.gs1.org/01/${GTIN}/22/${variant}/10/${lot}`, path: `/01/${GTIN}/22/${variant}/10/${lot}`, granularity: 'batch' },
      { identity: `https://id.gs1.org/01/${GTIN}/22/${variant}/21/${item}`, path: `/01/${GTIN}/22/${variant}/21/${item}`, granularity: 'item' },
      { identity: `https://id.gs1.org/01/${GTIN}/10/${lot}/21/${item}`, path: `/01/${GTIN}/10/${lot}/21/${item}`, granularity: 'item' },
      { identity: `https://id.gs1.org/01/${GTIN}/22/${variant}/10/${lot}/21/${item}`, path: `/01/${GTIN}/22/${variant}/10/${lot}/21/${item}`, granularity: 'item' },
    ];
    for (const { identity, path, granularity } of cases) {
      const id = await issue(identity);
      const links = await linksetOf(path);
      expect(links.anchor).toBe(`${PUBLIC_ISSUER}${path}`);
      expect(links.itemDescription).toContain(granularity);
      expect(links[`${GS1}defaultLink`]).toEqual([{ href: passportUrl(id), title: 'Digital product passport' }]);
      expect(links[`${GS1}dpp`]).toEqual([
        { href: passportUrl(id), title: 'Digital product passport (draft)', type: 'application/json' },
        { href: `${passportUrl(id)}/credential`, title: 'UNTP Digital Product Passport credential', type: 'application/vc+jwt' },
      ]);
      expect(links[`${GS1}pip`]).toEqual([expect.objectContaining({ href: 'https://dpp.example.test/verify/', type: 'text/html' })]);
      expect(links.archives).toEqual([expect.objectContaining({ href: `${platform.base('archive')}/snapshots?passport_id=${id}`, type: 'application/json' })]);
      expect(links['predecessor-version']).toBeUndefined();
      // ?linkType=linkset asks for the same linkset without Accept; `all` is GS1's older spelling.
      expect(await linksetOf(`${path}?linkType=linkset`, {})).toEqual(links);
      expect(await linksetOf(`${path}?linkType=all`, {})).toEqual(links);
      // The passport the default link names is the one issued, read through the proxy's mapping.
      const passport = await fetch(local(links[`${GS1}defaultLink`][0].href));
      expect(((await passport.json()) as { passport_id: string }).passport_id).toBe(id);
    }
  });

  it('resolves equal identities alike: a GTIN-13 path, a trailing slash, a passport issued under its EPC URN', async () => {
    const item = fresh('EPC');
    // urn:epc:id:sgtin:{company prefix}.{indicator + item reference}.{serial} of GTIN 09520123456788.
    const id = await issue(`urn:epc:id:sgtin:9520123.045678.${item}`);
    const canonical = await linksetOf(`/01/${GTIN}/21/${item}`);
    expect(canonical[`${GS1}defaultLink`][0].href).toBe(passportUrl(id));
    expect(await linksetOf(`/01/${GTIN.slice(1)}/21/${item}`)).toEqual(canonical);
    expect(await linksetOf(`/01/${GTIN}/21/${item}/`)).toEqual(canonical);
    // GS1 Digital Link data attributes in the query are not part of the identity.
    expect(await linksetOf(`/01/${GTIN}/21/${item}?17=271231`)).toEqual(canonical);
    const { data } = await platform.graphql(`{ identityResolution(identifier: "https://example.test/01/${GTIN.slice(1)}/21/${item}") { digitalLink granularity current { id } passports { id } } }`);
    expect(data.identityResolution).toEqual({ digitalLink: `https://id.gs1.org/01/${GTIN}/21/${item}`, granularity: 'item', current: { id }, passports: [{ id }] });
  });

  it('gives the same links as application/linkset, which an RFC 8288 parser reads', async () => {
    const item = fresh('TXT');
    await issue(`https://id.gs1.org/01/${GTIN}/21/${item}`);
    const json = await linksetOf(`/01/${GTIN}/21/${item}`);
    const answer = await resolve(`/01/${GTIN}/21/${item}`, { accept: 'application/linkset' });
    expect([answer.status, answer.headers.get('content-type')]).toEqual([200, 'application/linkset']);
    const parsed = LinkHeader.parse(answer.text).refs;
    const expected = Object.entries(json)
      .filter(([rel]) => rel !== 'anchor' && rel !== 'itemDescription')
      .flatMap(([rel, targets]) =>
        (targets as { href: string; title: string; type?: string }[]).map((target) => ({
          uri: target.href,
          rel,
          anchor: json.anchor,
          title: target.title,
          ...(target.type ? { type: target.type } : {}),
        })),
      );
    expect(parsed).toEqual(expected);
  });

  it('redirects a browser, or a client that asks for no linkset, to the default link, and ?linkType to another', async () => {
    const item = fresh('WEB');
    const id = await issue(`https://id.gs1.org/01/${GTIN}/21/${item}`);
    const path = `/01/${GTIN}/21/${item}`;
    const browser = await resolve(path, { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
    expect(browser.status).toBe(307);
    expect(browser.headers.get('location')).toBe(passportUrl(id));
    expect(browser.text).toBe('');
    // GS1-Conformant resolvers name the linkset in a Link header when they redirect.
    const [linksetLink] = LinkHeader.parse(browser.headers.get('link')!).rel('linkset');
    expect(linksetLink).toMatchObject({ uri: `${PUBLIC_ISSUER}${path}?linkType=linkset`, type: LINKSET });
    const linkset = await fetch(local(linksetLink!.uri));
    expect([linkset.status, linkset.headers.get('content-type')]).toEqual([200, LINKSET]);
    expect(((await linkset.json()) as { linkset: { anchor: string }[] }).linkset[0]!.anchor).toBe(`${PUBLIC_ISSUER}${path}`);
    for (const headers of [{}, { accept: '*/*' }] as Record<string, string>[]) {
      const answer = await resolve(path, headers);
      expect([answer.status, answer.headers.get('location')]).toEqual([307, passportUrl(id)]);
    }
    const head = await fetch(`${platform.base('issuer')}${path}`, { method: 'HEAD', redirect: 'manual' });
    expect([head.status, head.headers.get('location')]).toEqual([307, passportUrl(id)]);

    const redirects: [string, Record<string, string>, string][] = [
      ['gs1:pip', {}, 'https://dpp.example.test/verify/'],
      ['https://gs1.org/voc/pip', {}, 'https://dpp.example.test/verify/'],
      ['gs1:defaultLink', {}, passportUrl(id)],
      ['gs1:dpp', {}, passportUrl(id)],
      ['gs1:dpp', { accept: 'application/vc+jwt' }, `${passportUrl(id)}/credential`],
      ['archives', {}, `${platform.base('archive')}/snapshots?passport_id=${id}`],
    ];
    for (const [linkType, headers, location] of redirects) {
      const answer = await resolve(`${path}?linkType=${encodeURIComponent(linkType)}`, headers);
      expect([linkType, answer.status, answer.headers.get('location')]).toEqual([linkType, 307, location]);
    }
    // With a linkset media type, a link type narrows the linkset to its links.
    const narrowed = await linksetOf(`${path}?linkType=gs1:pip`);
    expect(Object.keys(narrowed).sort()).toEqual(['anchor', `${GS1}pip`, 'itemDescription'].sort());
  });

  it('answers a link type the identity has not, an unknown identity and a malformed one with problems', async () => {
    const item = fresh('ERR');
    await issue(`https://id.gs1.org/01/${GTIN}/21/${item}`);
    const problems: [string, number, string, Record<string, unknown>][] = [
      [`/01/${GTIN}/21/${item}?linkType=gs1:nosuchlt`, 404, 'LINK_TYPE_NOT_AVAILABLE', { link_type: 'gs1:nosuchlt' }],
      [`/01/${GTIN}/21/${item}?linkType=predecessor-version`, 404, 'LINK_TYPE_NOT_AVAILABLE', {}],
      [`/01/${GTIN}/21/${item}?linkType=memento`, 404, 'LINK_TYPE_NOT_AVAILABLE', {}],
      [`/01/${GTIN}/21/NEVER-ISSUED-${process.pid}`, 404, 'NOT_FOUND', { identity: `https://id.gs1.org/01/${GTIN}/21/NEVER-ISSUED-${process.pid}`, granularity: 'item' }],
      [`/01/${GTIN}/10/NEVER-ISSUED`, 404, 'NOT_FOUND', { granularity: 'batch' }],
      ['/01/09520123456787/21/X', 400, 'INVALID_IDENTITY', { reason: 'BAD_GTIN_CHECK_DIGIT' }],
      ['/01/0952012345678/21/X', 400, 'INVALID_IDENTITY', { reason: 'BAD_GTIN_CHECK_DIGIT' }],
      ['/01/12345/21/X', 400, 'INVALID_IDENTITY', { reason: 'BAD_GTIN_LENGTH' }],
      [`/01/${GTIN}/21/${'S'.repeat(21)}`, 400, 'INVALID_IDENTITY', { reason: 'BAD_AI_VALUE' }],
    ];
    for (const [path, status, code, members] of problems) {
      for (const accept of ['text/html', LINKSET]) {
        const answer = await resolve(path, { accept });
        expect([path, answer.status, answer.headers.get('content-type')]).toEqual([path, status, 'application/problem+json']);
        expect(answer.json()).toMatchObject({ status, code, ...members });
      }
    }
    // A malformed Digital Link path (a qualifier out of order, an unknown AI) names no resolver path.
    expect((await resolve(`/01/${GTIN}/21/${item}/10/L`)).status).toBe(404);
  });
});

describe('one live passport per identity (DESIGN §3)', () => {
  const passportRows = async (identity: string) =>
    (
      await sql<{ id: string; status: string; predecessor_id: string | null }>(
        platform.databaseUrl,
        'SELECT id, status, predecessor_id FROM "issuer".passport WHERE digital_link = $1 ORDER BY created_at',
        [identity],
      )
    ).rows;

  it('refuses a second live passport of an identity with a 409 naming the live one, in any spelling of the identity', async () => {
    const item = fresh('TWICE');
    const identity = `https://id.gs1.org/01/${GTIN}/21/${item}`;
    const first = await create(identity);
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(passportUrl(first.body.passport_id));
    expect(first.body.predecessor_id).toBeNull();
    const id = first.body.passport_id as string;
    for (const spelling of [identity, `https://resolver.example.test/products/01/${GTIN.slice(1)}/21/${item}`, `urn:epc:id:sgtin:9520123.045678.${item}`]) {
      const second = await create(spelling);
      expect([spelling, second.status, second.headers.get('content-type')]).toEqual([spelling, 409, 'application/problem+json']);
      expect(second.body).toMatchObject({ code: 'LIVE_PASSPORT_EXISTS', passport_id: id, passport_url: passportUrl(id), passport_status: 'draft', identity, granularity: 'item' });
      expect(second.body.detail).toContain(id);
    }
    // Active and suspended passports are live too.
    for (const type of ['activated', 'suspended']) {
      expect((await appendEvent(platform, id, type, PAYLOADS[type]!())).status).toBe(201);
      expect((await create(identity)).body).toMatchObject({ status: 409, code: 'LIVE_PASSPORT_EXISTS', passport_status: type === 'activated' ? 'active' : 'suspended' });
    }
    expect(await passportRows(identity)).toEqual([{ id, status: 'suspended', predecessor_id: null }]);
    // Another granularity of the same GTIN is another identity.
    expect((await create(`https://id.gs1.org/01/${GTIN}/10/${item}`)).status).toBe(201);
  });

  it('lets exactly one of several creations at once commit; the others are 409s naming it', async () => {
    for (let round = 0; round < 3; round += 1) {
      const identity = `https://id.gs1.org/01/${GTIN}/21/${fresh('RACE')}`;
      const answers = await Promise.all(Array.from({ length: 6 }, () => create(identity)));
      const created = answers.filter((answer) => answer.status === 201);
      expect(created).toHaveLength(1);
      const winner = created[0]!.body.passport_id as string;
      const refused = answers.filter((answer) => answer.status !== 201);
      expect(refused.map((answer) => [answer.status, answer.body.code, answer.body.passport_id, answer.body.passport_url])).toEqual(
        refused.map(() => [409, 'LIVE_PASSPORT_EXISTS', winner, passportUrl(winner)]),
      );
      expect(await passportRows(identity)).toEqual([{ id: winner, status: 'draft', predecessor_id: null }]);
    }
    // And a race of successors after a revocation: one successor, whose predecessor is the revoked passport.
    const identity = `https://id.gs1.org/01/${GTIN}/21/${fresh('RACE-NEXT')}`;
    const revoked = await issue(identity);
    expect((await appendEvent(platform, revoked, 'revoked', PAYLOADS.revoked!())).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 6 }, () => create(identity)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const successor = answers.find((answer) => answer.status === 201)!.body;
    expect(successor.predecessor_id).toBe(revoked);
    expect((await passportRows(identity)).map((row) => row.predecessor_id)).toEqual([null, revoked]);
  });

  it('issues a successor once the passport is revoked or at end of life, links it to its predecessor, and the resolver follows it', async () => {
    const item = fresh('NEXT');
    const identity = `https://id.gs1.org/01/${GTIN}/21/${item}`;
    const path = `/01/${GTIN}/21/${item}`;
    const first = await issue(identity);
    expect((await appendEvent(platform, first, 'revoked', PAYLOADS.revoked!())).status).toBe(201);
    // With no live passport the identity resolves to its newest, revoked.
    expect((await linksetOf(path))[`${GS1}dpp`][0]).toMatchObject({ href: passportUrl(first), title: 'Digital product passport (revoked)' });

    const second = await create(identity);
    expect(second.status).toBe(201);
    expect(second.body.predecessor_id).toBe(first);
    const secondId = second.body.passport_id as string;
    expect((await platform.rest('issuer', `/passports/${secondId}`)).body.predecessor_id).toBe(first);
    expect((await platform.rest('issuer', `/passports/${first}`)).body.predecessor_id).toBeNull();

    let links = await linksetOf(path);
    expect(links[`${GS1}defaultLink`][0].href).toBe(passportUrl(secondId));
    expect(links['predecessor-version']).toEqual([{ href: passportUrl(first), title: 'Previous passport of this item (revoked)', type: 'application/json' }]);
    const browser = await resolve(path, { accept: 'text/html' });
    expect(browser.headers.get('location')).toBe(passportUrl(secondId));
    expect((await resolve(`${path}?linkType=predecessor-version`)).headers.get('location')).toBe(passportUrl(first));

    // End of life ends a passport too: the third succeeds the second.
    for (const type of ['activated', 'end_of_life']) expect((await appendEvent(platform, secondId, type, PAYLOADS[type]!())).status).toBe(201);
    const thirdId = await issue(identity);
    links = await linksetOf(path);
    expect(links[`${GS1}defaultLink`][0].href).toBe(passportUrl(thirdId));
    expect(links['predecessor-version'][0]).toMatchObject({ href: passportUrl(secondId), title: 'Previous passport of this item (end_of_life)' });

    const { data, errors } = await platform.graphql(
      `query ($id: ID!, $identifier: String!) {
        passport(id: $id) { predecessorId predecessor { id status predecessor { id successor { id } } } successor { id } }
        identityResolution(identifier: $identifier) { current { id } passports { id status } }
      }`,
      { id: thirdId, identifier: identity },
    );
    expect(errors).toBeUndefined();
    expect(data.passport).toEqual({ predecessorId: secondId, predecessor: { id: secondId, status: 'end_of_life', predecessor: { id: first, successor: { id: secondId } } }, successor: null });
    expect(data.identityResolution).toEqual({
      current: { id: thirdId },
      passports: [
        { id: thirdId, status: 'draft' },
        { id: secondId, status: 'end_of_life' },
        { id: first, status: 'revoked' },
      ],
    });
  });

  it('links the archive snapshots of the current passport as mementos', async () => {
    const item = fresh('ARCH');
    const id = await issue(`https://id.gs1.org/01/${GTIN}/21/${item}`);
    const snapshot = await platform.rest('archive', '/snapshots', { body: { passport_id: id }, as: 'writer' });
    expect(snapshot.status, snapshot.text).toBe(201);
    const links = await linksetOf(`/01/${GTIN}/21/${item}`);
    expect(links.memento).toEqual([{ href: snapshot.body.href, title: `Archive snapshot of ${snapshot.body.created_at}`, type: 'application/x-tar' }]);
    const bytes = await fetch(links.memento[0].href, { headers: { authorization: `Bearer ${TOKENS.writer}` } });
    expect([bytes.status, bytes.headers.get('content-type')]).toEqual([200, 'application/x-tar']);
    const listed = await fetch(links.archives[0].href);
    expect(((await listed.json()) as { snapshots: { id: string }[] }).snapshots.map((entry) => entry.id)).toEqual([snapshot.body.id]);
  });
});
