/**
 * A passport's event stream as a browser reads it: Chromium's own EventSource (Debian's chromium,
 * driven by playwright-core) on GET /issuer/passports/{id}/events reads the log and each event
 * appended through REST; when the server closes the stream (as an instance going away does), the
 * browser reconnects by itself after the stream's `retry:` with the last id as Last-Event-ID, and gets
 * exactly the events it missed, none twice. The page and the stream come through one origin, a small
 * proxy in front of the facade, which can close the stream and sees what the browser sends.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeContexts, sharedBrowser } from '../support/browser.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { appendEvent, createModel, createPassport, PAYLOADS } from './support.js';

const MODEL = 'battery-event-stream-browser';
let platform: SharedTestStack;
let browser: Browser;
let passportId = '';
/** The page's origin: serves the page, and passes every other request on to the facade. */
let proxy: Server;
let origin = '';
/** The event streams open through the proxy, which the test may close as the server would. */
const streams = new Set<ServerResponse>();
/** The Last-Event-ID of each request for the stream, in order (undefined: none sent). */
const lastEventIds: (string | undefined)[] = [];

function passOn(incoming: IncomingMessage, outgoing: ServerResponse): void {
  const facade = new URL(platform.stack.facade.url);
  const forwarded = request({ host: facade.hostname, port: facade.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
    outgoing.writeHead(answer.statusCode!, answer.headers);
    answer.pipe(outgoing);
    if (answer.headers['content-type']?.startsWith('text/event-stream')) {
      streams.add(outgoing);
      outgoing.on('close', () => {
        streams.delete(outgoing);
        answer.destroy();
      });
    }
  });
  forwarded.on('error', () => outgoing.destroy());
  incoming.pipe(forwarded);
}

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
  passportId = (await createPassport(platform, MODEL)).passport_id;
  await append(2);
  proxy = createServer((incoming, outgoing) => {
    if (incoming.url === '/page') return void outgoing.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>events</title>');
    if (incoming.url?.endsWith('/events')) lastEventIds.push(incoming.headers['last-event-id'] as string | undefined);
    passOn(incoming, outgoing);
  });
  await new Promise<void>((listening) => proxy.listen(0, '127.0.0.1', listening));
  origin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  browser = await sharedBrowser();
}, 120_000);
afterAll(async () => {
  await closeContexts(browser);
  for (const stream of streams) stream.destroy();
  await new Promise((closed) => proxy?.close(closed));
});

async function append(count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const appended = await appendEvent(platform, passportId, 'ObjectEvent', PAYLOADS.ObjectEvent!());
    expect(appended.status, JSON.stringify(appended.body)).toBe(201);
  }
}

/** What the page's EventSource has received: each message's lastEventId and the seq of its data. */
const received = (page: Page) => page.evaluate(() => (globalThis as unknown as { received: { id: string; seq: number }[] }).received);

async function untilReceived(page: Page, count: number): Promise<void> {
  await page.waitForFunction((count) => (globalThis as unknown as { received: unknown[] }).received.length >= count, count, { timeout: 20_000 });
}

describe("Chromium's EventSource on a passport's event stream", () => {
  it('reads the log and each new event, and after the server closes the stream resumes with Last-Event-ID, missing nothing and repeating nothing', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${origin}/page`);
    await page.evaluate((path) => {
      const state = globalThis as unknown as { received: { id: string; seq: number }[]; opened: number };
      state.received = [];
      state.opened = 0;
      const source = new EventSource(path);
      source.onopen = () => (state.opened += 1);
      source.onmessage = (message) => state.received.push({ id: message.lastEventId, seq: (JSON.parse(message.data) as { seq: number }).seq });
    }, `/issuer/passports/${passportId}/events`);
    await untilReceived(page, 2);
    await append(1);
    await untilReceived(page, 3);
    expect(await received(page)).toEqual([
      { id: '0', seq: 0 },
      { id: '1', seq: 1 },
      { id: '2', seq: 2 },
    ]);

    // The server closes the stream (an instance going away); events are appended meanwhile.
    expect(streams.size).toBe(1);
    for (const stream of streams) stream.end();
    await append(2);
    await untilReceived(page, 5);
    await append(1);
    await untilReceived(page, 6);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await received(page)).map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect((await received(page)).map((message) => message.id)).toEqual(['0', '1', '2', '3', '4', '5']);
    // The browser reconnected by itself, once, naming the last event it had.
    expect(lastEventIds).toEqual([undefined, '2']);
    expect(await page.evaluate(() => (globalThis as unknown as { opened: number }).opened)).toBe(2);
  });
});
