/** Trust lists end to end: registration, versions, `at` between versions, withdrawal, races. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;
beforeAll(async () => {
  platform = await startTestStack();
});
afterAll(() => platform?.stop());

const QC = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC';
const post = (path: string, body: unknown) => platform.rest('trust', path, { body, as: 'admin' });
const get = (path: string) => platform.rest('trust', path);
/** Lets the clock move on, so consecutive versions have distinct issue times. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
/** The instant spelled in the +02:00 offset. */
const inPlusTwo = (millis: number) => `${new Date(millis + 7_200_000).toISOString().slice(0, -1)}+02:00`;

describe('one list through its versions', () => {
  /** Every version as the write that produced it returned it. */
  const versions: any[] = [];
  let beforeRegistration: string;

  it('registers the list of a jurisdiction once (201, sequence 1); a second registration is 409', async () => {
    beforeRegistration = new Date().toISOString();
    await tick();
    const registered = await post('/trust-lists', { jurisdiction: 'de', framework: 'eIDAS', next_update: '2099-01-01T00:00:00Z' });
    expect(registered.status).toBe(201);
    // The instant comes back as it was given, not with fraction digits added.
    expect(registered.body.next_update).toBe('2099-01-01T00:00:00Z');
    expect(registered.headers.get('location')).toBe(`${platform.base('trust')}/trust-lists/DE`);
    expect(registered.body).toMatchObject({ jurisdiction: 'DE', framework: 'eIDAS', sequence_number: 1, entries: [] });
    versions.push(registered.body);
    for (const jurisdiction of ['DE', 'de']) {
      const again = await post('/trust-lists', { jurisdiction, framework: 'other' });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('TRUST_LIST_EXISTS');
    }
  });

  it('bumps the sequence number with every change and records nothing for an unchanged restatement', async () => {
    // A new entry is a creation (201, Location: the list that holds it); a change of one is 200.
    const changes: [change: Record<string, string>, status: number][] = [
      [{ id: 'ca-1', service_type: QC, name: 'First CA', node_id: 'acme' }, 201],
      [{ id: 'ca-2', service_type: QC, name: 'Second CA' }, 201],
      [{ id: 'ca-1', name: 'First CA (renamed)' }, 200],
    ];
    for (const [change, status] of changes) {
      await tick();
      const response = await post('/trust-lists/de/entries', change);
      expect(response.status).toBe(status);
      expect(response.headers.get('location')).toBe(status === 201 ? `${platform.base('trust')}/trust-lists/DE` : null);
      expect(response.body.changed).toBe(true);
      expect(response.body.list.sequence_number).toBe(versions.length + 1);
      versions.push(response.body.list);
    }
    expect(versions[3].entries[0]).toMatchObject({ id: 'ca-1', name: 'First CA (renamed)', status: 'granted', history: [{ name: 'First CA', status: 'granted' }] });
    const restated = await post('/trust-lists/DE/entries', { id: 'ca-1', name: 'First CA (renamed)' });
    expect(restated.status).toBe(200);
    expect(restated.body).toMatchObject({ changed: false, list: { sequence_number: 4 } });
  });

  it('withdraws an entry with superseded_at from that instant on, keeping its history', async () => {
    await tick();
    const supersededAt = versions[2].issued_at; // in the past: version 2 and 3 keep saying "granted"
    const withdrawn = await post('/trust-lists/DE/entries', { id: 'ca-2', superseded_at: supersededAt });
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body.entry).toMatchObject({ id: 'ca-2', status: 'withdrawn', status_starting_time: supersededAt, history: [{ status: 'granted' }] });
    expect(withdrawn.body.list.sequence_number).toBe(5);
    versions.push(withdrawn.body.list);
    expect(withdrawn.body.list.entries.map((entry: { id: string }) => entry.id)).toEqual(['ca-1', 'ca-2']);
  });

  it('answers ?at= exactly as the list stood, at and between every version', async () => {
    expect((await get(`/trust-lists/DE?at=${encodeURIComponent(beforeRegistration)}`)).status).toBe(404);
    for (const [index, version] of versions.entries()) {
      const atIssue = await get(`/trust-lists/DE?at=${encodeURIComponent(version.issued_at)}`);
      expect(atIssue.status).toBe(200);
      expect(atIssue.body).toEqual(version);
      const next = versions[index + 1];
      if (next) {
        const between = new Date((Date.parse(version.issued_at) + Date.parse(next.issued_at)) / 2).toISOString();
        if (between !== version.issued_at) expect((await get(`/trust-lists/de?at=${encodeURIComponent(between)}`)).body).toEqual(version);
        // One millisecond before the next version, this one still holds (same instant in another offset).
        const justBefore = Date.parse(next.issued_at) - 1;
        expect((await get(`/trust-lists/DE?at=${encodeURIComponent(inPlusTwo(justBefore))}`)).body).toEqual(version);
      }
    }
    expect((await get('/trust-lists/DE')).body).toEqual(versions.at(-1));
    // Version 3 still says ca-2 was granted: it was recorded before the withdrawal.
    expect(versions[2].entries.find((entry: { id: string }) => entry.id === 'ca-2').status).toBe('granted');
  });

  it('filters GET /trust-lists by at, jurisdiction and framework', async () => {
    expect((await post('/trust-lists', { jurisdiction: 'FR', framework: 'LoTE' })).status).toBe(201);
    const all = await get('/trust-lists');
    expect(all.body.trust_lists.map((list: { jurisdiction: string }) => list.jurisdiction)).toEqual(['DE', 'FR']);
    expect((await get('/trust-lists?framework=LoTE')).body.trust_lists.map((list: { jurisdiction: string }) => list.jurisdiction)).toEqual(['FR']);
    expect((await get('/trust-lists?jurisdiction=de')).body.trust_lists).toEqual([versions.at(-1)]);
    const then = await get(`/trust-lists?at=${encodeURIComponent(versions[1].issued_at)}`);
    expect(then.body.trust_lists).toEqual([versions[1]]);
    expect((await get(`/trust-lists?at=${encodeURIComponent(beforeRegistration)}`)).body.trust_lists).toEqual([]);
  });

  it('has deleted nothing: every change is a row of its own', async () => {
    const rows = await sql<{ sequence_number: number }>(platform.databaseUrl, `SELECT sequence_number FROM trust.trust_list_change WHERE jurisdiction = 'DE' ORDER BY 1`);
    expect(rows.rows.map((row) => row.sequence_number)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('bad requests change nothing and are never a 5xx', () => {
  it.each([
    ['a withdrawal in the future', '/trust-lists/DE/entries', () => ({ id: 'ca-1', superseded_at: new Date(Date.now() + 3_600_000).toISOString() }), 422, 'INVALID_ENTRY'],
    ['withdrawing an unknown entry', '/trust-lists/DE/entries', () => ({ id: 'ca-9', superseded_at: new Date().toISOString() }), 422, 'UNKNOWN_ENTRY'],
    ['a new entry without service type', '/trust-lists/DE/entries', () => ({ id: 'ca-3' }), 422, 'INVALID_ENTRY'],
    ['a service type that is not a URI', '/trust-lists/DE/entries', () => ({ id: 'ca-3', service_type: 'qualified CA' }), 422, 'INVALID_ENTRY'],
    ['a list that does not exist', '/trust-lists/IT/entries', () => ({ id: 'ca-1', service_type: QC }), 404, 'UNKNOWN_TRUST_LIST'],
    ['a jurisdiction that is no code', '/trust-lists', () => ({ jurisdiction: 'Germany', framework: 'eIDAS' }), 422, 'INVALID_TRUST_LIST'],
    ['a next update in the past', '/trust-lists', () => ({ jurisdiction: 'AT', framework: 'eIDAS', next_update: '2020-01-01T00:00:00Z' }), 422, 'INVALID_TRUST_LIST'],
    ['an unknown member', '/trust-lists/DE/entries', () => ({ id: 'ca-1', colour: 'red' }), 400, 'INVALID_REQUEST'],
    ['a missing framework', '/trust-lists', () => ({ jurisdiction: 'AT' }), 400, 'INVALID_REQUEST'],
  ])('%s', async (_name, path, body, status, code) => {
    const before = await get('/trust-lists');
    const response = await post(path, body());
    expect(response.status).toBe(status);
    expect(response.body.code).toBe(code);
    expect(await get('/trust-lists')).toMatchObject({ body: before.body });
  });

  it('answers bad query parameters with 400 and writes without a token with 401', async () => {
    expect((await get('/trust-lists?at=yesterday')).status).toBe(400);
    expect((await get('/trust-lists?jurisdiction=Germany')).body.code).toBe('INVALID_QUERY');
    expect((await get('/trust-lists/DE?colour=red')).status).toBe(400);
    expect((await get('/trust-lists/XX')).status).toBe(404);
    expect((await platform.rest('trust', '/trust-lists', { body: { jurisdiction: 'AT', framework: 'x' } })).status).toBe(401);
  });
});

describe('concurrent writers', () => {
  it('get distinct, gapless sequence numbers and one registration per jurisdiction', async () => {
    const registrations = await Promise.all(Array.from({ length: 4 }, () => post('/trust-lists', { jurisdiction: 'NL', framework: 'eIDAS' })));
    expect(registrations.map((response) => response.status).sort()).toEqual([201, 409, 409, 409]);
    const upserts = await Promise.all(Array.from({ length: 12 }, (_, index) => post('/trust-lists/NL/entries', { id: `tsp-${index}`, service_type: QC })));
    expect(upserts.every((response) => response.status === 201)).toBe(true);
    expect(upserts.map((response) => response.body.list.sequence_number).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, index) => index + 2));
    const list = (await get('/trust-lists/NL')).body;
    expect(list.sequence_number).toBe(13);
    expect(list.entries).toHaveLength(12);
  });
});

describe('in the federated graph', () => {
  it('answers the same lists', async () => {
    const result = await platform.graphql('{ trustList(jurisdiction: "de") { sequenceNumber entries { id status history { status } } } trustLists(framework: "LoTE") { jurisdiction } }');
    expect(result.errors).toBeUndefined();
    expect(result.data.trustList.sequenceNumber).toBe(5);
    expect(result.data.trustLists).toEqual([{ jurisdiction: 'FR' }]);
  });
});
