/**
 * What a first visit of the verification page costs on the wire, for its test
 * (test/verifier/verify-page-light.test.ts) and its benchmark (bench/verify-page.ts): a TCP relay in
 * front of the REST facade counts every byte the browser sends and receives (HTML, script, style,
 * the service worker and what it fetches, the anchor bundle, trust path material, HTTP headers),
 * whoever in the browser asks, and the visit is a person's: open the page, let its service worker
 * install, check one passport from a picture of its QR code.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';

export interface ByteCount {
  /** Bytes from the browser to the platform: requests. */
  sent: number;
  /** Bytes from the platform to the browser: answers. */
  received: number;
  /** The request lines sent, e.g. `GET /verify/app.js`. */
  requests: string[];
}

export interface CountingRelay {
  /** The relay's origin, e.g. http://127.0.0.1:40123: the facade's paths under it. */
  readonly origin: string;
  /** What passed since the last reset. */
  count(): ByteCount;
  reset(): void;
  close(): Promise<void>;
}

/** A relay to `target` (an http://host:port origin) that counts the bytes passing each way. */
export async function countingRelay(target: string): Promise<CountingRelay> {
  const { hostname, port } = new URL(target);
  let counted: ByteCount = { sent: 0, received: 0, requests: [] };
  const sockets = new Set<Socket>();
  const server = createServer((browserSide) => {
    const platformSide = connect(Number(port), hostname);
    for (const socket of [browserSide, platformSide]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      // A side that goes away ends the other; the error itself is the browser's or the platform's business.
      socket.on('error', () => undefined);
    }
    browserSide.on('data', (chunk: Buffer) => {
      counted.sent += chunk.length;
      // A request's head comes in one piece from the browser: its request line opens the chunk.
      const line = /^([A-Z]+) (\S+) HTTP\/1\.1\r\n/.exec(chunk.toString('latin1', 0, 2048));
      if (line) counted.requests.push(`${line[1]} ${line[2]}`);
    });
    platformSide.on('data', (chunk: Buffer) => {
      counted.received += chunk.length;
    });
    browserSide.pipe(platformSide);
    platformSide.pipe(browserSide);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: () => ({ ...counted, requests: [...counted.requests] }),
    reset: () => {
      counted = { sent: 0, received: 0, requests: [] };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface Verdict {
  state: string | null;
  code: string | null;
  text: string;
}

/** Opens the image in the page's file input, as a person picking a photo does, and returns the verdict box's state, code and text. */
export async function verdictOf(page: Page, image: Buffer, name = 'passport-qr.png'): Promise<Verdict> {
  const verdict = page.locator('#verdict');
  // The previous verdict is marked stale, so that only this image's verdict ends the wait.
  await verdict.evaluate((element) => element.setAttribute('data-state', 'stale'));
  await page.locator('#image-input').setInputFiles({ name, mimeType: 'image/png', buffer: image });
  await page.locator('#verdict:not([data-state="stale"]):not([data-state="idle"])').waitFor({ timeout: 20_000 });
  return { state: await verdict.getAttribute('data-state'), code: await verdict.getAttribute('data-code'), text: await verdict.innerText() };
}

/**
 * A first visit in a new browser context (nothing cached): the page opened at `pageUrl`, its anchor
 * bundle loaded, its service worker installed and in control (so everything it caches is fetched),
 * and one passport checked from `image`. The context stays open, for what the caller does next.
 */
export async function firstVisit(browser: Browser, pageUrl: string, image: Buffer): Promise<{ context: BrowserContext; page: Page; verdict: Verdict }> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(pageUrl);
  await page.locator('#anchors[data-loaded]').waitFor({ timeout: 20_000 });
  await serviceWorkerInControl(page);
  return { context, page, verdict: await verdictOf(page, image) };
}

/** Waits until the page's service worker is installed (the page's files and the bundle cached) and controls the page. */
export async function serviceWorkerInControl(page: Page): Promise<void> {
  await page.evaluate(`(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
  })()`);
}
