/**
 * A worker thread of the national-scale builder (build.ts): makes passports with ten signed events
 * each, exactly as the issuer's append makes them, and loads them with COPY.
 *
 * The keys are the issuer's own, opened from its store with the issuer's unsealing code (KeyStore,
 * SealedKeyVault) under the platform's key-encryption key; every event is built by the domain's
 * appendEvent and every head by signLogHead, the functions the issuer's append runs, so there is one
 * implementation of the wire formats. Each passport's row holds what the append keeps (frontier,
 * last event, signed head, status, size) and each event row its own signed head, as the issuer
 * stores them. Within a job, events are written in order of seq, then passport: the ten events of a
 * passport land on ten heap pages, as events appended over a product's life do, not on one.
 */
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DEFAULT_OPERATOR } from '../../../lib/auth/operators.js';
import { withSchema } from '../../../lib/config/database.js';
import { canonicalize, type Signer } from '../../../lib/crypto/index.js';
import { openPrismaClient } from '../../../lib/db/prisma.js';
import { KeyEncryptionKeys } from '../../../lib/keys/kek.js';
import { KeyStore } from '../../../lib/keys/key-store.js';
import { prismaKeyRepository } from '../../../lib/keys/prisma-key-repository.js';
import { KEY_PURPOSES } from '../../../lib/keys/purposes.js';
import { SealedKeyVault } from '../../../lib/keys/sealed-vault.js';
import { PrismaClient } from '../../../prisma/issuer/generated/client.js';
import { appendEvent, emptyLogState, EMPTY_FRONTIER, hashToHex, signLogHead, validateIdentity, type LogState } from '../../../subgraphs/issuer/domain/index.js';
import { copyLine, EVENT_COLUMNS, EVENTS_PER_PASSPORT, nationalIdentity, nationalPassportId, PASSPORT_COLUMNS, type PassportTemplate, type SignerJob, type SignerSetup } from './layout.js';

/** Passports built between two turns of the event loop, so the COPY of the previous job keeps flowing. */
const SLICE = 100;

function traceEvent(identity: string, n: number, k: number, at: Date) {
  return {
    eventTime: at.toISOString(),
    eventTimeZoneOffset: '+01:00',
    action: 'OBSERVE',
    bizStep: k % 2 === 0 ? 'shipping' : 'receiving',
    disposition: 'in_transit',
    epcList: [identity],
    readPoint: { id: `urn:epc:id:sgln:9520123.00001.${(n + k) % 50}` },
    bizTransactionList: [{ type: 'po', bizTransaction: `urn:epcglobal:cbv:bt:9520123456788:PO-${n}-${k}` }],
  };
}

/** One passport: its row and its events' rows (index = seq), every timestamp just before now. */
function buildPassport(n: number, statusIndex: number, template: PassportTemplate, signer: Signer): { row: string; events: string[] } {
  const id = nationalPassportId(n);
  const identity = validateIdentity(nationalIdentity(n), 'item');
  // Created a few ms ago, events one ms apart after it: in the past, after the key's creation.
  const created = new Date(Date.now() - 2 * EVENTS_PER_PASSPORT);
  const emptyHead = signLogHead(id, EMPTY_FRONTIER, signer, created);
  let state: LogState = emptyLogState(id);
  let head = emptyHead;
  let last = '';
  let lastAt = created;
  const events: string[] = [];
  for (let k = 0; k < EVENTS_PER_PASSPORT; k += 1) {
    const at = new Date(created.getTime() + k + 1);
    const input = k === 0 ? { type: 'activated', payload: { placed_on_market_at: at.toISOString() } } : { type: 'ObjectEvent', payload: traceEvent(identity.uri, n, k, at) };
    const appended = appendEvent(state, input, signer, at);
    head = signLogHead(id, appended.state.frontier, signer, at);
    last = canonicalize(appended.event);
    lastAt = at;
    events.push(copyLine([id, String(appended.event.seq), appended.event.type, appended.event.recorded_at, appended.event.kid, last, JSON.stringify(head)]));
    state = appended.state;
  }
  const core = { ...template.core, passport_id: id, identity, created_at: created.toISOString() };
  const row = copyLine([
    id,
    identity.uri,
    identity.digital_link,
    identity.granularity,
    template.typeRefId,
    String(template.typeRefVersion),
    template.configVector,
    template.capabilityClass,
    template.profileId,
    template.claims,
    state.status,
    JSON.stringify(core),
    String(state.frontier.size),
    `{${state.frontier.hashes.map(hashToHex).join(',')}}`,
    last,
    JSON.stringify(head),
    JSON.stringify(emptyHead),
    null,
    String(statusIndex),
    null,
    created.toISOString(),
    lastAt.toISOString(),
    null,
    'f',
    // The owner: the events are signed with the event key of the default operator (keys.signer('event')).
    DEFAULT_OPERATOR,
  ]);
  return { row, events };
}

async function copyInto(db: pg.Client, table: string, columns: readonly string[], lines: string[]): Promise<void> {
  const stream = db.query(copyFrom(`COPY issuer.${table} (${columns.join(', ')}) FROM STDIN`));
  const done = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve);
    stream.on('error', reject);
  });
  // Written in pieces with back-pressure: a whole job is hundreds of megabytes at full scale.
  for (let start = 0; start < lines.length; start += 500) {
    if (!stream.write(lines.slice(start, start + 500).join(''))) await new Promise((resolve) => stream.once('drain', resolve));
  }
  stream.end();
  await done;
}

const setup = workerData as SignerSetup;
const prisma = openPrismaClient(PrismaClient, withSchema(setup.databaseUrl, 'issuer'), 1);
const keys = await KeyStore.open(prismaKeyRepository(prisma), new SealedKeyVault('issuer', new KeyEncryptionKeys(setup.kek, 'the platform key-encryption key')), KEY_PURPOSES.issuer);
await prisma.$disconnect();
const signer = keys.signer('event', DEFAULT_OPERATOR);
const db = new pg.Client({ connectionString: setup.databaseUrl });
await db.connect();
let loading: Promise<void> = Promise.resolve();

parentPort!.on('message', async (message: SignerJob | 'stop') => {
  if (message === 'stop') {
    await loading;
    await db.end();
    parentPort!.close();
    return;
  }
  try {
    const rows: string[] = [];
    const bySeq: string[][] = Array.from({ length: EVENTS_PER_PASSPORT }, () => []);
    for (let n = message.from; n < message.to; n += 1) {
      const built = buildPassport(n, message.statusIndexBase + n, setup.template, signer);
      rows.push(built.row);
      for (const [seq, line] of built.events.entries()) bySeq[seq]!.push(line);
      if ((n - message.from) % SLICE === SLICE - 1) await new Promise((resolve) => setImmediate(resolve));
    }
    // The previous job's COPY has run meanwhile; this one's starts when it is done, and the next job is built while it runs.
    const previous = loading;
    loading = previous.then(async () => {
      await copyInto(db, 'passport', PASSPORT_COLUMNS, rows);
      await copyInto(db, 'passport_event', EVENT_COLUMNS, bySeq.flat());
    });
    await previous;
    loading.then(
      () => parentPort!.postMessage({ loaded: message.to - message.from }),
      (error: unknown) => parentPort!.postMessage({ error: String((error as Error).stack ?? error) }),
    );
    parentPort!.postMessage({ built: message.to - message.from });
  } catch (error) {
    parentPort!.postMessage({ error: String((error as Error).stack ?? error) });
  }
});
parentPort!.postMessage({ ready: signer.kid });
