/**
 * GraphiQL in a real browser (Debian's Chromium driven by playwright-core): the page loads from the
 * gateway alone, runs a query across the four subgraphs and shows the answer.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let platform: TestStack;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is required at ${CHROMIUM} (Debian package chromium; .ci/run installs it)`);
  platform = await startTestStack();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await platform?.stop();
});

const isLocal = (url: string) => {
  if (url.startsWith('data:') || url.startsWith('blob:') || url.startsWith('about:')) return true;
  const { hostname } = new URL(url);
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
};

describe('GraphiQL', () => {
  it('loads offline, runs a cross-service query and shows the result', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(platform.stack.gateway.graphiqlUrl);
    await page.locator('.graphiql-query-editor .CodeMirror').first().waitFor();
    // CodeMirror 5 keeps its editor object on its element; typing through it is how a user's paste lands.
    await page.locator('.graphiql-query-editor .CodeMirror').first().evaluate((element, query) => {
      (element as unknown as { CodeMirror: { setValue(text: string): void } }).CodeMirror.setValue(query);
    }, '{ trust { health } registry { health } issuer { keyring } archive { discovery } }');
    const answered = page.waitForResponse((response) => response.url().endsWith('/graphql') && (response.request().postData() ?? '').includes('archive'));
    await page.locator('.graphiql-execute-button').click();
    const answer = (await (await answered).json()) as { data: Record<string, Record<string, { service?: string }>> };
    expect(answer.data.archive!.discovery!.service).toBe('archive');
    expect(answer.data.registry!.health!.service).toBe('registry');
    // The result pane renders only the lines in view; the first ones are the trust service's health.
    const result = page.locator('.result-window');
    await expect.poll(() => result.innerText(), { timeout: 15_000 }).toContain('"service": "trust"');
    await mkdir('test/artifacts', { recursive: true });
    await page.screenshot({ path: 'test/artifacts/graphiql.png', fullPage: true });
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => !isLocal(url))).toEqual([]);
  });
});
