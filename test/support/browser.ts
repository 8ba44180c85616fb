/**
 * One Chromium (Debian's, driven by playwright-core) per vitest worker, for the browser tests
 * (test/verifier/verify-page.test.ts, test/verifier/verify-page-light.test.ts,
 * test/gateway/graphiql.test.ts). A worker runs its files one after another in one module graph
 * (isolate: false, vitest.config.ts), so a file after the first gets the browser already running;
 * each file works in browser contexts of its own (nothing shared: cache, storage, service workers)
 * and closes them at its end (closeContexts). The browser goes with the worker: playwright kills the
 * browsers it launched when the process exits or gets SIGTERM, and Chromium leaves when its pipe to
 * the process closes.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * What the browser's fake camera films, a Y4M video: Chromium reads it when a page opens the camera,
 * so the test that does writes it first, and removes it at its end (test/verifier/verify-page.test.ts). The fake UI grants the
 * camera as a person tapping "Allow" does; pages that ask for no camera see no difference.
 */
export const CAMERA_VIDEO = join(tmpdir(), `passport-test-camera-${process.pid}.y4m`);

let launched: Promise<Browser> | undefined;

/** This worker's browser, launched on first use. */
export function sharedBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is required at ${CHROMIUM} (Debian package chromium; npm test's first layer installs it: bin/system-packages.ts)`);
  launched ??= chromium
    .launch({
      executablePath: CHROMIUM,
      args: [...CHROMIUM_ARGS, '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-video-capture=${CAMERA_VIDEO}`],
    })
    .then((browser) => {
      // A browser that went away (crashed, killed) is launched again by the next file that asks.
      browser.on('disconnected', () => {
        launched = undefined;
      });
      return browser;
    });
  launched.catch(() => {
    launched = undefined;
  });
  return launched;
}

/** Closes every context open in the browser: at a file's end they are all that file's, files running one after another in a worker. */
export async function closeContexts(browser: Browser | undefined): Promise<void> {
  await Promise.all((browser?.contexts() ?? []).map((context) => context.close()));
}
