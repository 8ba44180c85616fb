/**
 * GraphiQL in a real browser (Debian's Chromium driven by playwright-core): the page loads from the
 * gateway alone, runs a cross-service passport query — the issuer's passports with the registry's
 * type record, the archive's snapshots and trust's standing of their signing keys — and shows the
 * answer; no request leaves the machine.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, closeContexts, sharedBrowser } from '../support/browser.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { createModel, passportsAcrossServices, SHARED_TRUST, trustTheIssuerOnce } from './support.js';

const MODEL = 'battery-graphiql';

let platform: SharedTestStack;
let browser: Browser;
let ids: string[];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is required at ${CHROMIUM} (Debian package chromium; npm test's first layer installs it: bin/system-packages.ts)`);
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
  await trustTheIssuerOnce(platform);
  ids = await passportsAcrossServices(platform, MODEL, 2);
  browser = await sharedBrowser();
}, 180_000);
afterAll(async () => {
  await closeContexts(browser);
});

const isLocal = (url: string) => {
  if (url.startsWith('data:') || url.startsWith('blob:') || url.startsWith('about:')) return true;
  const { hostname } = new URL(url);
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
};

/** CodeMirror 5 keeps its editor object on its element: how GraphiQL's editors are read and written. */
type CodeMirrorElement = { CodeMirror: { setValue(text: string): void; getValue(): string } };

describe('GraphiQL', () => {
  it('loads offline, runs a cross-service passport query and shows the result', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1400 } });
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(platform.stack.gateway.graphiqlUrl);
    const editor = page.locator('.graphiql-query-editor .CodeMirror').first();
    await editor.waitFor();
    // Setting the editor's value is how a user's paste lands.
    const query = `query PassportInGraphiQL {
  passports(ids: ${JSON.stringify(ids)}) {
    id
    typeRecord { id kind }
    signingKeys { role standingAtFirstUse { standing rootId } }
    snapshots { id size }
  }
}`;
    await editor.evaluate((element, text) => (element as unknown as CodeMirrorElement).CodeMirror.setValue(text), query);
    const answered = page.waitForResponse((response) => response.url().endsWith('/graphql') && (response.request().postData() ?? '').includes('PassportInGraphiQL'));
    await page.locator('.graphiql-execute-button').click();
    const answer = (await (await answered).json()) as {
      data?: { passports: { id: string; typeRecord: { id: string }; signingKeys: { standingAtFirstUse: { standing: string } }[]; snapshots: unknown[] }[] };
      errors?: unknown;
    };
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.passports.map((passport) => passport.id)).toEqual(ids);
    expect(answer.data!.passports.every((passport) => passport.typeRecord.id === MODEL && passport.snapshots.length === 1)).toBe(true);

    // On the page: the result pane shows the answer (it renders only the lines in view, which the
    // tall viewport makes the first passport's), and holds exactly the answer received.
    const result = page.locator('.result-window');
    await expect.poll(() => result.textContent(), { timeout: 15_000 }).toContain(`"id": "${ids[0]}"`);
    const shown = await result.textContent();
    expect(shown).toContain(`"id": "${MODEL}"`);
    expect(shown).toContain('"kind": "model"');
    expect(shown).toContain('"standing": "valid"');
    expect(shown).toContain(`"rootId": "${SHARED_TRUST.root}"`);
    const text = await page
      .locator('.result-window .CodeMirror')
      .first()
      .evaluate((element) => (element as unknown as CodeMirrorElement).CodeMirror.getValue());
    expect(JSON.parse(text)).toEqual(answer);

    await mkdir('test/artifacts', { recursive: true });
    await page.screenshot({ path: 'test/artifacts/graphiql.png', fullPage: true });
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => !isLocal(url))).toEqual([]);
    // A browser rendering GraphiQL's editors, on a machine whose two cores other test workers share: 30 s
    // (the default) was seen to run out at a load of 18 (2026-11-27), with nothing wrong but the wait.
  }, 60_000);
});
