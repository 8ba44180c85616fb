/**
 * Onboarding a product line (issue 44, item 6): passports created per second through the REST
 * facade (facade → gateway → issuer subgraph → registry → PostgreSQL), side by side in one run:
 *
 * - one by one: CLIENTS clients, each POST /issuer/passports in a loop for ONE_BY_ONE_SECONDS;
 * - in bulk: POST /issuer/passports/batch of BATCH passports, BATCHES times one after another (after
 *   one not counted), the median batch;
 * - where a batch's time goes: signing its empty logs' heads (Ed25519, the domain's signLogHead under
 *   the service's event key, in process), the data layer's transaction alone (PassportRepository.create
 *   of BATCH prepared passports, signing included), and the CPU of this process (every server and
 *   the client) and of PostgreSQL per passport.
 *
 *   npm run bench:onboarding
 *
 * Starts its own embedded PostgreSQL and stack in a temporary folder and writes docs/benchmarks/onboarding.md.
 */
import { randomUUID } from 'node:crypto';
import { withSchema } from '../lib/config/database.js';
import { lockingPostmaster } from '../lib/db/embedded-postgres.js';
import { openPrismaClient } from '../lib/db/prisma.js';
import { KeyStore } from '../lib/keys/key-store.js';
import { prismaKeyRepository } from '../lib/keys/prisma-key-repository.js';
import { KEY_PURPOSES } from '../lib/keys/purposes.js';
import { SealedKeyVault } from '../lib/keys/sealed-vault.js';
import { PrismaClient } from '../prisma/issuer/generated/client.js';
import { PassportRepository, type NewPassport } from '../subgraphs/issuer/data/passport-repository.js';
import { EMPTY_FRONTIER, signLogHead } from '../subgraphs/issuer/domain/index.js';
import { KeptAliveClient } from './processes.js';
import { BenchRun, benchToken, cpuSeconds, formatMs as ms, markdownTable, median, openBench, stopwatch, writeReport } from './support.js';

const CLIENTS = 16;
const ONE_BY_ONE_SECONDS = 10;
const BATCH = 1000;
const BATCHES = 5;
const GOAL = 500;
const MODEL = 'onboarding-battery';
const CONFIG_VECTOR = { chemistry: 'LFP', capacity_kwh: 75 };

const benchRun = new BenchRun('onboarding', 'npm run bench:onboarding');
const { token: WRITER, tokens } = benchToken('writer');
const bench = await openBench('onboarding');
const client = new KeptAliveClient();
bench.defer(() => client.close());

let serial = 0;
/** A new item-level identity of the product line. */
const identity = () => `https://id.gs1.org/01/09520123456788/21/LINE-${(serial += 1)}`;
/** A passport of the line: its config vector the line's, or (`own`) one naming its serial, as a battery passport's names its battery. */
const passportBody = (own = false) => {
  const uri = identity();
  return { identity: uri, type_ref: { id: MODEL, version: 1 }, config_vector: own ? { ...CONFIG_VECTOR, battery_identifier: uri } : CONFIG_VECTOR };
};

try {
  const stack = await bench.startStack(tokens);
  const post = async (service: 'registry' | 'issuer', path: string, body: unknown) => {
    const answer = await client.request('POST', `${stack.facade.baseUrls[service]}${path}`, { body: JSON.stringify(body), headers: { authorization: `Bearer ${WRITER}` } });
    if (answer.status !== 201) throw new Error(`POST ${service}${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return answer.text;
  };
  await post('registry', '/', {
    kind: 'model',
    id: MODEL,
    body: {
      title: MODEL,
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { chemistry: { enum: ['LFP', 'NMC'] }, capacity_kwh: { type: 'number' }, battery_identifier: { type: 'string', format: 'uri' } },
        required: ['chemistry'],
      },
    },
  });
  const postmaster = await lockingPostmaster(bench.clusterDir);
  if (postmaster === undefined) throw new Error("the benchmark's PostgreSQL has no postmaster");
  /** CPU seconds so far of this process (every server and the client) and of PostgreSQL. */
  const cpuNow = () => ({ node: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6, postgres: cpuSeconds(postmaster) });

  /** CLIENTS clients creating one passport a request for `seconds`: passports/s and CPU per passport. */
  async function oneByOne(seconds: number) {
    const before = cpuNow();
    const elapsed = stopwatch();
    let created = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (elapsed() < seconds * 1000) {
          await post('issuer', '/passports', passportBody());
          created += 1;
        }
      }),
    );
    const wall = elapsed() / 1000;
    const after = cpuNow();
    return { perSecond: created / wall, created, node: (after.node - before.node) / created, postgres: (after.postgres - before.postgres) / created };
  }

  /** One request of BATCH passports (`own`: each its own config vector): its time and CPU per passport. */
  async function oneBatch(own = false) {
    const passports = Array.from({ length: BATCH }, () => passportBody(own));
    const before = cpuNow();
    const elapsed = stopwatch();
    const answer = JSON.parse(await post('issuer', '/passports/batch', { passports })) as { passports: { core: { identity: { uri: string } } }[] };
    const wall = elapsed();
    const after = cpuNow();
    if (answer.passports.length !== BATCH || answer.passports.some((passport, i) => passport.core.identity.uri !== passports[i]!.identity)) {
      throw new Error('the batch did not answer its passports in order');
    }
    return { ms: wall, perSecond: BATCH / (wall / 1000), node: (after.node - before.node) / BATCH, postgres: (after.postgres - before.postgres) / BATCH };
  }

  console.log('Warming up: one by one for 3 s, one batch …');
  await oneByOne(3);
  await oneBatch();
  await oneBatch(true);
  console.log(`One by one, ${CLIENTS} clients, ${ONE_BY_ONE_SECONDS} s …`);
  const single = await oneByOne(ONE_BY_ONE_SECONDS);
  console.log(`  ${single.perSecond.toFixed(0)} passports/s`);
  // Where a batch's time goes: the signatures and the data layer's transaction, measured alone, in the same rounds as the requests.
  const prisma = openPrismaClient(PrismaClient, withSchema(stack.databaseUrl, 'issuer'));
  bench.defer(() => prisma.$disconnect());
  const keys = await KeyStore.open(prismaKeyRepository(prisma), new SealedKeyVault('issuer', bench.kek), KEY_PURPOSES.issuer);
  const signer = keys.signer('event');
  const repository = new PassportRepository(prisma, 'issuer');
  /** Signing BATCH empty logs' heads: milliseconds. */
  const signBatch = () => {
    const elapsed = stopwatch();
    for (let i = 0; i < BATCH; i += 1) signLogHead(randomUUID(), EMPTY_FRONTIER, signer, new Date());
    return elapsed();
  };
  /** The data layer's creation of BATCH passports made ready as the service makes them: milliseconds. */
  const storeBatch = async () => {
    const now = new Date();
    const passports = Array.from({ length: BATCH }, (): NewPassport => {
      const id = randomUUID();
      const uri = identity();
      return {
        id,
        operator: 'default',
        identity: uri,
        digitalLink: uri,
        granularity: 'item',
        typeRef: { id: MODEL, version: 1 },
        configVector: CONFIG_VECTOR,
        capabilityClass: 'identify',
        profileId: null,
        claims: {},
        status: 'draft',
        core: { passport_id: id, identity: { uri }, type_ref: { id: MODEL, version: 1 }, capability_class: 'identify', claims: {}, created_at: now.toISOString() },
      };
    });
    const elapsed = stopwatch();
    await repository.create(passports, signer, now);
    return elapsed();
  };

  // BATCHES rounds, each of a batch of each way and the two parts alone, in turn: none meets the database's background work more than another.
  console.log(`${BATCHES} rounds of a batch of ${BATCH} sharing one config vector, one with a config vector each, and the parts alone …`);
  const shared: Awaited<ReturnType<typeof oneBatch>>[] = [];
  const own: Awaited<ReturnType<typeof oneBatch>>[] = [];
  const signing: number[] = [];
  const storing: number[] = [];
  for (let i = 0; i < BATCHES; i += 1) {
    shared.push(await oneBatch(false));
    own.push(await oneBatch(true));
    signing.push(signBatch());
    storing.push(await storeBatch());
    console.log(`  ${shared.at(-1)!.perSecond.toFixed(0)} and ${own.at(-1)!.perSecond.toFixed(0)} passports/s`);
  }
  const medianOf = (runs: typeof shared) => {
    const byRate = runs.sort((a, b) => a.perSecond - b.perSecond);
    return { byRate, middle: byRate[Math.floor(byRate.length / 2)]! };
  };
  const { byRate, middle } = medianOf(shared);
  const distinct = medianOf(own);
  const signMs = median(signing);
  const storeMs = median(storing);

  const rate = (value: number) => `${value.toFixed(0)} passports/s`;
  const cpu = (seconds: number) => `${(seconds * 1000).toFixed(2)} ms`;
  const table = markdownTable(
    ['how', 'passports/s', 'per passport: wall', 'node CPU (servers + client)', 'PostgreSQL CPU'],
    [
      [`one by one, ${CLIENTS} clients, ${ONE_BY_ONE_SECONDS} s (${single.created} passports)`, rate(single.perSecond), ms(1000 / single.perSecond), cpu(single.node), cpu(single.postgres)],
      [
        `in bulk, POST /passports/batch of ${BATCH.toLocaleString('en')}, median of ${BATCHES}`,
        `**${rate(middle.perSecond)}** (${byRate.map((batch) => batch.perSecond.toFixed(0)).join(', ')})`,
        ms(middle.ms / BATCH),
        cpu(middle.node),
        cpu(middle.postgres),
      ],
      [
        `in bulk, each passport its own config vector (its battery_identifier), median of ${BATCHES}`,
        `${rate(distinct.middle.perSecond)} (${distinct.byRate.map((batch) => batch.perSecond.toFixed(0)).join(', ')})`,
        ms(distinct.middle.ms / BATCH),
        cpu(distinct.middle.node),
        cpu(distinct.middle.postgres),
      ],
    ],
    ['left', 'right', 'right', 'right', 'right'],
  );
  const parts = markdownTable(
    ['part of a batch of 1,000', 'median time', 'share of the batch'],
    [
      ['the whole request (REST → gateway → issuer → registry → PostgreSQL, and back)', ms(middle.ms), '100%'],
      ["signing 1,000 empty logs' heads (Ed25519, signLogHead, in process)", ms(signMs), `${((signMs / middle.ms) * 100).toFixed(0)}%`],
      ['the data layer alone: PassportRepository.create of 1,000 (signing included; three statements in one transaction)', ms(storeMs), `${((storeMs / middle.ms) * 100).toFixed(0)}%`],
      ['the rest: HTTP, GraphQL and JSON through facade and gateway, the checks, the registry', ms(middle.ms - storeMs), `${(((middle.ms - storeMs) / middle.ms) * 100).toFixed(0)}%`],
    ],
    ['left', 'right', 'right'],
  );
  console.log(`\n${table}\n\n${parts}\n`);
  writeReport(
    benchRun,
    `# Onboarding benchmark

${benchRun.report(bench)}

Passports created per second through the REST facade, the gateway and the issuer subgraph (which asks the registry through the gateway), one process as \`npm start\` runs it, on an embedded PostgreSQL. One by one: ${CLIENTS} clients on kept-alive connections, each sending POST /issuer/passports one after another for ${ONE_BY_ONE_SECONDS} s. In bulk: POST /issuer/passports/batch of ${BATCH.toLocaleString('en')} passports of one model, ${BATCHES} rounds of two requests one after another, one with one config vector for the whole line, one with a config vector per passport (as a battery passport names its battery), the median of each way; one request of each way is made first and not counted. The issuer asks the registry for the model once a request and checks every config vector in process. Every passport is a new item-level identity; each empty log's head is signed with Ed25519. CPU per passport: this process (every server and the client) and PostgreSQL (its postmaster and backends), from /proc.

${table}

Where the median batch's time goes (each part measured alone, in the same rounds as the requests, the median):

${parts}
`,
    [
      { measure: `passports created one by one, ${CLIENTS} clients (REST)`, value: rate(single.perSecond) },
      { measure: `passports created in bulk, batches of ${BATCH.toLocaleString('en')} (REST, median of ${BATCHES})`, value: rate(middle.perSecond), target: `≥ ${GOAL} passports/s` },
      { measure: `passports created in bulk, each its own config vector (REST, median of ${BATCHES})`, value: rate(distinct.middle.perSecond), target: `≥ ${GOAL} passports/s` },
      { measure: `signing an empty log's head (Ed25519, in process)`, value: `${((signMs / BATCH) * 1000).toFixed(0)} µs` },
    ],
    bench,
  );
} finally {
  await bench.close();
}
