/**
 * Many operators on one platform (issue 44, item 1), from outside: the platform admin creates an
 * operator over REST; it gets its own keys in the issuer keyring, its own node in the trust graph
 * delegated from the platform's, and its own did:web; suspending it revokes that node from then on.
 */
import * as jose from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import * as verifier from '../../verifier/index.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { appendEvent, createModel, createPassport, keyring, PAYLOADS, verifySignedJson } from './support.js';

let platform: SharedTestStack;
const ACME = `acme-${process.pid}`;
const NODE = `operator:${ACME}`;
const MODEL = 'operators-battery';

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
});

describe('POST /issuer/operators', () => {
  it('creates an operator with its keys, its trust node delegated from the platform and its did:web; again, completes nothing more (200)', async () => {
    const refused = await platform.rest('issuer', '/operators', { body: { id: ACME, name: 'ACME Batteries' }, as: 'writer' });
    expect(refused.status).toBe(403);

    const created = await platform.rest('issuer', '/operators', { body: { id: ACME, name: 'ACME Batteries' }, as: 'admin' });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('location')).toBe(`${platform.base('issuer')}/operators/${ACME}`);
    expect(created.body).toMatchObject({ id: ACME, name: 'ACME Batteries', status: 'active', suspended_at: null });
    expect(created.body.did).toBe(`did:web:${new URL(platform.base('issuer')).host.replace(':', '%3A')}:issuer:operators:${ACME}`);
    const kids = (created.body.keys as { kid: string; purpose: string; operator: string }[]).map((key) => [key.purpose, key.operator]);
    expect(kids.sort()).toEqual([
      ['carrier', ACME],
      ['credential', ACME],
      ['event', ACME],
    ]);

    const again = await platform.rest('issuer', '/operators', { body: { id: ACME, name: 'ACME Batteries' }, as: 'admin' });
    expect(again.status, again.text).toBe(200);
    expect(again.body.keys).toEqual(created.body.keys);

    // The keyring publishes them with the operator's id; the platform's own keys have none.
    const keyring = (await platform.rest('issuer', '/keyring')).body.keys as { kid: string; purpose: string; operator?: string }[];
    for (const key of created.body.keys) expect(keyring).toContainEqual(key);
    expect(keyring.find((key) => key.purpose === 'service')!.operator).toBeUndefined();
    expect(keyring.filter((key) => key.purpose === 'event').map((key) => key.operator)).toContain('default');

    // Its node holds exactly its keys, and one delegation edge from the platform's root reaches it.
    const graph = (await platform.rest('trust', '/graph')).body;
    const node = graph.nodes.find((candidate: { id: string }) => candidate.id === NODE);
    expect(node.kind).toBe('issuer');
    expect(node.keys.map((key: { kid: string }) => key.kid).sort()).toEqual(created.body.keys.map((key: { kid: string }) => key.kid).sort());
    const edges = graph.edges.filter((edge: { sub: string }) => edge.sub === NODE);
    expect(edges.map((edge: { iss: string }) => edge.iss)).toEqual(['platform']);
    const platformNode = graph.nodes.find((candidate: { id: string }) => candidate.id === 'platform');
    expect(platformNode.keys.map((key: { kid: string }) => key.kid)).not.toContain(created.body.keys[0].kid);

    // A verifier's material for its carrier key: the operator's node, the platform root and the edge between.
    const carrier = created.body.keys.find((key: { purpose: string }) => key.purpose === 'carrier');
    const path = (await platform.rest('trust', `/keys/${carrier.kid}/path`)).body;
    expect(path.nodes.map((candidate: { id: string }) => candidate.id).sort()).toEqual([NODE, 'platform']);
    expect(path.edges).toHaveLength(1);

    // Its did:web document lists its keys, the credential key as assertion method.
    const did = await platform.rest('issuer', `/operators/${ACME}/did.json`);
    expect(did.status).toBe(200);
    expect(did.body.id).toBe(created.body.did);
    const credentialKey = created.body.keys.find((key: { purpose: string }) => key.purpose === 'credential');
    expect(did.body.assertionMethod).toEqual([`${created.body.did}#${credentialKey.kid}`]);
    expect(did.body.verificationMethod).toHaveLength(3);
  });

  it('refuses a malformed id with 400 and creates nothing; lists and reads operators for the platform admin only', async () => {
    const bad = await platform.rest('issuer', '/operators', { body: { id: 'Not A Slug', name: 'x' }, as: 'admin' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_OPERATOR');
    const listed = await platform.rest('issuer', '/operators', { as: 'admin' });
    expect(listed.status).toBe(200);
    const ids = listed.body.operators.map((operator: { id: string }) => operator.id);
    expect(ids).toContain('default');
    expect(ids).not.toContain('Not A Slug');
    expect((await platform.rest('issuer', '/operators', { as: 'writer' })).status).toBe(403);
    expect((await platform.rest('issuer', '/operators/nobody-here', { as: 'admin' })).status).toBe(404);
    expect((await platform.rest('issuer', '/operators/nobody-here/did.json')).status).toBe(404);
    const own = await platform.rest('issuer', '/operators/default', { as: 'admin' });
    expect(own.body.did).toBe(`did:web:${new URL(platform.base('issuer')).host.replace(':', '%3A')}:issuer`);
  });
});

describe('who did it (item 5)', () => {
  it('records the acting operator and credential in each event, under its signature', async () => {
    const { passport_id: id } = await createPassport(platform, MODEL);
    const byWriter = await appendEvent(platform, id, 'activated', PAYLOADS.activated!());
    expect(byWriter.status, byWriter.text).toBe(201);
    expect(byWriter.body.event.actor).toEqual({ operator: 'default', credential: 'test-writer' });
    const byAdmin = await platform.rest('issuer', `/passports/${id}/events`, { body: { type: 'ObjectEvent', payload: PAYLOADS.ObjectEvent!() }, as: 'admin' });
    expect(byAdmin.status, byAdmin.text).toBe(201);
    expect(byAdmin.body.event.actor).toEqual({ operator: null, credential: 'test-admin' });

    // Signed with the default operator's event key, the actor included: another actor breaks the signature.
    const keys = await keyring(platform);
    const eventKey = keys.find((key) => key.kid === byWriter.body.event.kid)!;
    expect(eventKey).toMatchObject({ purpose: 'event', operator: 'default' });
    await verifySignedJson(byWriter.body.event, keys);
    await expect(verifySignedJson({ ...byWriter.body.event, actor: { operator: 'default', credential: 'test-admin' } }, keys)).rejects.toThrow();
    expect((await platform.rest('issuer', `/passports/${id}/pack`, { method: 'POST', as: 'writer' })).status).toBe(201);
    const verdict = (await platform.rest('issuer', `/passports/${id}/verdict`)).body;
    expect([verdict.outcome, verdict.coverage.checks_run]).toEqual(['verified', 12]);
  });

  it("writes the actor's operator into the admin log", async () => {
    await createPassport(platform, MODEL);
    const entries = (await platform.rest('issuer', '/admin/log?limit=50', { as: 'admin' })).body.entries as { action: string; operator: string | null; actor: string }[];
    expect(entries.find((entry) => entry.action === 'createPassport' && entry.actor === 'test-writer')?.operator).toBe('default');
  });
});

describe("an operator's passports", () => {
  const OWNER = `owner-${process.pid}`;
  let writer: { id: string; secret: string };
  const as = (secret: string) => ({ authorization: `Bearer ${secret}` });

  beforeAll(async () => {
    expect((await platform.rest('issuer', '/operators', { body: { id: OWNER, name: 'Owner Ltd' }, as: 'admin' })).status).toBe(201);
    const token = await platform.rest('issuer', '/admin/tokens', { body: { operator: OWNER, role: 'writer', label: 'line 1' }, as: 'admin' });
    expect(token.status, token.text).toBe(201);
    writer = { id: token.body.token?.id ?? token.body.id, secret: token.body.secret };
  });

  it("are signed with its keys, name its did:web, verify along platform → operator → key; another operator's writer is refused them", async () => {
    const created = await platform.rest('issuer', '/passports', {
      body: { identity: `https://id.gs1.org/01/09520123456788/21/OWN-${process.pid}`, type_ref: { id: MODEL, version: 1 }, config_vector: { chemistry: 'LFP' }, capability_class: 'verify-offline' },
      headers: as(writer.secret),
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.passport_id as string;
    expect(created.body.core.issuer).toBe(OWNER);
    const keys = (await keyring(platform)).filter((key) => (key as { operator?: string }).operator === OWNER);
    const kidOf = (purpose: string) => keys.find((key) => (key as { purpose?: string }).purpose === purpose)!.kid;
    expect(created.body.log_head.signature).toContain('.');

    const appended = await platform.rest('issuer', `/passports/${id}/events`, { body: { type: 'activated', payload: PAYLOADS.activated!() }, headers: as(writer.secret) });
    expect(appended.status, appended.text).toBe(201);
    expect(appended.body.event.kid).toBe(kidOf('event'));
    expect(appended.body.event.actor).toEqual({ operator: OWNER, credential: writer.id });
    const pack = await platform.rest('issuer', `/passports/${id}/pack`, { method: 'POST', headers: as(writer.secret) });
    expect(pack.status, pack.text).toBe(201);
    expect([pack.body.kid, pack.body.claims.iss]).toEqual([kidOf('carrier'), OWNER]);

    // The default operator's writer is refused another operator's passport, which is public (403, not 404); nothing changes.
    const foreign = await appendEvent(platform, id, 'ObjectEvent', PAYLOADS.ObjectEvent!());
    expect([foreign.status, foreign.body.code, foreign.body.operator]).toEqual([403, 'OWNED_BY_ANOTHER_OPERATOR', OWNER]);
    expect((await platform.rest('issuer', `/passports/${id}/pack`, { method: 'POST', as: 'writer' })).body.code).toBe('OWNED_BY_ANOTHER_OPERATOR');
    expect((await platform.rest('issuer', `/passports/${id}`)).body.log_size).toBe(1);
    const { passport_id: theirs } = await createPassport(platform, MODEL);
    expect((await platform.rest('issuer', `/passports/${theirs}/events`, { body: { type: 'activated', payload: PAYLOADS.activated!() }, headers: as(writer.secret) })).status).toBe(403);
    expect((await platform.rest('issuer', `/passports/nobody-${process.pid}/events`, { body: { type: 'activated', payload: PAYLOADS.activated!() }, headers: as(writer.secret) })).status).toBe(404);
    // The refusal is in the admin log, under the operator the refused writer acted for.
    const entries = (await platform.rest('issuer', '/admin/log?limit=50', { as: 'admin' })).body.entries as { action: string; outcome: string; operator: string; detail: { detail?: string } | null }[];
    const refusal = entries.find((entry) => entry.action === 'appendPassportEvent' && entry.outcome === 'OWNED_BY_ANOTHER_OPERATOR' && entry.detail?.detail?.includes(id));
    expect(refusal?.operator).toBe('default');

    // The verifier (the library the command line and /verify/ run) walks platform → operator → key and names the operator.
    const anchorBundle = (await platform.rest('trust', '/anchor-bundle')).body;
    const trustKeyring = (await platform.rest('trust', '/keyring')).body;
    const keyPath = (await platform.rest('trust', `/keys/${pack.body.kid}/path`)).body;
    const report = await verifier.verifyMaterial({ kind: 'pack', text: pack.body.text, keyPath }, verifier.pinsFrom({ anchorBundle, keySets: [trustKeyring] }));
    expect(report.verdict, JSON.stringify(report.findings)).toBe('valid');
    expect(report.findings.find((finding) => finding.check === 'pack.operator')?.message).toContain(`operator ${OWNER}`);

    // Its credential names its did:web, and verifies with jose under the key its DID document lists.
    const credential = await platform.rest('issuer', `/passports/${id}/credential`, { headers: { accept: 'application/vc+jwt' } });
    const jwt = credential.text;
    const header = jose.decodeProtectedHeader(jwt);
    const did = (await platform.rest('issuer', `/operators/${OWNER}/did.json`)).body;
    expect(String(header.kid).startsWith(`${did.id}#`)).toBe(true);
    const method = did.verificationMethod.find((candidate: { id: string }) => candidate.id === header.kid);
    const { payload } = await jose.compactVerify(jwt, await jose.importJWK(method.publicKeyJwk, 'Ed25519'));
    expect(JSON.parse(new TextDecoder().decode(payload)).issuer.id).toBe(did.id);

    // Suspended, it writes nothing more, the platform admin included; what it signed before still verifies.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const suspended = await platform.rest('issuer', `/operators/${OWNER}/suspension`, { method: 'POST', as: 'admin' });
    expect([suspended.status, suspended.body.status]).toEqual([200, 'suspended']);
    const refused = await platform.rest('issuer', `/passports/${id}/events`, { body: { type: 'ObjectEvent', payload: PAYLOADS.ObjectEvent!() }, as: 'admin' });
    expect([refused.status, refused.body.code]).toEqual([403, 'OPERATOR_SUSPENDED']);
    expect((await platform.rest('issuer', `/passports/${id}/events`, { body: { type: 'ObjectEvent', payload: PAYLOADS.ObjectEvent!() }, headers: as(writer.secret) })).status).toBe(401);
    expect((await platform.rest('issuer', `/passports/${id}`)).body.log_size).toBe(1);
    const keyPathNow = (await platform.rest('trust', `/keys/${pack.body.kid}/path`)).body;
    const later = await verifier.verifyMaterial(
      { kind: 'pack', text: pack.body.text, keyPath: keyPathNow },
      verifier.pinsFrom({ anchorBundle: (await platform.rest('trust', '/anchor-bundle')).body, keySets: [trustKeyring] }),
    );
    expect(later.verdict, JSON.stringify(later.findings)).toBe('valid');
    expect(later.findings.find((finding) => finding.check === 'pack.revocations')?.message).toContain('privilegeWithdrawn');
    // Its credential, signed at each read, is signed no more (a signature after the revocation would verify for no one); the passport reads as before.
    const unsigned = await platform.rest('issuer', `/passports/${id}/credential`, { headers: { accept: 'application/vc+jwt' } });
    expect([unsigned.status, unsigned.body.code]).toEqual([403, 'OPERATOR_SUSPENDED']);
    expect(unsigned.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await platform.rest('issuer', `/passports/${id}`)).status).toBe(200);
  });
});
