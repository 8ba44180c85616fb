/**
 * Tier-A packs end to end (scanned as a QR image and verified with WebCrypto against /keyring),
 * the QR budget, key rotation, profiles and applicability, and the trust step of the verdict.
 * Needs the registry service; the last block also needs the trust service (trustKeyStanding,
 * POST /nodes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { readPackIndependently, scanQr } from '../support/pack-reader.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { DAY, fromNow, newKey, seconds, signedJsonCredential } from '../trust/support.js';
import { appendEvent, createModel, createPassport, keyring, PAYLOADS } from './support.js';

let platform: TestStack;
const MODEL = 'issuer-pack-battery';

beforeAll(async () => {
  platform = await startTestStack();
  await createModel(platform, MODEL);
}, 60_000);
afterAll(() => platform?.stop());

const mint = (id: string) => platform.rest('issuer', `/passports/${id}/pack`, { method: 'POST', as: 'writer' });
const verdictOf = async (id: string) => (await platform.rest('issuer', `/passports/${id}/verdict`)).body;
const outcomes = (verdict: { checks: { check: string; outcome: string }[] }) => Object.fromEntries(verdict.checks.map((check) => [check.check, check.outcome]));

describe('POST /passports/{id}/pack', () => {
  it('mints a pack that scans as a QR code and verifies with WebCrypto against /keyring', async () => {
    const { passport_id: id, log_head } = await createPassport(platform, MODEL, { capability_class: 'verify-offline' });
    await appendEvent(platform, id, 'activated', PAYLOADS.activated!());
    const appended = await appendEvent(platform, id, 'ObjectEvent', PAYLOADS.ObjectEvent!());
    const response = await mint(id);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ passport_id: id, size: response.body.text.length, budget: 1134 });
    expect(response.body.size).toBeLessThanOrEqual(1134);
    expect(log_head.size).toBe(0);

    const scanned = await scanQr(response.body.text);
    expect(scanned).toBe(response.body.text);
    const { valid, kid, claims } = await readPackIndependently(scanned, await keyring(platform));
    expect(valid).toBe(true);
    expect(kid).toBe(response.body.kid);
    expect(claims.get(2)).toBe(id);
    expect(claims.get(-1)).toBe('verify-offline');
    expect(claims.get(-2)).toEqual([MODEL, 1]);
    expect(claims.get(-3)).toBe('active');
    const [size, root] = claims.get(-4) as [number, Uint8Array];
    expect([size, Buffer.from(root).toString('hex')]).toEqual([2, appended.body.log_head.root_hash]);
    expect(claims.get(-8)).toEqual([appended.body.log_head.timestamp, appended.body.log_head.signature]);

    expect((await platform.rest('issuer', `/passports/${id}`)).body.latest_pack).toBe(response.body.text);
    const verdict = await verdictOf(id);
    expect(outcomes(verdict)).toMatchObject({ 'pack.signature': 'passed', 'pack.head': 'passed', 'pack.status': 'passed' });
    expect(verdict.pack_verdict).toMatchObject({ present: true, ok: true, kid: response.body.kid, capability_class: 'verify-offline' });

    // The log moves on: the stored pack is now stale, and the verdict says so.
    await appendEvent(platform, id, 'suspended', PAYLOADS.suspended!());
    const stale = await verdictOf(id);
    expect(outcomes(stale)).toMatchObject({ 'pack.signature': 'passed', 'pack.head': 'failed', 'pack.status': 'failed' });
  });

  it('needs the writer role', async () => {
    const { passport_id: id } = await createPassport(platform, MODEL);
    expect((await platform.rest('issuer', `/passports/${id}/pack`, { method: 'POST' })).status).toBe(401);
  });

  it('refuses a pack over the configured QR budget with 422, size and budget, and records nothing', async () => {
    const { passport_id: id } = await createPassport(platform, MODEL);
    const first = await mint(id);
    expect(first.status).toBe(201);
    process.env.ISSUER_QR_BUDGET = '60';
    try {
      await platform.restart();
      const refused = await mint(id);
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ code: 'PACK_OVER_BUDGET', budget: 60 });
      // The size is this mint's (signature and time vary a pack's compressed length by a little).
      expect(refused.body.size).toBeGreaterThan(60);
      expect(Math.abs(refused.body.size - first.body.size)).toBeLessThan(12);
      expect(refused.body.detail).toContain(`${refused.body.size} characters`);
      const stored = await sql(platform.databaseUrl, 'SELECT latest_pack FROM "issuer".passport WHERE id = $1', [id]);
      expect(stored.rows[0]!.latest_pack).toBe(first.body.text);
      expect((await platform.rest('issuer', '/')).body.qr_budget).toBe(60);
    } finally {
      delete process.env.ISSUER_QR_BUDGET;
      await platform.restart();
    }
    expect((await platform.rest('issuer', '/')).body.qr_budget).toBe(1134);
  }, 60_000);

  it('keeps old events and packs verifiable after both keys rotate', async () => {
    const { passport_id: id } = await createPassport(platform, MODEL, { capability_class: 'trace' });
    await appendEvent(platform, id, 'ObjectEvent', PAYLOADS.ObjectEvent!());
    const oldPack = (await mint(id)).body;
    const before = await keyring(platform);
    for (const purpose of ['event', 'carrier']) {
      const { errors } = await platform.graphql(`mutation ($p: String!) { issuerRotateKey(purpose: $p) }`, { p: purpose }, 'admin');
      expect(errors).toBeUndefined();
    }
    const after = await keyring(platform);
    expect(after.length).toBe(before.length + 2);
    const appended = await appendEvent(platform, id, 'ObjectEvent', PAYLOADS.ObjectEvent!());
    const firstKid = (await platform.rest('issuer', `/passports/${id}?include_events=true`)).body.log[0].kid;
    expect(appended.body.event.kid).not.toBe(firstKid);
    expect((await readPackIndependently(oldPack.text, after)).valid).toBe(true);
    const verdict = await verdictOf(id);
    expect(verdict.event_signature_audit).toMatchObject({ verified: 2, total: 2 });
    expect(outcomes(verdict)['pack.signature']).toBe('passed');
    const newPack = (await mint(id)).body;
    expect(newPack.kid).not.toBe(oldPack.kid);
    expect((await readPackIndependently(newPack.text, after)).valid).toBe(true);
  });
});

describe('POST /admin/profiles and POST /admin/applicability', () => {
  it('are for admins only', async () => {
    const profile = { profile_id: 'p-auth', capability_classes: ['identify'] };
    expect((await platform.rest('issuer', '/admin/profiles', { body: profile })).status).toBe(401);
    expect((await platform.rest('issuer', '/admin/profiles', { body: profile, as: 'writer' })).status).toBe(403);
    const rule = { model_id: MODEL, profile_id: 'p-auth' };
    expect((await platform.rest('issuer', '/admin/applicability', { body: rule })).status).toBe(401);
    expect((await platform.rest('issuer', '/admin/applicability', { body: rule, as: 'writer' })).status).toBe(403);
  });

  it('decide the capability classes and claims passports of a model get at creation', async () => {
    const model = 'issuer-profiled-battery';
    await createModel(platform, model);
    const claims = { regulation: 'EU 2023/1542', battery_category: 'ev' };
    const created = await platform.rest('issuer', '/admin/profiles', {
      body: { profile_id: 'ev-battery', description: 'EV batteries', capability_classes: ['trace', 'verify-offline'], default_capability_class: 'trace', claims },
      as: 'admin',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ profile_id: 'ev-battery', capability_classes: ['trace', 'verify-offline'], default_capability_class: 'trace', claims });
    const rule = await platform.rest('issuer', '/admin/applicability', { body: { model_id: model, profile_id: 'ev-battery' }, as: 'admin' });
    expect(rule.status).toBe(201);
    expect(rule.body).toMatchObject({ model_id: model, model_version: null, profile_id: 'ev-battery' });

    const defaulted = await createPassport(platform, model);
    expect(defaulted.capability_class).toBe('trace');
    expect(defaulted.core).toMatchObject({ profile_id: 'ev-battery', claims, capability_class: 'trace' });
    const refused = await platform.rest('issuer', '/passports', {
      body: { identity: 'https://id.gs1.org/01/09520123456788/21/REFUSED-1', type_ref: { id: model, version: 1 }, config_vector: { chemistry: 'NMC' }, capability_class: 'identify' },
      as: 'writer',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'CAPABILITY_CLASS_NOT_APPLICABLE', profile_id: 'ev-battery' });

    // A rule for the exact version wins over the model-wide rule; replacing answers 200.
    await platform.rest('issuer', '/admin/profiles', { body: { profile_id: 'v1-only', capability_classes: ['identify'], claims: { tier: 'basic' } }, as: 'admin' });
    expect((await platform.rest('issuer', '/admin/applicability', { body: { model_id: model, model_version: 1, profile_id: 'v1-only' }, as: 'admin' })).status).toBe(201);
    const exact = await createPassport(platform, model);
    expect(exact.core).toMatchObject({ profile_id: 'v1-only', claims: { tier: 'basic' }, capability_class: 'identify' });
    const replaced = await platform.rest('issuer', '/admin/profiles', { body: { profile_id: 'v1-only', capability_classes: ['identify', 'trace'], claims: { tier: 'plus' } }, as: 'admin' });
    expect(replaced.status).toBe(200);
    expect((await createPassport(platform, model)).core.claims).toEqual({ tier: 'plus' });
    // Passports made before keep what they were made with.
    expect((await platform.rest('issuer', `/passports/${exact.passport_id}`)).body.core.claims).toEqual({ tier: 'basic' });
  });

  it('refuse bad profiles and rules with 4xx and keep what was stored', async () => {
    const cases: [string, string, unknown, number, string][] = [
      ['uppercase class', '/admin/profiles', { profile_id: 'bad', capability_classes: ['A'] }, 422, 'UNKNOWN_CAPABILITY_CLASS'],
      ['no classes', '/admin/profiles', { profile_id: 'bad', capability_classes: [] }, 422, 'UNKNOWN_CAPABILITY_CLASS'],
      ['default outside the list', '/admin/profiles', { profile_id: 'bad', capability_classes: ['identify'], default_capability_class: 'trace' }, 422, 'INVALID_PROFILE'],
      ['id not a token', '/admin/profiles', { profile_id: 'Bad Id', capability_classes: ['identify'] }, 422, 'INVALID_PROFILE'],
      ['claims as array', '/admin/profiles', { profile_id: 'bad', capability_classes: ['identify'], claims: [] }, 400, 'INVALID_REQUEST'],
      ['unknown profile', '/admin/applicability', { model_id: MODEL, profile_id: 'nobody' }, 422, 'UNKNOWN_PROFILE'],
      ['version 0', '/admin/applicability', { model_id: MODEL, model_version: 0, profile_id: 'ev-battery' }, 422, 'INVALID_APPLICABILITY'],
      ['missing model', '/admin/applicability', { profile_id: 'ev-battery' }, 400, 'INVALID_REQUEST'],
      ['NUL in the profile id', '/admin/applicability', { model_id: MODEL, profile_id: 'ev\u0000' }, 422, 'UNSUPPORTED_CHARACTER'],
      // Was a 500: the primary key's index cannot hold an entry of a few kilobytes (found by soak/malformed.ts).
      ['model id longer than any registry id', '/admin/applicability', { model_id: 'm'.repeat(300_000), profile_id: 'ev-battery' }, 422, 'INVALID_APPLICABILITY'],
    ];
    for (const [name, path, body, status, code] of cases) {
      const response = await platform.rest('issuer', path, { body, as: 'admin' });
      expect([name, response.status, response.body?.code]).toEqual([name, status, code]);
    }
    const stored = await sql(platform.databaseUrl, `SELECT count(*) AS n FROM "issuer".issuer_profile WHERE id = 'bad'`);
    expect(Number(stored.rows[0]!.n)).toBe(0);
  });

  it('are written to the admin log', async () => {
    const log = await platform.rest('issuer', '/admin/log?limit=100', { as: 'admin' });
    const actions = log.body.entries.map((entry: { action: string }) => entry.action);
    expect(actions).toEqual(expect.arrayContaining(['upsertIssuerProfile', 'setIssuerApplicability', 'createPassport', 'appendPassportEvent', 'mintPassportPack']));
  });
});

describe('the trust step of the verdict', () => {
  it('asks trust for the standing of each signing key and reports it in the coverage', async () => {
    const { passport_id: id } = await createPassport(platform, MODEL);
    await appendEvent(platform, id, 'activated', PAYLOADS.activated!());
    await mint(id);
    // The keys rotated above by the bare mutations were placed in the trust graph's platform node at
    // once: every signing key's standing is asked and found.
    const placed = await verdictOf(id);
    expect(outcomes(placed)).toMatchObject({ 'key_standing.event': 'passed', 'key_standing.log_head': 'passed', 'key_standing.pack': 'passed' });
    expect(placed.coverage).toMatchObject({ checks_run: placed.checks.length, not_run: [] });

    // Trust vouches for a key only on a delegation path from a root: a root (its key made by Node's
    // crypto), the issuer as a node with its current keys, and the root's credential delegating to it.
    const root = await newKey();
    const rootNode = await platform.rest('trust', '/nodes', { body: { id: 'root-under-test', kind: 'root', keys: [{ ...root.jwk, iat: seconds(new Date(Date.now() - DAY)) }] }, as: 'admin' });
    expect(rootNode.status, JSON.stringify(rootNode.body)).toBe(201);
    const keys = (await keyring(platform)).filter((key) => !key.exp).map(({ kty, crv, x, y, kid, alg, iat }) => ({ kty, crv, x, ...(y ? { y } : {}), kid, alg, iat }));
    const node = await platform.rest('trust', '/nodes', { body: { id: 'issuer-under-test', kind: 'issuer', keys }, as: 'admin' });
    expect(node.status, JSON.stringify(node.body)).toBeLessThan(300);
    const credential = await signedJsonCredential({ iss: 'root-under-test', sub: 'issuer-under-test', scope: {}, iat: fromNow(-DAY / 2), exp: fromNow(365 * DAY) }, root);
    const edge = await platform.rest('trust', '/edges', { body: credential, as: 'admin' });
    expect(edge.status, JSON.stringify(edge.body)).toBe(201);
    // Under a hierarchy of the deployment's own, the keys stand as well.
    const known = await verdictOf(id);
    expect(outcomes(known)).toMatchObject({ 'key_standing.event': 'passed', 'key_standing.log_head': 'passed', 'key_standing.pack': 'passed' });
    expect(known.outcome).toBe('verified');
    expect(known.coverage).toMatchObject({ checks_run: known.checks.length, not_run: [] });
  });
});
