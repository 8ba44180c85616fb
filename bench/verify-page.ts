/**
 * The verification page's first visit as the trust graph grows (issue 29, item 6: at most 2 MB at
 * 100,000 trust nodes). The platform runs as `npm start` runs it, in a process of its own; the trust
 * graph is grown in place by SQL batches (test/support/synthetic-trust-graph.ts: 10 roots, 1 %
 * authorities, the rest issuers, every node with its key, every edge a signed credential). One more
 * issuer holds the issuer service's keys, delegated by one of the synthetic authorities, so the pack
 * it mints hangs three levels deep in the graph like every other issuer's.
 *
 * At each size, a first visit in a new Chromium context (nothing cached): the page opened, its
 * service worker installed and in control, the pack checked from a picture of its QR code; every
 * byte the browser sends and receives is counted by a relay in front of the facade
 * (test/support/page-visit.ts), headers and the service worker's own fetches included. Beside it,
 * what the page fetched before it was made light: the whole graph, GET /trust/graph, counted as it
 * streams. At the last size the same context revisits offline and checks the pack again.
 *
 *   node --import tsx bench/verify-page.ts                    # 1k, 10k, 100k
 *   VERIFY_PAGE_SIZES=1000,10000 node --import tsx bench/verify-page.ts
 *
 * Writes docs/benchmarks/verify-page.md and verify-page.json.
 */
import { chromium } from 'playwright-core';
import pg from 'pg';
import QRCode from 'qrcode';
import { countingRelay, firstVisit, verdictOf } from '../test/support/page-visit.js';
import { SyntheticTrustGraph } from '../test/support/synthetic-trust-graph.js';
import { startPlatformProcess } from './processes.js';
import { BenchRun, benchToken, compactDelegation, markdownTable, openBench, stopwatch, writeReport } from './support.js';

const SIZES = (process.env.VERIFY_PAGE_SIZES ?? '1000,10000,100000').split(',').map(Number);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const LIMIT = 2 * 1024 * 1024;
const { token: TOKEN } = benchToken('writer');
const { token: ADMIN } = benchToken('admin');

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

const benchRun = new BenchRun('verify-page', 'node --import tsx bench/verify-page.ts');
const bench = await openBench('verify-page');
try {
  const platform = await startPlatformProcess(bench, { admin: ADMIN, writer: TOKEN });
  const db = new pg.Client({ connectionString: bench.databaseUrl });
  await db.connect();
  bench.defer(() => db.end());
  const { trust, registry, issuer } = platform.facadeUrls;
  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const response = await fetch(url, {
      method,
      // The trust graph is the platform admin's to write (docs/OPERATORS.md).
      headers: { authorization: `Bearer ${url.startsWith(trust) ? ADMIN : TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, any>;
  };

  const graph = new SyntheticTrustGraph(db);
  await graph.growTo(SIZES[0]!);
  // The issuer service's current keys on an issuer node of their own, delegated by a synthetic authority.
  const keyring = await call('GET', `${issuer}/keyring`);
  const keys = (keyring.keys as Record<string, unknown>[]).filter((key) => key.exp === undefined).map(({ purpose: _purpose, signs: _signs, ...key }) => key);
  await call('POST', `${trust}/nodes`, { id: 'bench-issuer', kind: 'issuer', keys });
  const authority = graph.authorities[0]!;
  await call('POST', `${trust}/edges`, {
    credential: compactDelegation(
      { iss: `node-${authority}`, sub: 'bench-issuer', scope: {}, iat: graph.issuedAt, exp: graph.expires },
      { kid: graph.keys[authority]!.jwk.kid, privateKey: graph.keys[authority]!.privateKey },
    ),
  });
  await call('POST', `${registry}/`, { kind: 'model', id: 'page-battery', body: { title: 'page-battery', schema: { type: 'object' } } });
  const identity = 'https://id.gs1.org/01/09520123456788/21/PAGE-1';
  const { passport_id } = await call('POST', `${issuer}/passports`, { identity, type_ref: { id: 'page-battery', version: 1 }, config_vector: {}, capability_class: 'verify-offline' });
  await call('POST', `${issuer}/passports/${passport_id}/events`, { type: 'activated', payload: { placed_on_market_at: '2025-02-01T00:00:00Z' } });
  const pack = await call('POST', `${issuer}/passports/${passport_id}/pack`);
  const image = await QRCode.toBuffer(pack.text as string, { errorCorrectionLevel: 'M', margin: 4, scale: 4 });

  const relay = await countingRelay(new URL(trust).origin);
  bench.defer(() => relay.close());
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  bench.defer(() => browser.close());
  const pageUrl = `${relay.origin}/verify/`;

  const rows: string[][] = [];
  const visits: { size: number; bytes: number }[] = [];
  let offline = '';
  for (const size of SIZES) {
    await graph.growTo(size);
    await db.query('VACUUM (ANALYZE) trust.trust_node, trust.trust_node_version, trust.delegation_edge');
    const { rows: counted } = await db.query<{ nodes: string; edges: string }>('SELECT (SELECT count(*) FROM trust.trust_node) AS nodes, (SELECT count(*) FROM trust.delegation_edge) AS edges');

    // What the page fetched before: the whole graph, counted as it streams.
    const graphTime = stopwatch();
    const whole = await fetch(`${trust}/graph`);
    let wholeBytes = 0;
    for await (const chunk of whole.body!) wholeBytes += (chunk as Uint8Array).length;
    const wholeMs = graphTime();

    relay.reset();
    const visitTime = stopwatch();
    const visit = await firstVisit(browser, pageUrl, image);
    const visitMs = visitTime();
    const bytes = relay.count();
    if (visit.verdict.state !== 'valid') throw new Error(`the first visit at ${size} nodes: ${visit.verdict.code} ${visit.verdict.text}`);
    const path = /Trust path\s+(.+)/.exec(visit.verdict.text)?.[1] ?? '?';
    visits.push({ size, bytes: bytes.sent + bytes.received });
    rows.push([
      `${Number(counted[0]!.nodes).toLocaleString('en')} nodes, ${Number(counted[0]!.edges).toLocaleString('en')} edges`,
      kib(bytes.received),
      kib(bytes.sent),
      kib(bytes.sent + bytes.received),
      `${(visitMs / 1000).toFixed(1)} s`,
      path,
      `${mib(wholeBytes)} in ${(wholeMs / 1000).toFixed(1)} s`,
    ]);
    console.log(rows.at(-1)!.join('  '));

    if (size === SIZES.at(-1)) {
      // Offline: everything from the device, nothing on the wire.
      await visit.context.setOffline(true);
      relay.reset();
      await visit.page.reload();
      await visit.page.locator('#anchors[data-loaded="yes"]').waitFor({ timeout: 20_000 });
      const again = await verdictOf(visit.page, image);
      const wire = relay.count();
      offline = `${again.state === 'valid' ? 'valid' : `${again.state} (${again.code})`}, ${wire.sent + wire.received} bytes on the wire`;
      console.log(`offline revisit at ${size} nodes: ${offline}`);
    }
    await visit.context.close();
  }

  const last = visits.at(-1)!;
  const document = `# The verification page's first visit

${benchRun.report(bench)}

The platform runs as \`npm start\` runs it, in a process of its own; the trust graph is grown in place by SQL
batches (test/support/synthetic-trust-graph.ts: 10 roots, 1 % authorities, the rest issuers; every node with an
Ed25519 key, every edge a signed credential). The pack checked is the issuer service's, its keys on a node
\`bench-issuer\` that a synthetic authority delegates to. A first visit is a new Chromium context (nothing cached):
the page opened, its service worker installed and in control, the pack checked from a picture of its QR code.
Every byte the browser sent and received is counted by a TCP relay in front of the facade (test/support/page-visit.ts),
HTTP headers and the service worker's own fetches included. "Whole graph" is what the page fetched before it
fetched per key: GET /trust/graph, streamed.

${markdownTable(['trust graph', 'received', 'sent', 'first visit, all bytes', 'visit took', 'trust path shown', 'whole graph (GET /trust/graph)'], rows, ['left', 'right', 'right', 'right', 'right', 'left', 'right'])}

Offline revisit at ${last.size.toLocaleString('en')} nodes (the same context, network off, page reloaded, the pack checked again): ${offline}.

Goal (issue 29, item 6): a first visit at 100,000 trust nodes transfers at most 2 MB.
`;
  console.log(document);
  writeReport(
    benchRun,
    document,
    [
      {
        measure: `verification page, first visit at ${last.size.toLocaleString('en')} trust nodes (every byte on the wire)`,
        value: kib(last.bytes),
        target: `≤ 2 MB (${((100 * last.bytes) / LIMIT).toFixed(0)} % of it)`,
      },
    ],
    bench,
  );
} finally {
  await bench.close();
}
