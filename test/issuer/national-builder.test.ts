/**
 * The national-scale builder (test/support/national/build.ts) makes what the issuer makes: passports
 * built in its worker threads under the stack's own issuer keys, loaded with COPY, read back through
 * the REST facade, verify with the offline verifier under the published keyring; the issuer's own
 * verdict passes them; the head kept with an event answers the passport as of then; an append
 * continues the built log; the snapshot made through the archive is listed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { logExportFrom, verifyLogExport } from '../../verifier/log.js';
import { pinsFrom } from '../../verifier/pins.js';
import { EVENTS_PER_PASSPORT, NationalBuilder, nationalPassportId, templateFrom } from '../support/national/build.js';
import { startTestStack, TEST_KEK, type TestStack } from '../support/stack.js';
import { appendEvent, createModel, createPassport, objectEvent } from './support.js';

const PASSPORTS = 24;
const MODEL = 'national-builder-battery';

let platform: TestStack;
let builder: NationalBuilder;

beforeAll(async () => {
  platform = await startTestStack();
  await createModel(platform, MODEL);
  const template = (await createPassport(platform, MODEL)).passport_id;
  const databaseUrl = platform.databaseUrl.split('?')[0]!;
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const passportTemplate = await templateFrom(db, template).finally(() => db.end());
  builder = await NationalBuilder.open({
    databaseUrl,
    kek: TEST_KEK,
    template: passportTemplate,
    workers: 2,
    jobSize: 10,
    snapshot: async (id) => {
      const response = await platform.rest('archive', '/snapshots', { body: { passport_id: id }, as: 'writer' });
      expect(response.status, response.text).toBe(201);
    },
  });
  await builder.growTo(PASSPORTS);
}, 60_000);

afterAll(async () => {
  await builder?.close();
  await platform?.stop();
});

it('builds passports that the offline verifier and the issuer verdict both accept', async () => {
  const keyring = (await platform.rest('issuer', '/keyring')).body;
  const pins = pinsFrom({ keySets: [keyring] });
  for (const n of [0, 7, PASSPORTS - 1]) {
    const id = nationalPassportId(n);
    const exported = await platform.rest('issuer', `/passports/${id}?include_events=true`);
    expect(exported.status).toBe(200);
    expect(exported.body.log).toHaveLength(EVENTS_PER_PASSPORT);
    expect(exported.body.status).toBe('active');
    const report = await verifyLogExport(logExportFrom(exported.body), pins);
    expect(report.verdict, JSON.stringify(report.findings)).toBe('valid');
    const verdict = await platform.rest('issuer', `/passports/${id}/verdict`);
    expect(verdict.body.event_signature_audit).toMatchObject({ verified: EVENTS_PER_PASSPORT, total: EVENTS_PER_PASSPORT });
    expect(verdict.body.checks.filter((check: { outcome: string }) => check.outcome === 'failed')).toEqual([]);
  }
});

it('keeps each event’s signed head: the passport as of its fifth event', async () => {
  const id = nationalPassportId(3);
  const exported = (await platform.rest('issuer', `/passports/${id}?include_events=true`)).body;
  const fifth = exported.log[4];
  const asOf = await platform.rest('issuer', `/passports/${id}?at=${fifth.recorded_at}`);
  expect(asOf.status).toBe(200);
  expect(asOf.body.log_size).toBe(5);
  expect(asOf.body.as_of.head_signed).toBe(true);
  expect(asOf.body.log_head.size).toBe(5);
});

it('leaves a log the issuer appends to, and one snapshot in a hundred made through the archive', async () => {
  const appended = await appendEvent(platform, nationalPassportId(5), 'ObjectEvent', objectEvent());
  expect(appended.status, appended.text).toBe(201);
  expect(appended.body.event.seq).toBe(EVENTS_PER_PASSPORT);
  const snapshots = await platform.rest('archive', `/snapshots?passport_id=${nationalPassportId(0)}`);
  expect(snapshots.status).toBe(200);
  expect(JSON.stringify(snapshots.body)).toContain(nationalPassportId(0));
});
