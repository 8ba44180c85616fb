/**
 * Issuer benchmark, through the REST facade (facade → gateway → issuer subgraph → PostgreSQL):
 *
 * - event append with 16 concurrent clients, each on its own passport: sustained events/s, and
 *   beside it the same 16 clients on one passport (every append queues on that passport's row);
 * - the verdict of a passport of 10,000 events (made with the domain code under the service's own
 *   event key and bulk-inserted with SQL), and the domain's verifyLog alone on the same events;
 * - Tier-A pack minting.
 *
 *   node --import tsx bench/issuer.ts
 *
 * Starts its own embedded PostgreSQL and stack in a temporary folder, prints a table and writes it
 * to docs/benchmarks/issuer.md. Passports are written with the data layer directly, so the run does
 * not depend on the registry (creation is not what is measured).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { canonicalize } from '../lib/crypto/index.js';
import { withSchema } from '../lib/config/database.js';
import { openPrismaClient } from '../lib/db/prisma.js';
import { KeyStore } from '../lib/keys/key-store.js';
import { prismaKeyRepository } from '../lib/keys/prisma-key-repository.js';
import { KEY_PURPOSES } from '../lib/keys/purposes.js';
import { SealedKeyVault } from '../lib/keys/sealed-vault.js';
import { PrismaClient } from '../prisma/issuer/generated/client.js';
import { PassportRepository } from '../subgraphs/issuer/data/passport-repository.js';
import { appendEvent, emptyLogState, hashToHex, signLogHead, verifyLog, type EventRecord } from '../subgraphs/issuer/domain/index.js';
import { autocannonLoad, BenchRun, benchToken, formatMs as ms, markdownTable, openBench, stopwatch, summarize, timed, writeReport } from './support.js';

const CLIENTS = 16;
const APPEND_SECONDS = 12;
const VERDICT_EVENTS = 10_000;
const VERDICT_RUNS = 7;
const PACK_RUNS = 60;
const { token: WRITER, tokens } = benchToken('writer');

function objectEvent(i: number) {
  return {
    eventTime: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
    eventTimeZoneOffset: '+01:00',
    action: 'OBSERVE',
    bizStep: i % 2 === 0 ? 'shipping' : 'receiving',
    disposition: 'in_transit',
    epcList: ['https://id.gs1.org/01/09520123456788/21/SN-0001'],
    readPoint: { id: `urn:epc:id:sgln:9520123.00001.${i % 50}` },
    bizTransactionList: [{ type: 'po', bizTransaction: `urn:epcglobal:cbv:bt:9520123456788:PO-${i}` }],
  };
}

const benchRun = new BenchRun('issuer', 'node --import tsx bench/issuer.ts');
const bench = await openBench('issuer');
const stack = await bench.startStack(tokens).catch(async (error: unknown) => {
  await bench.close();
  throw error;
});
const issuerUrl = withSchema(stack.databaseUrl, 'issuer');
const prisma = openPrismaClient(PrismaClient, issuerUrl);
bench.defer(() => prisma.$disconnect());
// The service's own keys, loaded from its store: events built here verify under its keyring.
const keys = await KeyStore.open(prismaKeyRepository(prisma), new SealedKeyVault('issuer', bench.kek), KEY_PURPOSES.issuer);
const passports = new PassportRepository(prisma, 'issuer');
const base = stack.facade.baseUrls.issuer;
const headers = { 'content-type': 'application/json', authorization: `Bearer ${WRITER}` };

let serial = 0;
async function newPassport(capabilityClass = 'identify'): Promise<string> {
  serial += 1;
  const id = `bench-${serial}-${randomBytes(4).toString('hex')}`;
  const identity = `https://id.gs1.org/01/09520123456788/21/B-${serial}`;
  const now = new Date();
  await passports.create(
    [
      {
        id,
        operator: 'default',
        identity,
        digitalLink: identity,
        granularity: 'item',
        typeRef: { id: 'bench-battery', version: 1 },
        configVector: { chemistry: 'LFP', capacity_kwh: 75 },
        capabilityClass,
        profileId: null,
        claims: {},
        status: 'draft',
        core: { passport_id: id, identity: { uri: identity }, type_ref: { id: 'bench-battery', version: 1 }, capability_class: capabilityClass, claims: {}, created_at: now.toISOString() },
      },
    ],
    keys.signer('event'),
    now,
  );
  return id;
}

async function post(path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: response.status, body: await response.json() };
}

/**
 * CLIENTS connections append for `seconds` (autocannon in a child process: clients are other
 * programs, so their HTTP work is not billed to the server's process, whose CPU time per event is
 * measured), each connection on one of `passportIds`; events/s, latencies, server CPU per event.
 */
async function appendLoad(passportIds: string[], seconds: number) {
  const cpuBefore = process.cpuUsage();
  const { origin, pathname } = new URL(base);
  const body = JSON.stringify({ type: 'ObjectEvent', payload: objectEvent(1) });
  const result = await autocannonLoad({ url: origin, connections: CLIENTS, seconds, method: 'POST', headers, body, paths: passportIds.map((id) => `${pathname}/passports/${id}/events`) });
  const cpu = process.cpuUsage(cpuBefore);
  if (result.non2xx || result.errors || result.timeouts) throw new Error(`appends: ${result.non2xx} answers other than 2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return { perSecond: result.perSecond, events: result.requests, latency: result.latency, serverCpuMs: (cpu.user + cpu.system) / 1000 / result.requests };
}

/** Builds a log with the domain code under the service's event key and inserts it with SQL. */
async function seedLongLog(size: number): Promise<{ id: string; events: EventRecord[]; texts: string[]; buildMs: number; insertMs: number }> {
  const id = await newPassport();
  const signer = keys.signer('event');
  const building = stopwatch();
  const start = Date.now() - size * 1000;
  let state = emptyLogState(id);
  const events: EventRecord[] = [];
  for (let i = 0; i < size; i += 1) {
    const input = i === 0 ? { type: 'activated', payload: { placed_on_market_at: new Date(start).toISOString() } } : { type: 'ObjectEvent', payload: objectEvent(i) };
    const appended = appendEvent(state, input, signer, new Date(start + i * 100));
    state = appended.state;
    events.push(appended.event);
  }
  const head = signLogHead(id, state.frontier, signer, new Date());
  const texts = events.map((event) => canonicalize(event));
  const buildMs = building();
  const inserting = stopwatch();
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (let offset = 0; offset < events.length; offset += 1000) {
      const batch = events.slice(offset, offset + 1000);
      const rows = batch.map((_, i) => `($1, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, $${i * 5 + 5}, $${i * 5 + 6})`).join(', ');
      await client.query(`INSERT INTO issuer.passport_event (passport_id, seq, type, recorded_at, kid, canonical) VALUES ${rows}`, [
        id,
        ...batch.flatMap((event) => [event.seq, event.type, event.recorded_at, event.kid, texts[event.seq]]),
      ]);
    }
    await client.query(`UPDATE issuer.passport SET status = $2, log_size = $3, frontier = $4, last_event = $5, log_head = $6 WHERE id = $1`, [
      id,
      state.status,
      state.frontier.size,
      state.frontier.hashes.map(hashToHex),
      canonicalize(events.at(-1)),
      JSON.stringify(head),
    ]);
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
  return { id, events, texts, buildMs, insertMs: inserting() };
}

const rows: string[][] = [];
const row = (...cells: string[]) => rows.push(cells);
try {
  // Warm-up under the same load, discarded: connections, JIT, the gateway's caches.
  console.log('Warming up for 4 s …');
  await appendLoad(await Promise.all(Array.from({ length: CLIENTS }, () => newPassport())), 4);

  console.log(`Appending for ${APPEND_SECONDS} s with ${CLIENTS} clients on ${CLIENTS} passports …`);
  const spread = await appendLoad(await Promise.all(Array.from({ length: CLIENTS }, () => newPassport())), APPEND_SECONDS);
  console.log(`  ${spread.perSecond.toFixed(0)} events/s`);
  console.log(`Appending for ${APPEND_SECONDS / 2} s with ${CLIENTS} clients on one passport …`);
  const single = await appendLoad([await newPassport()], APPEND_SECONDS / 2);
  console.log(`  ${single.perSecond.toFixed(0)} events/s`);

  console.log(`Building and inserting a log of ${VERDICT_EVENTS.toLocaleString('en')} events …`);
  const long = await seedLongLog(VERDICT_EVENTS);
  console.log(`  built in ${(long.buildMs / 1000).toFixed(1)} s, inserted in ${(long.insertMs / 1000).toFixed(1)} s`);
  const verdictRuns = await timed(
    VERDICT_RUNS,
    async () => {
      const response = await fetch(`${base}/passports/${long.id}/verdict`);
      return { status: response.status, body: (await response.json()) as any };
    },
    { warmups: 0 },
  );
  for (const { status, body } of verdictRuns.results) {
    if (status !== 200 || body.event_signature_audit?.verified !== VERDICT_EVENTS || !body.log_verdict?.ok) {
      throw new Error(`the verdict should pass its log checks: ${JSON.stringify(body).slice(0, 400)}`);
    }
  }
  const lastVerdict = verdictRuns.last.body;
  const readRuns = await timed(VERDICT_RUNS, () => passports.eventTexts([{ passportId: long.id, logSize: VERDICT_EVENTS }]), { warmups: 0 });
  for (const texts of readRuns.results) if (texts.length !== VERDICT_EVENTS) throw new Error(`read ${texts.length} events`);
  const head = JSON.parse(JSON.stringify((await prisma.passport.findUniqueOrThrow({ where: { id: long.id } })).logHead));
  const domainRuns = await timed(VERDICT_RUNS, () => verifyLog(long.events, head, keys.resolveKey, long.id, long.texts), { warmups: 0 });
  // The same without the stored texts: verifyLog canonicalizes every parsed event itself.
  const parsedRuns = await timed(VERDICT_RUNS, () => verifyLog(long.events, head, keys.resolveKey, long.id), { warmups: 0 });
  for (const verdict of [...domainRuns.results, ...parsedRuns.results]) {
    if (!verdict.ok || verdict.signatures.verified !== VERDICT_EVENTS) throw new Error(`verifyLog should pass: ${JSON.stringify(verdict.problems.slice(0, 3))}`);
  }

  console.log(`Minting ${PACK_RUNS} packs …`);
  const packPassport = await newPassport('verify-offline');
  for (let i = 0; i < 5; i += 1) await post(`/passports/${packPassport}/events`, { type: 'ObjectEvent', payload: objectEvent(i) });
  const packRuns = await timed(
    PACK_RUNS,
    async () => {
      const answer = await post(`/passports/${packPassport}/pack`);
      if (answer.status !== 201) throw new Error(`mint answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
      return answer.body.size as number;
    },
    { warmups: 5 },
  );
  const packSize = packRuns.last;

  const verdict = summarize(verdictRuns.times);
  const read = summarize(readRuns.times);
  const domain = summarize(domainRuns.times);
  const parsed = summarize(parsedRuns.times);
  const pack = summarize(packRuns.times);
  row(
    `event append, ${CLIENTS} clients on ${CLIENTS} passports (REST)`,
    `**${spread.perSecond.toFixed(0)} events/s** (${spread.events} in ${APPEND_SECONDS} s); server process CPU ${spread.serverCpuMs.toFixed(2)} ms per event`,
    ms(spread.latency.median),
    ms(spread.latency.p95),
    '≥ 300 events/s',
  );
  row(
    `event append, ${CLIENTS} clients on 1 passport (REST)`,
    `${single.perSecond.toFixed(0)} events/s (${(single.perSecond / spread.perSecond).toFixed(2)}× the spread rate); server CPU ${single.serverCpuMs.toFixed(2)} ms per event`,
    ms(single.latency.median),
    ms(single.latency.p95),
    '—',
  );
  row(`verdict, ${VERDICT_EVENTS.toLocaleString('en')} events (REST GET /passports/{id}/verdict)`, `median **${ms(verdict.median)}** of ${verdict.n}`, ms(verdict.median), ms(verdict.p95), '< 1 s');
  row(
    `verifyLog alone on the same events and texts (domain, in process)`,
    `median ${ms(domain.median)} of ${domain.n} (${((domain.median / verdict.median) * 100).toFixed(0)}% of the REST verdict)`,
    ms(domain.median),
    ms(domain.p95),
    '—',
  );
  row(
    `verifyLog alone on the parsed events, without their stored texts (domain, in process)`,
    `median ${ms(parsed.median)} of ${parsed.n} (${(parsed.median / domain.median).toFixed(2)}× with the texts)`,
    ms(parsed.median),
    ms(parsed.p95),
    '—',
  );
  row(`reading the ${VERDICT_EVENTS.toLocaleString('en')} stored events (data layer, in process)`, `median ${ms(read.median)} of ${read.n}`, ms(read.median), ms(read.p95), '—');
  row(`pack minting, verify-offline class, ${packSize} characters (REST POST /pack)`, `median **${ms(pack.median)}** of ${pack.n}`, ms(pack.median), ms(pack.p95), '< 20 ms');

  const table = markdownTable(['measure', 'result', 'median latency', 'p95 latency', 'target'], rows);
  const document = [
    '# Issuer benchmark',
    '',
    benchRun.report(bench),
    '',
    'Everything goes through the REST facade, the gateway and the issuer subgraph to PostgreSQL, in one process, as `npm start` runs it.',
    `Appends: autocannon (in a child process, as other programs would be) with ${CLIENTS} connections, each keeping to one passport, sends POST /passports/{id}/events for ${APPEND_SECONDS} s (half that on one passport), each event an EPCIS ObjectEvent; each append locks its passport row, signs the event and the new log head (Ed25519) and writes both.`,
    `Verdict: a log of ${VERDICT_EVENTS.toLocaleString('en')} events built with the domain code under the service's event key and inserted with SQL; each GET reads every event, checks the chain, the Merkle root against the signed head, every Ed25519 signature, and asks the trust service for key standing.`,
    '',
    table,
    '',
    `Verdict outcome: ${lastVerdict.outcome}; coverage ${lastVerdict.coverage.checks_run} of ${lastVerdict.coverage.checks_total} checks (not run: ${lastVerdict.coverage.not_run.map((entry: { check: string }) => entry.check).join(', ') || 'none'}).`,
    '',
  ].join('\n');
  console.log(`\n${table}\n`);
  writeReport(
    benchRun,
    document,
    [
      { measure: `event append, ${CLIENTS} clients on ${CLIENTS} passports`, value: `${spread.perSecond.toFixed(0)} events/s`, target: '≥ 300 events/s' },
      { measure: `verdict of ${VERDICT_EVENTS.toLocaleString('en')} events, REST (median)`, value: ms(verdict.median), target: '< 1 s' },
      { measure: 'pack minting, REST (median)', value: ms(pack.median), target: '< 20 ms' },
    ],
    bench,
  );
} finally {
  await bench.close();
}
