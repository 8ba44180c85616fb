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
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Browser features whose work no test looks at, turned off (the pages' own features are untouched).
 * Chromium 156 builds the window's omnibox (address bar) dropdown as WebUI pages,
 * chrome://omnibox-popup.top-chrome/ and its AI-mode variant, each rendered in a renderer process of
 * its own for every new window: a headless window has no address bar anyone types in, yet that
 * renderer cost ~2 CPU-s per browser context, more than the verification page itself (measured:
 * SystemInfo.getProcessInfo and /proc of the renderers, docs/PLUMBING.md). PreloadTopChromeWebUI
 * preloads such browser-UI pages ahead of use.
 */
const UNUSED_BROWSER_UI = ['WebUIOmniboxPopup', 'WebUIOmniboxFullPopup', 'WebUIOmniboxAimPopup', 'PreloadTopChromeWebUI'];

/**
 * Playwright's own --disable-features list (playwright-core 1.65.1, chromiumSwitches): Chromium keeps
 * only the last --disable-features switch, so ours must carry Playwright's too, or it would drop them.
 * sharedBrowser checks the launched browser's command line, so a Playwright that disables more fails loudly.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...UNUSED_BROWSER_UI].join(',')}`,
];

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
    .then(async (browser) => {
      try {
        featuresKept();
      } catch (error) {
        await browser.close();
        throw error;
      }
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

/**
 * Every feature an earlier --disable-features of the running browser's command line (Playwright's)
 * names is in the last one, the one Chromium keeps. The browser is this process's child (the
 * /usr/bin/chromium script, whose arguments are the browser's).
 */
function featuresKept(): void {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    let argv: string[];
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid || !argv.includes('--remote-debugging-pipe')) continue;
    const lists = argv.filter((arg) => arg.startsWith('--disable-features=')).map((arg) => arg.slice('--disable-features='.length).split(','));
    const kept = new Set(lists.at(-1));
    const dropped = lists.flat().filter((feature) => !kept.has(feature));
    if (dropped.length) throw new Error(`Chromium keeps only the last --disable-features: add ${dropped.join(', ')} to PLAYWRIGHT_DISABLED_FEATURES (test/support/browser.ts)`);
    return;
  }
  throw new Error('the browser just launched is not among the children of this process: its --disable-features could not be checked');
}

/** Closes every context open in the browser: at a file's end they are all that file's, files running one after another in a worker. */
export async function closeContexts(browser: Browser | undefined): Promise<void> {
  await Promise.all((browser?.contexts() ?? []).map((context) => context.close()));
}
