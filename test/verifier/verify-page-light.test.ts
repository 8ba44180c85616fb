/**
 * The verification page stays light as the trust graph grows (issue 29, item 6): a first visit
 * transfers the signed anchor bundle and the signed trust path material of the one key a pack
 * names, never the graph, so it costs the same bytes on a graph of N and of 10×N nodes, counted on
 * the wire by a relay in front of the facade (every byte, headers included, the service worker's
 * fetches too). An offline revisit verifies what the device checked before, and material altered
 * on its way or passed off as another key's is refused, as is a pack signed after its issuer was
 * revoked. GET /trust/keys/{kid}/path, the REST form of the material, is checked with jose.
 */
import type { Browser } from 'playwright-core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBase64Url, generateSecretKey, publicKeyOf, rawKeySigner, signJson } from '../../lib/crypto/index.js';
import { verifySignedJson } from '../issuer/support.js';
import { closeContexts, sharedBrowser } from '../support/browser.js';
import { countingRelay, firstVisit, type ByteCount, type CountingRelay } from '../support/page-visit.js';
import type { TestStack } from '../support/stack.js';
import { SyntheticTrustGraph } from '../support/synthetic-trust-graph.js';
import { anchorsLoaded, foreign, foreignSigned, mintedPack, openPage, pageTestStack, pastTheSecondOf, qrPng, verifyImage } from './page-support.js';

const MODEL = 'battery-verify-light';
const ROOT = 'root-verify-light';
const ISSUER = 'issuer-verify-light';
/** Synthetic trust nodes of the smaller graph; the larger has ten times as many. */
const N = 1_000;
/** What a first visit may transfer (issue 29: at most 2 MB at 100,000 nodes). */
const FIRST_VISIT_LIMIT = 2 * 1024 * 1024;
/** How far two first visits may differ: dates, signatures and lengths in headers, nothing that grows with the graph. */
const SAME_BYTES = 1024;

let platform: TestStack;
let browser: Browser;
let relay: CountingRelay;
let db: pg.Client;
let graph: SyntheticTrustGraph;
let pageUrl: string;
let genuine: { text: string; kid: string; passport: string };
let trustKeys: { keys: any[] };
/** The first visit at N trust nodes, kept open for a later check on the same device (a browser context costs ~1–2 CPU-s). */
let earlierVisit: Awaited<ReturnType<typeof firstVisit>> | undefined;

const total = (count: ByteCount) => count.sent + count.received;

beforeAll(async () => {
  const { platform: started, passport: passport_id } = await pageTestStack({ model: MODEL, root: ROOT, issuer: ISSUER });
  platform = started;
  genuine = { ...(await mintedPack(platform, passport_id)), passport: passport_id };
  trustKeys = (await platform.rest('trust', '/keyring')).body;
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  graph = new SyntheticTrustGraph(db);
  await graph.growTo(N);
  relay = await countingRelay(platform.stack.facade.url);
  pageUrl = `${relay.origin}/verify/`;
  browser = await sharedBrowser();
}, 180_000);
afterAll(async () => {
  await closeContexts(browser);
  await relay?.close();
  await db?.end();
  await platform?.stop();
});

describe('GET /trust/keys/{kid}/path', () => {
  it("is the trust service's signed part of the graph that decides the key's standing: its holders, their ancestry, the edges into them", async () => {
    const issuer = graph.issuers[Math.floor(graph.issuers.length / 2)]!;
    const kid = graph.keys[issuer]!.jwk.kid;
    const answer = await platform.rest('trust', `/keys/${kid}/path`);
    expect([answer.status, answer.headers.get('cache-control')]).toEqual([200, 'no-store']);
    const material = answer.body as { type: string; kid: string; issued_at: string; nodes: { id: string; kind: string }[]; edges: { iss: string; sub: string }[]; revocations: unknown[] };
    await verifySignedJson(material, trustKeys.keys);
    expect([material.type, material.kid, material.revocations]).toEqual(['key-path', kid, []]);
    expect(Date.now() - Date.parse(material.issued_at)).toBeLessThan(60_000);
    // The issuer, the authorities that delegate to it and the roots that delegate to them: nothing else of the graph.
    const ids = new Set(material.nodes.map((node) => node.id));
    expect(ids.has(`node-${issuer}`)).toBe(true);
    for (const edge of material.edges) expect([ids.has(edge.iss), ids.has(edge.sub)]).toEqual([true, true]);
    expect(material.edges.filter((edge) => edge.sub === `node-${issuer}`).length).toBeGreaterThanOrEqual(1);
    expect(material.nodes.some((node) => node.kind === 'root')).toBe(true);
    expect(material.nodes.length).toBeLessThanOrEqual(8);

    // A key no node lists: signed empty lists, the service's word that it vouches for nothing under that kid.
    const unknown = await platform.rest('trust', `/keys/${'A'.repeat(43)}/path`);
    expect(unknown.status).toBe(200);
    await verifySignedJson(unknown.body, trustKeys.keys);
    expect([unknown.body.nodes, unknown.body.edges, unknown.body.revocations]).toEqual([[], [], []]);
    // Not a thumbprint: a problem, nothing read.
    const malformed = await platform.rest('trust', '/keys/not-a-kid/path');
    expect([malformed.status, malformed.body.code]).toEqual([400, 'INVALID_QUERY']);

    // The page's copy is the same material.
    const pageCopy = (await (await fetch(`${pageUrl}keys/${kid}.json`)).json()) as typeof material;
    await verifySignedJson(pageCopy as unknown as Record<string, unknown>, trustKeys.keys);
    expect({ ...pageCopy, issued_at: undefined, signature: undefined }).toEqual({ ...material, issued_at: undefined, signature: undefined });
  });
});

describe('GET /verify/ static files', () => {
  it("are tagged by their content, so a revalidation (the service worker's install after the page loaded them) is a 304 without the body", async () => {
    for (const file of ['', 'style.css', 'app.js', 'jsqr.js', 'sw.js']) {
      const first = await fetch(`${pageUrl}${file}`);
      const tag = first.headers.get('etag');
      expect([first.status, first.headers.get('cache-control'), tag], file).toEqual([200, 'no-cache', expect.stringMatching(/^"[A-Za-z0-9_-]{43}"$/)]);
      await first.arrayBuffer();
      const again = await fetch(`${pageUrl}${file}`, { headers: { 'if-none-match': tag! } });
      expect([again.status, again.headers.get('etag'), again.headers.get('content-security-policy'), (await again.arrayBuffer()).byteLength], file).toEqual([
        304,
        tag,
        expect.stringContaining("default-src 'self'"),
        0,
      ]);
    }
    // The trust material is never revalidated from a copy: it is read and signed anew.
    const anchors = await fetch(`${pageUrl}anchors.json`);
    expect([anchors.headers.get('cache-control'), anchors.headers.get('etag')]).toEqual(['no-store', null]);
  });
});

describe('the light verification page', () => {
  it(`transfers the same bytes on a first visit at ${N.toLocaleString('en')} and ${(10 * N).toLocaleString('en')} trust nodes, under 2 MB, and verifies offline on a revisit`, async () => {
    const visits: { size: number; nodes: number; bytes: ByteCount }[] = [];
    let revisit: Awaited<ReturnType<typeof firstVisit>> | undefined;
    for (const size of [N, 10 * N]) {
      await graph.growTo(size);
      const nodes = Number((await db.query<{ nodes: string }>('SELECT count(*) AS nodes FROM trust.trust_node')).rows[0]!.nodes);
      relay.reset();
      const visit = await firstVisit(browser, pageUrl, await qrPng(genuine.text));
      const bytes = relay.count();
      expect(visit.verdict.state, visit.verdict.text).toBe('valid');
      expect(visit.verdict.text).toContain(`${ROOT} → ${ISSUER}`);
      visits.push({ size, nodes, bytes });
      earlierVisit ??= visit;
      revisit = visit;
    }
    console.log(
      'first visit of /verify/, every byte on the wire:',
      visits.map(({ nodes, bytes }) => `${nodes} trust nodes: ${bytes.received} B received, ${bytes.sent} B sent`),
      visits[0]!.bytes.requests,
    );
    const [small, large] = visits as [(typeof visits)[0], (typeof visits)[0]];
    expect(large.nodes).toBeGreaterThan(9 * small.nodes);
    expect(Math.abs(total(large.bytes) - total(small.bytes))).toBeLessThanOrEqual(SAME_BYTES);
    expect(total(large.bytes)).toBeLessThan(FIRST_VISIT_LIMIT);
    // What was fetched: the page's files, the bundle, the one key's material; never the graph.
    for (const visit of [small, large]) {
      expect(visit.bytes.requests).toContain(`GET /verify/keys/${genuine.kid}.json`);
      expect(visit.bytes.requests.filter((request) => /graph/.test(request))).toEqual([]);
    }

    // Offline: the page, its bundle and the path material of the key it checked come from the device.
    const { context, page } = revisit!;
    await context.setOffline(true);
    await context.route('**/*', (route) => route.abort('internetdisconnected'));
    relay.reset();
    await page.reload();
    await anchorsLoaded(page, 'yes');
    const offline = await verifyImage(page, await qrPng(genuine.text));
    expect(offline.state, offline.text).toBe('valid');
    expect(offline.text).toContain(`${ROOT} → ${ISSUER}`);
    // A key this device never checked: it says so, rather than judging without the material.
    const neverSeen = await verifyImage(page, await qrPng(foreign(genuine.text)));
    expect([neverSeen.state, neverSeen.code]).toEqual(['invalid', 'NO_TRUST_PATH']);
    expect(neverSeen.text).toContain('has not yet fetched the trust path');
    // Nothing reached the platform but, at most, the browser's own update check of the service worker's
    // script, which Chromium's emulated offline mode lets through (a device really offline fails it, harmlessly).
    expect(relay.count().requests.filter((request) => request !== 'GET /verify/sw.js')).toEqual([]);
    await context.close();
  }, 180_000);

  it("refuses trust path material altered on its way, or another key's material passed off as a forged key's", async () => {
    const forged = foreignSigned(genuine.text);
    // A device that has checked the genuine pack, and never the forged key: the first visit above.
    const { context, page } = earlierVisit ?? (await firstVisit(browser, pageUrl, await qrPng(genuine.text)));
    const genuineMaterial = async () => (await (await fetch(`${pageUrl}keys/${genuine.kid}.json`)).json()) as { kid: string; nodes: { id: string; keys: object[] }[] };
    // A forger's key slipped into the trusted issuer's node, in the genuine material relabelled for that key.
    await context.route(`**/verify/keys/${forged.jwk.kid}.json`, async (route) => {
      const material = await genuineMaterial();
      material.nodes.find((node) => node.id === ISSUER)!.keys.push({ ...forged.jwk, iat: Math.floor(Date.now() / 1000) - 3600 });
      await route.fulfill({ json: { ...material, kid: forged.jwk.kid } });
    });
    const altered = await verifyImage(page, await qrPng(forged.text));
    expect([altered.state, altered.code]).toEqual(['invalid', 'BAD_TRUST_PATH']);
    expect(altered.text).toContain('Not verified: Altered trust path');

    // The genuine material, signature intact, served for the forger's key: it is about another key.
    await context.unroute(`**/verify/keys/${forged.jwk.kid}.json`);
    await context.route(`**/verify/keys/${forged.jwk.kid}.json`, async (route) => route.fulfill({ json: await genuineMaterial() }));
    const swapped = await verifyImage(page, await qrPng(forged.text));
    expect([swapped.state, swapped.code]).toEqual(['invalid', 'BAD_TRUST_PATH']);
    // The genuine pack, meanwhile, still verifies in the same page.
    expect((await verifyImage(page, await qrPng(genuine.text))).state).toBe('valid');
    await context.close();

    // A forger who also serves the keyring: a key of their own listed first under the trust key's kid
    // (its thumbprint is not that kid), and the forged material signed with it under that kid.
    const trustKid = trustKeys.keys.find((key) => key.purpose === 'service')?.kid ?? trustKeys.keys[0]!.kid;
    const secret = generateSecretKey('Ed25519');
    const impostor = { kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(publicKeyOf('Ed25519', secret)), kid: trustKid };
    const withImpostor = await browser.newContext();
    await withImpostor.route('**/verify/anchors.json', async (route) => {
      const material = await (await route.fetch()).json();
      material.trust_keyring.keys.unshift(impostor);
      await route.fulfill({ json: material });
    });
    await withImpostor.route(`**/verify/keys/${forged.jwk.kid}.json`, async (route) => {
      const { signature: _signature, ...material } = (await genuineMaterial()) as Record<string, unknown> & Awaited<ReturnType<typeof genuineMaterial>>;
      material.nodes.find((node) => node.id === ISSUER)!.keys.push({ ...forged.jwk, iat: Math.floor(Date.now() / 1000) - 3600 });
      await route.fulfill({ json: signJson({ ...material, kid: forged.jwk.kid }, rawKeySigner('Ed25519', trustKid, secret)) });
    });
    const impostorPage = await withImpostor.newPage();
    await openPage(impostorPage, pageUrl);
    const impostorSigned = await verifyImage(impostorPage, await qrPng(forged.text));
    expect([impostorSigned.state, impostorSigned.code]).toEqual(['invalid', 'BAD_TRUST_PATH']);
    await withImpostor.close();
  });

  it('refuses a pack signed after its issuer was revoked, and notes the revocation on a pack signed before', async () => {
    const declared = await platform.rest('trust', '/revocations', { body: { subject: ISSUER, reason: 'cessationOfOperation' }, as: 'admin' });
    expect(declared.status, JSON.stringify(declared.body)).toBe(201);
    await pastTheSecondOf(declared.body.effective_at);
    const afterRevocation = await mintedPack(platform, genuine.passport);
    const context = await browser.newContext();
    const page = await context.newPage();
    await openPage(page, pageUrl);
    const refused = await verifyImage(page, await qrPng(afterRevocation.text));
    expect([refused.state, refused.code]).toEqual(['invalid', 'REVOKED_KEY']);
    expect(refused.text).toContain('cessationOfOperation');
    const before = await verifyImage(page, await qrPng(genuine.text));
    expect(before.state, before.text).toBe('valid');
    expect(before.text).toContain("the issuer's key was revoked later");
    await context.close();
  });
});
