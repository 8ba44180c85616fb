/**
 * The verification page at `/verify/`: static files from `verifier/page/`, two scripts bundled by
 * esbuild (the verifier library the command line runs, `verifier/portable.ts`, as `verifier.js`;
 * the page's own `verifier/page/app.ts`, which imports it, as `app.js`), jsQR's browser build from
 * node_modules, and the trust material read through the gateway: `/verify/anchors.json` (the trust service's signed anchor bundle and its keyring, small
 * and fetched on every visit) and `/verify/keys/{kid}.json` (the signed trust path material of the
 * one key a scanned pack names, fetched when a pack needs it). Nothing the page loads grows with
 * the trust graph. Everything is same-origin, so the page's CSP is `default-src 'self'`.
 *
 * The facade routes GET and HEAD of `/verify` and `/verify/*` here (HEAD drops the body there, and
 * other methods get its 405); `undefined` means "no such page file", which it answers as a 404 problem.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { gatewayRequestBody } from '../lib/graphql/trusted-documents.js';
import { jsonPoster } from '../lib/http/post-json.js';
import { notModified } from './conditional.js';

export interface PageAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The answer to a GET of `pathname`; `ifNoneMatch` is the request's If-None-Match header. */
export type PageHandler = (pathname: string, ifNoneMatch?: string) => Promise<PageAnswer | undefined>;

export const VERIFY_PAGE_PREFIX = '/verify';

const PAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'verifier', 'page');
const require = createRequire(import.meta.url);

/** No inline script or style, nothing from another origin; the camera is the page's own. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'permissions-policy': 'camera=(self), microphone=(), geolocation=()',
};

interface Asset {
  contentType: string;
  /**
   * Static assets are `no-cache`: revalidated on every visit by their content's ETag, so the service
   * worker's install, which fetches the files the page has just loaded, gets 304s instead of them
   * again (the service worker keeps the offline copy). The trust material is `no-store`.
   */
  cacheControl: string;
  load: () => Promise<Buffer>;
}

const ANCHORS_QUERY = 'query VerifyPageAnchors { trustAnchorBundle trust { keyring } }';

const KEY_PATH_QUERY = 'query VerifyPageKeyPath($kid: String!) { trustKeyPath(kid: $kid) }';

const LATEST_QUERY = 'query VerifyPageLatest($id: ID!) { passport(id: $id) { status logHead } }';

/** The page's questions to the graph, for the platform's trusted documents (bin/platform-documents.ts). */
export const VERIFY_PAGE_QUERIES = [ANCHORS_QUERY, KEY_PATH_QUERY, LATEST_QUERY];

/** The page's files and the pinned bundle; `gatewayUrl` answers the anchors query. */
export function verifyPageHandler(options: { gatewayUrl: string }): PageHandler {
  const post = jsonPoster({ maxSockets: 4 });
  /** The data of a query through the gateway; an error or no data fails the file (503, logged). */
  const ask = async <T>(query: string, variables?: Record<string, unknown>): Promise<T> => {
    const answer = await post(options.gatewayUrl, gatewayRequestBody(query, variables));
    const payload = JSON.parse(answer.text) as { data?: T; errors?: unknown[] };
    if (!payload.data || payload.errors?.length) throw new Error(`the gateway did not answer ${/query (\w+)/.exec(query)?.[1]}: ${answer.text.slice(0, 200)}`);
    return payload.data;
  };
  const file = (name: string) => () => readFile(join(PAGE_DIR, name));
  const noCache = 'no-cache';
  const assets: Record<string, Asset> = {
    '/': { contentType: 'text/html; charset=utf-8', cacheControl: noCache, load: file('index.html') },
    '/style.css': { contentType: 'text/css; charset=utf-8', cacheControl: noCache, load: file('style.css') },
    '/sw.js': { contentType: 'text/javascript; charset=utf-8', cacheControl: noCache, load: file('sw.js') },
    '/jsqr.js': { contentType: 'text/javascript; charset=utf-8', cacheControl: noCache, load: () => readFile(require.resolve('jsqr/dist/jsQR.js')) },
    '/app.js': { contentType: 'text/javascript; charset=utf-8', cacheControl: noCache, load: () => bundled('app.js') },
    '/verifier.js': { contentType: 'text/javascript; charset=utf-8', cacheControl: noCache, load: () => bundled('verifier.js') },
    '/anchors.json': {
      contentType: 'application/json; charset=utf-8',
      cacheControl: 'no-store',
      load: async () => {
        const { trustAnchorBundle, trust } = await ask<{ trustAnchorBundle: unknown; trust: { keyring: unknown } }>(ANCHORS_QUERY);
        return Buffer.from(JSON.stringify({ anchor_bundle: trustAnchorBundle, trust_keyring: trust.keyring }));
      },
    },
  };
  /** The signed trust path material of one key (GET /trust/keys/{kid}/path), for the pack the page holds; the page caches it for offline use. */
  const keyPath = (kid: string): Asset => ({
    contentType: 'application/json; charset=utf-8',
    cacheControl: 'no-store',
    load: async () => Buffer.from(JSON.stringify((await ask<{ trustKeyPath: unknown }>(KEY_PATH_QUERY, { kid })).trustKeyPath)),
  });
  /** The optional online check: the passport's current status and signed log head, verified in the page. */
  const latest = (id: string): Asset => ({
    contentType: 'application/json; charset=utf-8',
    cacheControl: 'no-store',
    load: async () => {
      const { passport } = await ask<{ passport: { status: string; logHead: unknown } | null }>(LATEST_QUERY, { id });
      return Buffer.from(JSON.stringify(passport ? { status: passport.status, log_head: passport.logHead } : null));
    },
  });
  return async (pathname, ifNoneMatch) => {
    if (pathname === VERIFY_PAGE_PREFIX) return { status: 308, headers: { location: `${VERIFY_PAGE_PREFIX}/`, 'content-length': '0' }, body: Buffer.alloc(0) };
    const relative = pathname.slice(VERIFY_PAGE_PREFIX.length);
    const latestId = /^\/latest\/([A-Za-z0-9._~-]{1,200})$/.exec(relative)?.[1];
    // A kid is an RFC 7638 thumbprint; anything else names no key and no file.
    const kid = /^\/keys\/([A-Za-z0-9_-]{43})\.json$/.exec(relative)?.[1];
    const asset = latestId ? latest(latestId) : kid ? keyPath(kid) : assets[relative];
    const answer =
      asset &&
      (async () => {
        const body = await asset.load();
        if (asset.cacheControl !== noCache) return page(200, asset.contentType, asset.cacheControl, body);
        const tagged = page(200, asset.contentType, asset.cacheControl, body, `"${createHash('sha256').update(body).digest('base64url')}"`);
        const unchanged = notModified('GET', ifNoneMatch, 200, tagged.headers);
        return unchanged ? { status: 304, headers: { ...unchanged, ...SECURITY_HEADERS }, body: Buffer.alloc(0) } : tagged;
      });
    if (!answer) return undefined;
    try {
      return await answer();
    } catch (error) {
      console.error('[verify-page]', error);
      const unavailable = page(503, 'text/plain; charset=utf-8', 'no-store', Buffer.from('The verification page could not be served; the failure is logged.\n'));
      return { ...unavailable, headers: { ...unavailable.headers, 'retry-after': '5' } };
    }
  };
}

function page(status: number, contentType: string, cacheControl: string, body: Buffer, etag?: string): PageAnswer {
  return { status, headers: { 'content-type': contentType, 'cache-control': cacheControl, 'content-length': String(body.length), ...(etag && { etag }), ...SECURITY_HEADERS }, body };
}

const ROOT = join(PAGE_DIR, '..', '..');
/** The page's two scripts and what each is bundled from. */
const SCRIPTS = { 'app.js': join(PAGE_DIR, 'app.ts'), 'verifier.js': join(ROOT, 'verifier', 'portable.ts') } as const;
type Script = keyof typeof SCRIPTS;

const bundles = new Map<Script, Promise<Buffer>>();

/**
 * A script, bundled once per process on first request (every facade the process runs serves the same
 * files: the tests run many stacks in one process); a failed build is retried on the next one.
 */
function bundled(script: Script): Promise<Buffer> {
  let built = bundles.get(script);
  if (!built) {
    built = bundle(script);
    bundles.set(script, built);
    built.catch(() => bundles.delete(script));
  }
  return built;
}

/** Ajv as the library sees it in the page: schemas "compile" to validators that refuse to run. */
const SERVER_ONLY_STUBS: Record<string, string> = {
  'ajv/dist/2020.js': `export class Ajv2020 { compile() { return () => { throw new Error('event payloads are not validated in the page'); }; } }`,
  'ajv-formats': 'export default { default() {} };',
};

const pagePlugins: Record<Script, Plugin[]> = {
  // The page's script keeps its import of the library as an import of /verify/verifier.js: the page runs
  // the library's one bundle, which a test loads as well, and nothing of it twice.
  'app.js': [
    {
      name: 'library-as-module',
      setup(builder) {
        builder.onResolve({ filter: /\/portable\.js$/ }, () => ({ path: './verifier.js', external: true }));
      },
    },
  ],
  'verifier.js': [
    {
      // The rules are the command line's; only the primitives under them are the browser's (lib/platform).
      name: 'browser-primitives',
      setup(builder) {
        builder.onResolve({ filter: /\/platform\/primitives\.js$/ }, () => ({ path: join(ROOT, 'lib', 'platform', 'primitives.browser.ts') }));
      },
    },
    {
      // The event catalogue compiles its payload schemas with Ajv at load, through `new Function`, which
      // the page's CSP forbids; the library only verifies logs, never validates payloads. Nothing else
      // Node's is stubbed: a node: import reaching the page fails the build.
      name: 'server-only-modules',
      setup(builder) {
        builder.onResolve({ filter: /^(?:ajv\/|ajv-formats$)/ }, (args) => ({ path: args.path, namespace: 'server-only' }));
        builder.onLoad({ filter: /.*/, namespace: 'server-only' }, ({ path }) => ({ contents: SERVER_ONLY_STUBS[path]!, loader: 'js' }));
      },
    },
  ],
};

async function bundle(script: Script): Promise<Buffer> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [SCRIPTS[script]],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    legalComments: 'none',
    plugins: pagePlugins[script],
  });
  return Buffer.from(result.outputFiles[0]!.contents);
}
