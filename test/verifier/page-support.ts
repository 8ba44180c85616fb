/**
 * What the tests of the verification page share: Debian's Chromium as playwright-core drives it (one per worker: test/support/browser.ts),
 * packs minted through the REST API and drawn as QR images, a pack forged under a foreign key, and
 * the steps a person takes in the page (open it, pick an image, read the verdict: test/support/page-visit.ts).
 */
import { existsSync } from 'node:fs';
import type { Page } from 'playwright-core';
import QRCode from 'qrcode';
import { expect } from 'vitest';
import { encodeBase64Url, generateSecretKey, jwkThumbprint, publicKeyOf, rawKeySigner } from '../../lib/crypto/index.js';
import { decodePack, mintPack } from '../../lib/formats/issuer/pack.js';
import { trustTheIssuer } from '../gateway/support.js';
import { appendEvent, createModel, createPassport, PAYLOADS } from '../issuer/support.js';
import { CHROMIUM } from '../support/browser.js';
import { startTestStack, type TestStack } from '../support/stack.js';

export { serviceWorkerInControl, verdictOf as verifyImage } from '../support/page-visit.js';

export { CHROMIUM } from '../support/browser.js';

export const isLocal = (url: string) => {
  if (url.startsWith('data:') || url.startsWith('blob:') || url.startsWith('about:')) return true;
  const { hostname } = new URL(url);
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
};

/**
 * A stack for a page test (Chromium there first): a model, an issuer trusted under a root, and an
 * activated passport that can be verified offline.
 */
export async function pageTestStack(names: { model: string; root: string; issuer: string }): Promise<{ platform: TestStack; passport: string }> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is required at ${CHROMIUM} (Debian package chromium; npm test's first layer installs it: bin/system-packages.ts)`);
  const platform = await startTestStack();
  await createModel(platform, names.model);
  await trustTheIssuer(platform, { root: names.root, issuer: names.issuer });
  const { passport_id } = await createPassport(platform, names.model, { capability_class: 'verify-offline' });
  expect((await appendEvent(platform, passport_id, 'activated', PAYLOADS.activated!())).status).toBe(201);
  return { platform, passport: passport_id };
}

/** A new pack of the passport, minted by the issuer (POST /passports/{id}/pack). */
export async function mintedPack(platform: TestStack, passport: string): Promise<{ text: string; kid: string }> {
  const response = await platform.rest('issuer', `/passports/${passport}/pack`, { method: 'POST', as: 'writer' });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

/**
 * Waits until the clock is past the whole second `instant` falls in, so that a pack minted then has
 * an `iat` (whole seconds) after it: signed after a revocation effective at `instant`. (The 1.1 s the
 * tests waited before is 0.6 s more on average.)
 */
export async function pastTheSecondOf(instant: string): Promise<void> {
  const at = Date.parse(instant);
  expect(at, `an instant: ${instant}`).not.toBeNaN();
  // A few milliseconds more: a timer may fire by the event loop's clock, a little behind Date.now().
  const wait = Math.floor(at / 1000) * 1000 + 1000 + 5 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

const drawn = new Map<string, Promise<Buffer>>();

/** The text as a QR image; each text is drawn once a process (the tests show the same pack many times). */
export function qrPng(text: string): Promise<Buffer> {
  let image = drawn.get(text);
  if (!image) {
    image = QRCode.toBuffer(text, { errorCorrectionLevel: 'M', margin: 4, scale: 4 });
    drawn.set(text, image);
  }
  return image;
}

/** The same claims signed by a P-256 key nobody vouches for, and that key. */
export function foreignSigned(text: string): { text: string; jwk: { kty: 'EC'; crv: string; x: string; y: string; kid: string } } {
  const secret = generateSecretKey('ES256');
  const point = publicKeyOf('ES256', secret);
  const jwk = { kty: 'EC' as const, crv: 'P-256', x: encodeBase64Url(point.slice(1, 33)), y: encodeBase64Url(point.slice(33, 65)) };
  const kid = jwkThumbprint(jwk);
  return { text: mintPack(decodePack(text).claims, rawKeySigner('ES256', kid, secret)).text, jwk: { ...jwk, kid } };
}

export const foreign = (text: string) => foreignSigned(text).text;

/** Opens the page and waits until its anchor bundle is loaded and verified. */
export async function openPage(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await anchorsLoaded(page, 'yes');
}

/**
 * Waits until the page has tried its anchor bundle (it marks #anchors data-loaded once, when the
 * bundle is verified or refused) and expects that outcome. Playwright waits in the page for the
 * attribute rather than being asked every 50 ms, each ask a round trip to Chromium.
 */
export async function anchorsLoaded(page: Page, outcome: 'yes' | 'no'): Promise<void> {
  await page.locator('#anchors[data-loaded]').waitFor({ timeout: 15_000 });
  expect(await page.locator('#anchors').getAttribute('data-loaded')).toBe(outcome);
}
