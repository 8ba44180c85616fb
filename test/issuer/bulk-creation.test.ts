/**
 * Onboarding a product line (issue 44, item 6), from outside: an operator creates passports in bulk
 * with POST /issuer/passports/batch (and createPassports over the gateway), all or none, each still
 * one live passport per identity; every passport made is readable and its empty log's head verifies
 * with jose against the published keyring.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { CONFIG_VECTOR, createModel, createPassport, keyring, verifySignedJson } from './support.js';

let platform: SharedTestStack;
const MODEL = 'bulk-battery';
const LINE = `BULK-${process.pid}`;
let serial = 0;
/** A fresh identity of this file's product line. */
const identity = () => `https://id.gs1.org/01/09520123456788/21/${LINE}-${(serial += 1)}`;
const item = (extra: Record<string, unknown> = {}) => ({ identity: identity(), type_ref: { id: MODEL, version: 1 }, config_vector: CONFIG_VECTOR, ...extra });
/** Passports of this file's product line (the shared stack's other files make their own). */
const lineCount = async () => Number((await sql(platform.databaseUrl, `SELECT count(*) AS n FROM "issuer".passport WHERE digital_link LIKE $1`, [`%/21/${LINE}-%`])).rows[0]!.n);
const batch = (passports: unknown[], headers: Record<string, string> = {}) =>
  platform.rest('issuer', '/passports/batch', { body: { passports }, ...(headers.authorization ? { headers } : { as: 'writer' as const }) });

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
});

describe('POST /issuer/passports/batch', () => {
  it('creates 1,000 passports in one request, in order, each readable and its signed empty-log head verifying against the keyring', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => item(i % 2 === 0 ? { capability_class: 'trace' } : {}));
    const before = await lineCount();
    const response = await batch(items);
    expect(response.status, response.text.slice(0, 500)).toBe(201);
    expect(response.headers.get('location')).toBeNull();
    const created = response.body.passports as any[];
    expect(created).toHaveLength(1000);
    expect(await lineCount()).toBe(before + 1000);
    expect(new Set(created.map((passport) => passport.passport_id)).size).toBe(1000);
    const keys = await keyring(platform);
    for (const [i, passport] of created.entries()) {
      expect(passport).toMatchObject({ status: 'draft', log: [], log_size: 0, manifest: CONFIG_VECTOR, capability_class: i % 2 === 0 ? 'trace' : 'identify' });
      expect(passport.core.identity.uri).toBe(items[i]!.identity);
      expect(passport.core.issuer).toBe(created[0].core.issuer);
      expect(passport.log_head).toMatchObject({ passport_id: passport.passport_id, size: 0 });
      expect((await verifySignedJson(passport.log_head, keys)).protectedHeader?.alg).toBe('Ed25519');
    }
    // Each reads back as it was answered, through the graph (two requests of 500).
    for (const offset of [0, 500]) {
      const ids = created.slice(offset, offset + 500).map((passport) => passport.passport_id);
      const read = await platform.graphql('query ($ids: [ID!]!) { passports(ids: $ids) { id status logSize logHead } }', { ids });
      expect(read.errors).toBeUndefined();
      expect(read.data.passports.map((passport: any) => [passport.id, passport.status, passport.logSize, passport.logHead])).toEqual(
        created.slice(offset, offset + 500).map((passport) => [passport.passport_id, 'draft', 0, passport.log_head]),
      );
    }
    // The full verdict of the first, a middle and the last, and their REST reads.
    for (const passport of [created[0], created[499], created[999]]) {
      expect((await platform.rest('issuer', `/passports/${passport.passport_id}`)).body).toEqual({ ...passport, log: undefined });
      const verdict = await platform.rest('issuer', `/passports/${passport.passport_id}/verdict`);
      expect([verdict.status, verdict.body.log_verdict.ok]).toEqual([200, true]);
    }
  });

  it('refuses the whole request for any bad item, naming every refused index, and creates nothing', async () => {
    const { passport_id: live } = await createPassport(platform, MODEL, { identity: identity() });
    const liveIdentity = (await platform.rest('issuer', `/passports/${live}`)).body.core.identity.uri as string;
    const twin = identity();
    const cases: [string, unknown[], number, [number, string][]][] = [
      ['a bad identity', [item(), item({ identity: 'https://id.gs1.org/01/09520123456787/21/X' })], 422, [[1, 'INVALID_IDENTITY']]],
      ['an unknown model', [item({ type_ref: { id: 'no-such-model', version: 1 } }), item()], 422, [[0, 'UNKNOWN_TYPE_REF']]],
      ['an invalid config vector', [item(), item(), item({ config_vector: { chemistry: 'lead-acid' } })], 422, [[2, 'INVALID_CONFIG_VECTOR']]],
      ['an identity with a live passport', [item(), item({ identity: liveIdentity })], 409, [[1, 'LIVE_PASSPORT_EXISTS']]],
      ['one identity twice', [item({ identity: twin }), item(), item({ identity: twin })], 422, [[2, 'DUPLICATE_IDENTITY']]],
      [
        'several at once',
        [item({ identity: liveIdentity }), item({ capability_class: 'C' }), item(), item({ config_vector: { chemistry: 'NMC', extra: 1 } })],
        422,
        [
          [1, 'UNKNOWN_CAPABILITY_CLASS'],
          [3, 'INVALID_CONFIG_VECTOR'],
        ],
      ],
    ];
    for (const [name, passports, status, refused] of cases) {
      const before = await lineCount();
      const response = await batch(passports);
      expect([name, response.status, response.body.code]).toEqual([name, status, 'BATCH_REFUSED']);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect([name, response.body.items.map((entry: any) => [entry.index, entry.code])]).toEqual([name, refused]);
      expect(response.body.detail).toContain(`item${refused.length === 1 ? '' : 's'} ${refused.map(([index]) => index).join(', ')}`);
      expect(await lineCount()).toBe(before);
    }
    // The items name what refused them: the live passport with its URL, the first of two twins, the registry's errors.
    const conflict = await batch([item({ identity: liveIdentity })]);
    expect(conflict.body.items[0]).toMatchObject({ index: 0, status: 409, passport_id: live, passport_url: `${platform.base('issuer')}/passports/${live}` });
    const twins = await batch([item({ identity: twin }), item({ identity: twin })]);
    expect(twins.body.items[0]).toMatchObject({ index: 1, status: 422, same_as: 0 });
    const invalid = await batch([item({ config_vector: { chemistry: 'lead-acid' } })]);
    expect(invalid.body.items[0].errors[0]).toMatchObject({ pointer: '/chemistry' });
  });

  it('asks the registry once per model version, however many config vectors and creations: each is checked in process', async () => {
    /** Operations the gateway answered under a name, from the platform's metrics. */
    const answered = async (name: string) => {
      const exposition = await (await fetch(platform.stack.metrics.url)).text();
      const counts = exposition
        .split('\n')
        .filter((line) => line.startsWith('graphql_server_operation_duration_seconds_count{') && line.includes('server="gateway"') && line.includes(`graphql_operation_name="${name}"`));
      return counts.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    };
    const model = 'bulk-battery-asked-once';
    await createModel(platform, model);
    const before = [await answered('IssuerTypeRef'), await answered('IssuerValidateConfigVector')];
    const ofModel = (i: number) => item({ type_ref: { id: model, version: 1 }, config_vector: { chemistry: 'NMC', capacity_kwh: i + 1 } });
    const response = await batch(Array.from({ length: 50 }, (_, i) => ofModel(i)));
    expect(response.status, response.text.slice(0, 300)).toBe(201);
    expect([await answered('IssuerTypeRef'), await answered('IssuerValidateConfigVector')]).toEqual([before[0]! + 1, before[1]]);
    // A version never changes once stored: later creations of it are checked without asking again.
    expect((await batch([ofModel(50)])).status).toBe(201);
    expect((await platform.rest('issuer', '/passports', { body: ofModel(51), as: 'writer' })).status).toBe(201);
    expect([await answered('IssuerTypeRef'), await answered('IssuerValidateConfigVector')]).toEqual([before[0]! + 1, before[1]]);
  });

  it('races a single creation of one of its identities: exactly one of the two has it, and a refused batch leaves nothing', async () => {
    for (let round = 0; round < 3; round += 1) {
      const items = Array.from({ length: 200 }, () => item());
      const before = await lineCount();
      const [bulk, single] = await Promise.all([batch(items), platform.rest('issuer', '/passports', { body: items[150], as: 'writer' })]);
      if (bulk.status === 201) {
        expect([single.status, single.body.code]).toEqual([409, 'LIVE_PASSPORT_EXISTS']);
        expect(await lineCount()).toBe(before + 200);
      } else {
        expect([bulk.status, bulk.body.code, bulk.body.items.map((entry: any) => [entry.index, entry.code])]).toEqual([409, 'BATCH_REFUSED', [[150, 'LIVE_PASSPORT_EXISTS']]]);
        expect(bulk.body.items[0].passport_id).toBe(single.body.passport_id);
        expect([single.status, await lineCount()]).toEqual([201, before + 1]);
      }
    }
  });

  it('refuses more than 1,000, or none, with a problem naming the limit', async () => {
    const before = await lineCount();
    const over = await batch(Array.from({ length: 1001 }, () => item()));
    expect([over.status, over.body.code, over.body.limit, over.body.found]).toEqual([400, 'INVALID_BATCH_SIZE', 1000, 1001]);
    expect(over.body.detail).toBe('A creation takes 1 to 1000 passports; this one has 1001.');
    const none = await batch([]);
    expect([none.status, none.body.code]).toEqual([400, 'INVALID_BATCH_SIZE']);
    // An item GraphQL cannot take at all is refused whole too, naming where it is.
    const mistyped = await batch([item(), item({ type_ref: 'battery@1' })]);
    expect([mistyped.status, mistyped.body.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(mistyped.body.detail).toContain('[1]');
    expect(await lineCount()).toBe(before);
  });

  it("creates with an operator's writer token passports of that operator, signed with its key", async () => {
    const operator = `line-${process.pid}`;
    expect((await platform.rest('issuer', '/operators', { body: { id: operator, name: 'Line Ltd' }, as: 'admin' })).status).toBe(201);
    const token = await platform.rest('issuer', '/admin/tokens', { body: { operator, role: 'writer', label: 'onboarding' }, as: 'admin' });
    expect(token.status, token.text).toBe(201);
    const response = await batch([item(), item()], { authorization: `Bearer ${token.body.secret}` });
    expect(response.status, response.text).toBe(201);
    const eventKey = (await keyring(platform)).find((key) => (key as { operator?: string; purpose?: string }).operator === operator && (key as { purpose?: string }).purpose === 'event')!;
    for (const passport of response.body.passports) {
      expect(passport.core.issuer).toBe(operator);
      expect((await verifySignedJson(passport.log_head, [eventKey])).protectedHeader?.kid).toBe(eventKey.kid);
    }
    // Anonymous callers create nothing.
    expect((await platform.rest('issuer', '/passports/batch', { body: { passports: [item()] } })).status).toBe(401);
  });
});

describe('createPassports over the gateway', () => {
  const CREATE = `mutation ($inputs: [CreatePassportInput!]!) { createPassports(inputs: $inputs) { id status logHead core } }`;
  const input = () => ({ identity: identity(), typeRef: { id: MODEL, version: 1 }, configVector: CONFIG_VECTOR });

  it('creates them in order, all or none', async () => {
    const inputs = [input(), input(), input()];
    const created = await platform.graphql(CREATE, { inputs }, 'writer');
    expect(created.errors).toBeUndefined();
    expect(created.data.createPassports.map((passport: any) => passport.core.identity.uri)).toEqual(inputs.map((one) => one.identity));

    const before = await lineCount();
    const refused = await platform.graphql(CREATE, { inputs: [input(), { ...input(), identity: inputs[0]!.identity }] }, 'writer');
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BATCH_REFUSED', problem: { status: 409, items: [{ index: 1, code: 'LIVE_PASSPORT_EXISTS' }] } });
    expect(await lineCount()).toBe(before);
    const tooMany = await platform.graphql(CREATE, { inputs: Array.from({ length: 1001 }, input) }, 'writer');
    expect(tooMany.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_BATCH_SIZE', problem: { limit: 1000, found: 1001 } });
    expect(await lineCount()).toBe(before);
  });

  it('costs per passport given: a selection that would verify each of 27 new passports is refused before anything runs', async () => {
    const before = await lineCount();
    const costly = await platform.graphql(`mutation ($inputs: [CreatePassportInput!]!) { createPassports(inputs: $inputs) { id verdict } }`, { inputs: Array.from({ length: 27 }, input) }, 'writer');
    expect(costly.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: { setting: 'GRAPHQL_MAX_COST' } });
    expect(await lineCount()).toBe(before);
  });
});
