/**
 * The verification page at /verify/ in a real browser (Debian's Chromium driven by playwright-core),
 * against the whole platform: a pack minted through the REST API is rendered as a QR image, opened
 * in the page, and judged there with WebCrypto against the pinned anchor bundle. Tampered, foreign,
 * unreadable and revoked-key packs and an expired bundle are refused with the reason a person
 * reads; the page asks nothing of any host but its own, and verifies offline after one visit.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { deflateSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBase45 } from '../../lib/formats/issuer/base45.js';
import { decodeCbor, encodeCbor } from '../../lib/formats/issuer/cose.js';
import { decodePack, PACK_PREFIX } from '../../lib/formats/issuer/pack.js';
import { appendEvent, PAYLOADS, verifySignedJson } from '../issuer/support.js';
import { CAMERA_VIDEO, closeContexts, sharedBrowser } from '../support/browser.js';
import type { TestStack } from '../support/stack.js';
import { anchorsLoaded, foreign, isLocal, mintedPack, openPage, pageTestStack, pastTheSecondOf, qrPng, serviceWorkerInControl, verifyImage } from './page-support.js';

const ARTIFACTS = new URL('../artifacts/verify-page/', import.meta.url);
const MODEL = 'battery-verify-page';
const ROOT = 'root-verify-page';
const ISSUER = 'issuer-verify-page';

let platform: TestStack;
let browser: Browser;
let pageUrl: string;
let genuine: { text: string; kid: string; passport: string };

const mint = (passport: string) => mintedPack(platform, passport);

/**
 * The QR code as a camera would film it: a Y4M video (4:2:0, two frames) that Chromium plays as its
 * fake camera. The code is drawn in the luma plane on white; the chroma planes are neutral.
 */
async function qrVideo(text: string, width = 640, height = 480): Promise<Buffer> {
  const qr = PNG.sync.read(await qrPng(text));
  if (qr.width > width || qr.height > height) throw new Error(`the QR image (${qr.width}×${qr.height}) does not fit the ${width}×${height} frame`);
  const luma = Buffer.alloc(width * height, 255);
  const left = (width - qr.width) >> 1;
  const top = (height - qr.height) >> 1;
  for (let y = 0; y < qr.height; y += 1) for (let x = 0; x < qr.width; x += 1) luma[(top + y) * width + left + x] = qr.data[(y * qr.width + x) * 4]!;
  const frame = Buffer.concat([Buffer.from('FRAME\n'), luma, Buffer.alloc((width * height) / 2, 128)]);
  return Buffer.concat([Buffer.from(`YUV4MPEG2 W${width} H${height} F10:1 Ip A1:1 C420jpeg\n`), frame, frame]);
}

/** The pack with one claim changed and the original signature kept: what a forger who edits the code makes. */
function tampered(text: string, key: number, value: unknown): string {
  const { cose } = decodePack(text);
  const claims = decodeCbor(cose.payload) as Map<number, unknown>;
  claims.set(key, value);
  const message = encodeCbor([cose.protected_header, new Map(), encodeCbor(claims), cose.signature]);
  return PACK_PREFIX + encodeBase45(deflateSync(Buffer.concat([Buffer.from([0xd2]), message])));
}

async function newContext(): Promise<{ context: BrowserContext; page: Page; requested: string[] }> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
  const requested: string[] = [];
  context.on('request', (request) => requested.push(request.url()));
  const page = await context.newPage();
  page.on('pageerror', (error) => console.error('[page error]', error));
  page.on('console', (message) => console.error('[page console]', message.type(), message.text()));
  return { context, page, requested };
}

const open = (page: Page) => openPage(page, pageUrl);

async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname, fullPage: true });
}

beforeAll(async () => {
  const { platform: started, passport: passport_id } = await pageTestStack({ model: MODEL, root: ROOT, issuer: ISSUER });
  platform = started;
  expect((await appendEvent(platform, passport_id, 'ObjectEvent', PAYLOADS.ObjectEvent!())).status).toBe(201);
  genuine = { ...(await mint(passport_id)), passport: passport_id };
  pageUrl = `${platform.stack.facade.url}/verify/`;
  // The worker's browser (test/support/browser.ts): its fake camera plays the video written here, the
  // genuine pack's QR code, when the camera test opens it.
  await writeFile(CAMERA_VIDEO, await qrVideo(genuine.text));
  browser = await sharedBrowser();
}, 180_000);
afterAll(async () => {
  await closeContexts(browser);
  await rm(CAMERA_VIDEO, { force: true });
  await platform?.stop();
});

describe('GET /verify/', () => {
  it('serves the page, its script and jsQR from the platform with a strict CSP, and the signed anchor bundle', async () => {
    const root = await fetch(`${platform.stack.facade.url}/verify`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([308, '/verify/']);
    const html = await fetch(pageUrl);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = html.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await html.text()).not.toMatch(/<script>|<style>|\son\w+=|https?:\/\//);
    for (const [file, type] of [
      ['app.js', 'text/javascript'],
      ['jsqr.js', 'text/javascript'],
      ['style.css', 'text/css'],
      ['sw.js', 'text/javascript'],
    ]) {
      const response = await fetch(`${pageUrl}${file}`);
      expect(response.status, file).toBe(200);
      expect(response.headers.get('content-type'), file).toBe(`${type}; charset=utf-8`);
      expect(response.headers.get('cache-control'), file).toBe('no-cache');
      expect(await response.text(), file).not.toMatch(/\bhttps?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\/[^\s"'`]*\.(?:js|css|woff2?)\b/);
    }
    const head = await fetch(`${pageUrl}style.css`, { method: 'HEAD' });
    const css = await (await fetch(`${pageUrl}style.css`)).arrayBuffer();
    expect([head.status, head.headers.get('content-length'), (await head.arrayBuffer()).byteLength]).toEqual([200, String(css.byteLength), 0]);
    expect((await fetch(`${pageUrl}nothing-here.js`)).status).toBe(404);
    const post = await fetch(`${pageUrl}app.js`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);

    // The bundle the page pins is the trust service's own signed document, which jose verifies under /trust/keyring.
    const anchors = await fetch(`${pageUrl}anchors.json`);
    expect(anchors.headers.get('cache-control')).toBe('no-store');
    const material = (await anchors.json()) as { anchor_bundle: Record<string, unknown>; trust_keyring: { keys: any[] } };
    expect(Object.keys(material).sort()).toEqual(['anchor_bundle', 'trust_keyring']);
    const trustKeyring = (await platform.rest('trust', '/keyring')).body as { keys: any[] };
    await verifySignedJson(material.anchor_bundle, trustKeyring.keys);
    expect((material.anchor_bundle.roots as { id: string }[]).map((root) => root.id)).toContain(ROOT);
    // The trust graph is not served whole: the page fetches the signed path material of the one key a pack names.
    expect((await fetch(`${pageUrl}graph.json`)).status).toBe(404);
    const keyPath = await fetch(`${pageUrl}keys/${genuine.kid}.json`);
    expect([keyPath.status, keyPath.headers.get('cache-control')]).toEqual([200, 'no-store']);
    const part = (await keyPath.json()) as { type: string; kid: string; nodes: { id: string }[] };
    await verifySignedJson(part, trustKeyring.keys);
    expect([part.type, part.kid]).toEqual(['key-path', genuine.kid]);
    expect(part.nodes.map((node) => node.id)).toEqual(expect.arrayContaining([ROOT, ISSUER]));
    expect((await fetch(`${pageUrl}keys/not-a-thumbprint.json`)).status).toBe(404);
  });
});

/**
 * What needs nothing of the browser but a visit: one page opened once (a browser context with its
 * renderer costs ~1–2 CPU-s: test/support/browser.ts), shown one image after another (each verdict
 * waited for on its own: test/support/page-visit.ts), then filmed by the camera, revisited after a
 * revocation, and the bundle's expiry last.
 */
describe('the verification page, in one visit,', () => {
  let visit: Awaited<ReturnType<typeof newContext>>;
  beforeAll(async () => {
    visit = await newContext();
    await open(visit.page);
  });
  afterAll(() => visit?.context.close());

  it('verifies a genuine pack from its QR image: issuer, trust path, status at signing, what was covered', async () => {
    const { page, requested } = visit;
    await expect.poll(() => page.locator('#anchors').innerText()).toContain('Signature verified');
    const verdict = await verifyImage(page, await qrPng(genuine.text));
    expect(verdict.state, verdict.text).toBe('valid');
    expect(verdict.text).toContain('Genuine: signed by a trusted issuer');
    expect(verdict.text).toContain(ISSUER);
    expect(verdict.text).toContain(`${ROOT} → ${ISSUER}`);
    expect(verdict.text).toContain(genuine.passport);
    expect(verdict.text).toMatch(/Status when signed\s+active/);
    expect(verdict.text).toContain(`ES256 signature by key ${genuine.kid}`);
    expect(verdict.text).toContain('the signed head of its event log (size 2)');
    expect(verdict.text).toContain('What was not checked');
    expect(verdict.text).toContain('whether the status changed after signing');
    // Accessible names a screen reader announces, and the verdict region it reads out.
    await expect.poll(() => page.getByRole('button', { name: 'Scan with the camera' }).count()).toBe(1);
    await expect.poll(() => page.getByLabel('Open an image of the QR code').count()).toBe(1);
    expect(await page.locator('#verdict').getAttribute('aria-live')).toBe('polite');
    await screenshot(page, 'genuine');

    // The optional online step: the latest signed head, checked in the page under the issuer's key.
    expect((await appendEvent(platform, genuine.passport, 'ObjectEvent', PAYLOADS.ObjectEvent!())).status).toBe(201);
    await page.getByRole('button', { name: 'Check the current status online' }).click();
    await expect.poll(() => page.locator('#latest-result').innerText()).toBe('Now: status active; the signed log holds 3 events, 1 more than when the code was signed.');
    expect(requested.filter((url) => !isLocal(url))).toEqual([]);
  });

  it('refuses a tampered pack (a claim edited, signature kept) as a bad signature', async () => {
    const { page, requested } = visit;
    const verdict = await verifyImage(page, await qrPng(tampered(genuine.text, -3, 'suspended')));
    expect(verdict.state).toBe('invalid');
    expect(verdict.code).toBe('BAD_SIGNATURE');
    expect(verdict.text).toContain('Not verified: Bad signature');
    expect(verdict.text).toContain('altered after it was signed');
    // What the forged code claims is shown as unconfirmed, never as the verdict.
    expect(verdict.text).toContain('unconfirmed');
    await screenshot(page, 'tampered');
    expect(requested.filter((url) => !isLocal(url))).toEqual([]);
  });

  it('refuses a pack signed by a key outside the bundle as from an unknown issuer', async () => {
    const { page } = visit;
    const verdict = await verifyImage(page, await qrPng(foreign(genuine.text)));
    expect([verdict.state, verdict.code]).toEqual(['invalid', 'UNKNOWN_ISSUER']);
    expect(verdict.text).toContain('Not verified: Unknown issuer');
    expect(verdict.text).toContain('no issuer in the trust anchor bundle holds');
    await screenshot(page, 'foreign');
  });

  it('says the code is unreadable for a picture without a QR code, a QR code of something else, and a damaged pack', async () => {
    const { page } = visit;
    const blank = new PNG({ width: 120, height: 120 });
    blank.data.fill(255);
    const noCode = await verifyImage(page, PNG.sync.write(blank), 'blank.png');
    expect([noCode.state, noCode.code]).toEqual(['invalid', 'UNREADABLE_CODE']);
    expect(noCode.text).toContain('No QR code could be read from this image');
    const notAPack = await verifyImage(page, await qrPng('https://example.org/not-a-passport'));
    expect(notAPack.code).toBe('UNREADABLE_CODE');
    expect(notAPack.text).toContain('not a product passport');
    const damaged = await verifyImage(page, await qrPng(`${genuine.text.slice(0, 40)}${genuine.text.slice(60)}`));
    expect(damaged.code).toBe('UNREADABLE_CODE');
    expect(damaged.text).toContain('damaged and cannot be read');
  });

  it('reads the QR code from the camera (getUserMedia) and verifies it', async () => {
    const { page } = visit;
    // The browser's fake camera films the genuine pack's code (beforeAll). The verdict shown so far is
    // marked stale, so that only the camera's ends the wait.
    await page.locator('#verdict').evaluate((element) => element.setAttribute('data-state', 'stale'));
    await page.getByRole('button', { name: 'Scan with the camera' }).click();
    await expect.poll(() => page.locator('#verdict').getAttribute('data-state'), { timeout: 20_000 }).toBe('valid');
    expect(await page.locator('#verdict').innerText()).toContain(`${ROOT} → ${ISSUER}`);
    expect(await page.locator('#camera-status').innerText()).toBe('QR code read.');
    // The camera is released once the code is read.
    expect(await page.locator('#camera').isHidden()).toBe(true);
  });

  it('refuses a pack signed after the issuer key was revoked, and notes a revocation after signing', async () => {
    // The visitor held the graph from before the revocation (the genuine pack checked above): the next visit revalidates it and gets the new version.
    const { page } = visit;
    const declared = await platform.rest('trust', '/revocations', { body: { subject: `${ISSUER}#${genuine.kid}`, reason: 'keyCompromise' }, as: 'admin' });
    expect(declared.status, JSON.stringify(declared.body)).toBe(201);
    await pastTheSecondOf(declared.body.effective_at);
    const afterRevocation = await mint(genuine.passport);
    await page.reload();
    await anchorsLoaded(page, 'yes');
    const verdict = await verifyImage(page, await qrPng(afterRevocation.text));
    expect([verdict.state, verdict.code]).toEqual(['invalid', 'REVOKED_KEY']);
    expect(verdict.text).toContain('Not verified: Revoked key');
    expect(verdict.text).toContain('keyCompromise');
    await screenshot(page, 'revoked-key');
    const earlier = await verifyImage(page, await qrPng(genuine.text));
    expect(earlier.state, `${earlier.code} ${earlier.text}`).toBe('valid');
    expect(earlier.text).toContain("the issuer's key was revoked later");
  });

  it('refuses every pack once the pinned bundle is older than 7 days', async () => {
    const { page } = visit;
    await page.clock.setFixedTime(new Date(Date.now() + 8 * 86_400_000));
    const verdict = await verifyImage(page, await qrPng(genuine.text));
    expect([verdict.state, verdict.code]).toEqual(['invalid', 'EXPIRED_BUNDLE']);
    expect(verdict.text).toContain('Not verified: Expired bundle');
    expect(verdict.text).toContain('8 days old');
    await expect.poll(() => page.locator('#anchors').innerText()).toContain('Expired bundle');
    await screenshot(page, 'expired-bundle');
  });
});

describe('the verification page, in a visit of its own,', () => {
  it('refuses an anchor bundle altered on its way to the page, and verifies nothing with it', async () => {
    const { context, page } = await newContext();
    // A root's id changed in transit: the trust service's signature no longer covers the bundle.
    await context.route('**/verify/anchors.json', async (route) => {
      const material = await (await route.fetch()).json();
      material.anchor_bundle.roots[0].id = 'root-of-a-forger';
      await route.fulfill({ json: material });
    });
    await page.goto(pageUrl);
    await anchorsLoaded(page, 'no');
    expect(await page.locator('#anchors').getAttribute('data-state')).toBe('invalid');
    expect(await page.locator('#anchors').innerText()).toContain("does not verify under the trust service's keys");
    const verdict = await verifyImage(page, await qrPng(genuine.text));
    expect([verdict.state, verdict.code]).toEqual(['invalid', 'NO_BUNDLE']);
    await context.close();
  });
});

/** A keyboard user's visit, which then goes offline: one browser context for both. */
describe("the verification page, in a keyboard user's visit,", () => {
  let keyboardVisit: Awaited<ReturnType<typeof newContext>>;
  beforeAll(async () => {
    keyboardVisit = await newContext();
  });
  afterAll(() => keyboardVisit?.context.close());

  it('can be used with the keyboard alone', async () => {
    const { page } = keyboardVisit;
    // Playwright asks the browser to intercept file choosers when the first listener is added, and
    // that request can lose the race with a key press sent right after it (puppeteer#6040): listen first.
    const chooser = page.waitForEvent('filechooser', { timeout: 20_000 });
    await open(page);
    const focused = () => page.evaluate('document.activeElement && document.activeElement.id');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('camera-start');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('image-input');
    // The file chooser opens from the keyboard as from a tap.
    await page.keyboard.press('Space');
    await (await chooser).setFiles({ name: 'passport-qr.png', mimeType: 'image/png', buffer: await qrPng(genuine.text) });
    await expect.poll(() => page.locator('#verdict').getAttribute('data-state'), { timeout: 15_000 }).toBe('valid');
  }, 60_000);

  it('verifies offline after the first visit: the service worker serves the page and the pinned bundle, the page keeps the path material of what it checked', async () => {
    // The keyboard user's visit, opened anew: the same device goes offline.
    const { context, page, requested } = keyboardVisit;
    await open(page);
    // Installed (the page files and the bundle cached) and in control of the page.
    await serviceWorkerInControl(page);
    // Checked once online: the signed trust path of its key is kept on the device.
    expect((await verifyImage(page, await qrPng(genuine.text))).state).toBe('valid');
    await context.setOffline(true);
    // Nothing reaches the network from here on, the service worker's own fetches included.
    const reachedNetwork: string[] = [];
    await context.route('**/*', (route) => {
      reachedNetwork.push(route.request().url());
      return route.abort('internetdisconnected');
    });
    await page.reload();
    await anchorsLoaded(page, 'yes');
    const verdict = await verifyImage(page, await qrPng(genuine.text));
    expect(verdict.state, verdict.text).toBe('valid');
    expect(verdict.text).toContain(`${ROOT} → ${ISSUER}`);
    const refused = await verifyImage(page, await qrPng(tampered(genuine.text, -3, 'suspended')));
    expect(refused.code).toBe('BAD_SIGNATURE');
    await verifyImage(page, await qrPng(genuine.text));
    await page.getByRole('button', { name: 'Check the current status online' }).click();
    await expect.poll(() => page.locator('#latest-result').innerText()).toContain('The online check failed');
    await screenshot(page, 'offline');
    expect(requested.filter((url) => !isLocal(url))).toEqual([]);
  });
});
