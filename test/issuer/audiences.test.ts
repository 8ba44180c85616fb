/**
 * Audiences, still verifiable (issue 44 item 4), as a stranger meets them: the shipped example
 * profile (docs/examples/battery-passport-profile.json) restricts the battery passport's state of
 * health to persons with a legitimate interest and its declaration of conformity to authorities.
 * Anonymous callers and another operator's reader get the public view everywhere a passport is
 * shown (REST, GraphQL, a subscription at the gateway and at the issuer subgraph's port, the
 * credential, the resolver's linkset, the pack, an archive snapshot, the
 * verification page) and never a restricted value, also not in the servers' log lines; a
 * legitimate-interest token, an authority token, the owner and the platform admin get more; every
 * view verifies offline against what the pack and the credential sign (node:crypto digests, jose).
 * The servers' lines here are those of the test run's level (warn); test/ops/logs-untraced.test.ts
 * reads `npm start`'s at info for the same values.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-sse';
import * as jose from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { batteryPassportSchema } from '../../subgraphs/registry/domain/seed/index.js';
import { collector } from '../gateway/live-support.js';
import { run } from '../../verifier/cli.js';
import { pinsFrom } from '../../verifier/pins.js';
import { verifyManifest, verifyPackText } from '../../verifier/portable.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { PAYLOADS } from './support.js';

const PROFILE = JSON.parse(readFileSync(new URL('../../docs/examples/battery-passport-profile.json', import.meta.url), 'utf8')) as Record<string, any>;
const MODEL = `audiences-battery-${process.pid}`;
const OTHER = `audiences-other-${process.pid}`;
const GTIN = '09520123456788';
const SERIAL = `AUD-${process.pid}`;

/** Restricted values no public answer may hold: each a string found nowhere else. */
const SOH_MARK = 93.1713;
const DOC_URL = `https://voltara.example/doc/restricted-${process.pid}.pdf`;
const example = (batteryPassportSchema.examples as Record<string, any>[])[0]!;
const CONFIG_VECTOR = {
  ...example,
  state_of_health: { ...example.state_of_health, soh_pct: SOH_MARK },
  declaration_of_conformity_url: DOC_URL,
};
const RESTRICTED_STRINGS = [String(SOH_MARK), DOC_URL, 'restricted-'];

/** The restricted members each caller is shown, whatever the view. */
const DISCLOSED_TO: Record<string, string[]> = {
  anonymous: [],
  otherReader: [],
  legitimateInterest: ['state_of_health'],
  authority: ['declaration_of_conformity_url', 'state_of_health'],
  ownerReader: ['declaration_of_conformity_url', 'state_of_health'],
};

let platform: SharedTestStack;
let passportId: string;
let disclosures: { audience: string; name: string; value: unknown; disclosure: string }[];
const tokens: Record<string, string | undefined> = { anonymous: undefined };

const bearer = (token: string | undefined): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

async function issueToken(operator: string | null, role: string): Promise<string> {
  const created = await platform.rest('issuer', '/admin/tokens', { as: 'admin', body: { ...(operator ? { operator } : {}), role, label: `audiences ${role}` } });
  expect(created.status, created.text).toBe(201);
  return created.body.secret as string;
}

async function graphql(query: string, variables: Record<string, unknown>, token: string | undefined) {
  const response = await fetch(platform.stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ query, variables }) });
  return { text: await response.text(), status: response.status };
}

/** Lines the in-process servers write while `run` runs. */
async function loggedWhile(run: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: any[]) => {
    lines.push(String(chunk));
    return write(chunk, ...rest);
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return lines.join('');
}

const independentDigest = (disclosure: string) => createHash('sha256').update(disclosure, 'ascii').digest('base64url');

beforeAll(async () => {
  platform = await sharedTestStack();
  const model = await platform.rest('registry', '/', { body: { kind: 'model', id: MODEL, body: { title: 'Battery passport', schema: batteryPassportSchema } }, as: 'writer' });
  expect(model.status, model.text).toBe(201);
  const profile = await platform.rest('issuer', '/admin/profiles', { body: { ...PROFILE, profile_id: `${PROFILE.profile_id}-${process.pid}` }, as: 'admin' });
  expect(profile.status, profile.text).toBe(201);
  expect(profile.body.audiences).toEqual(PROFILE.audiences);
  expect((await platform.rest('issuer', '/admin/applicability', { body: { model_id: MODEL, profile_id: profile.body.profile_id }, as: 'admin' })).status).toBe(201);
  expect((await platform.rest('issuer', '/operators', { body: { id: OTHER, name: 'Another operator' }, as: 'admin' })).status).toBe(201);
  tokens.otherReader = await issueToken(OTHER, 'reader');
  tokens.legitimateInterest = await issueToken(OTHER, 'legitimate-interest');
  tokens.authority = await issueToken(OTHER, 'authority');
  tokens.ownerReader = await issueToken('default', 'reader');

  const created = await platform.rest('issuer', '/passports', {
    body: { identity: `https://id.gs1.org/01/${GTIN}/21/${SERIAL}`, type_ref: { id: MODEL, version: 1 }, config_vector: CONFIG_VECTOR },
    as: 'writer',
  });
  expect(created.status, created.text).toBe(201);
  passportId = created.body.passport_id;
  disclosures = created.body.disclosures;
  expect((await platform.rest('issuer', `/passports/${passportId}/events`, { body: { type: 'activated', payload: PAYLOADS.activated!() }, as: 'writer' })).status).toBe(201);
});

describe('a profile with audiences', () => {
  it('refuses an audience that is none of public, legitimate-interest, authority with 400, and stores nothing', async () => {
    const id = `bad-audience-${process.pid}`;
    const refused = await platform.rest('issuer', '/admin/profiles', { body: { profile_id: id, capability_classes: ['trace'], audiences: { state_of_health: 'friends' } }, as: 'admin' });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body.code).toBe('INVALID_AUDIENCE');
    const typeRestricted = await platform.rest('issuer', '/admin/profiles', { body: { profile_id: id, capability_classes: ['trace'], audiences: { type: 'authority' } }, as: 'admin' });
    expect([typeRestricted.status, typeRestricted.body.code]).toEqual([400, 'INVALID_AUDIENCE']);
    const rule = await platform.rest('issuer', '/admin/applicability', { body: { model_id: MODEL, model_version: 2, profile_id: id }, as: 'admin' });
    expect(rule.body.code).toBe('UNKNOWN_PROFILE');
  });
});

describe('the views of a passport with restricted attributes', () => {
  it('commit to each restricted value by a salted digest: the creator gets both disclosures', () => {
    expect(disclosures.map(({ audience, name }) => [name, audience]).sort()).toEqual([
      ['declaration_of_conformity_url', 'authority'],
      ['state_of_health', 'legitimate-interest'],
    ]);
    for (const { disclosure, name, value } of disclosures) {
      expect(JSON.parse(Buffer.from(disclosure, 'base64url').toString('utf8')).slice(1)).toEqual([name, value]);
    }
  });

  it('are, over REST and GraphQL, the public view for anonymous callers and another operator’s reader, more for the right roles', async () => {
    const publicManifest = (await platform.rest('issuer', `/passports/${passportId}`)).body.manifest;
    expect(Object.keys(publicManifest)).not.toContain('state_of_health');
    expect(Object.keys(publicManifest)).not.toContain('declaration_of_conformity_url');
    expect(publicManifest._sd.sort()).toEqual(disclosures.map((disclosure) => independentDigest(disclosure.disclosure)).sort());
    for (const [who, names] of Object.entries(DISCLOSED_TO)) {
      const rest = await platform.rest('issuer', `/passports/${passportId}`, { headers: bearer(tokens[who]) });
      expect(rest.status, rest.text).toBe(200);
      expect(rest.headers.get('vary'), who).toMatch(/authorization/i);
      expect(rest.body.manifest, who).toEqual(publicManifest);
      expect((rest.body.disclosures ?? []).map((disclosure: { name: string }) => disclosure.name).sort(), who).toEqual(names);
      const graph = JSON.parse((await graphql('query ($id: ID!) { passport(id: $id) { manifest disclosures { audience name value disclosure } } }', { id: passportId }, tokens[who])).text);
      expect(graph.data.passport.manifest, who).toEqual(publicManifest);
      expect(graph.data.passport.disclosures.map((disclosure: { name: string }) => disclosure.name).sort(), who).toEqual(names);
    }
    const admin = await platform.rest('issuer', `/passports/${passportId}`, { as: 'admin' });
    expect(admin.body.disclosures.map((disclosure: { name: string }) => disclosure.name).sort()).toEqual(['declaration_of_conformity_url', 'state_of_health']);
  });

  it('are the same over a subscription, replay included: at the gateway and at the issuer subgraph’s own port (GraphQL over SSE)', async () => {
    const query = 'subscription ($id: ID!) { passportEvents(passportId: $id) { seq passport { disclosures { name value } } } }';
    const faces = { gateway: platform.stack.gateway.graphqlUrl, 'issuer subgraph': platform.stack.subgraphUrls.issuer };
    for (const [face, url] of Object.entries(faces)) {
      for (const [who, names] of Object.entries(DISCLOSED_TO)) {
        const client = createClient({ url, singleConnection: false, retryAttempts: 0, headers: bearer(tokens[who]) });
        const replayed = collector<{ seq: number; passport: { disclosures: { name: string; value: unknown }[] | null } }>('passportEvents');
        const dispose = client.subscribe({ query, variables: { id: passportId } }, replayed.sink);
        try {
          await replayed.until(1);
        } finally {
          dispose();
          client.dispose();
        }
        expect(replayed.errors, `${face} ${who}`).toEqual([]);
        const shown = replayed.items[0]!.passport.disclosures ?? [];
        expect(shown.map(({ name }) => name).sort(), `${face} ${who}`).toEqual(names);
        if (!names.includes('declaration_of_conformity_url')) expect(JSON.stringify(replayed.items), `${face} ${who}`).not.toContain(DOC_URL);
      }
    }
  });

  it('each verify offline: the manifest against the pack’s manifest_digest, each disclosure against its _sd', async () => {
    const minted = await platform.rest('issuer', `/passports/${passportId}/pack`, { method: 'POST', as: 'writer' });
    expect(minted.status, minted.text).toBe(201);
    for (const text of RESTRICTED_STRINGS) expect(minted.text).not.toContain(text);
    const keyring = (await platform.rest('issuer', '/keyring')).body;
    const { report, claims } = verifyPackText(minted.body.text, pinsFrom({ keySets: [keyring] }));
    expect(report.verdict, JSON.stringify(report.findings)).toBe('valid');
    // An independent digest of the manifest as the anonymous caller got it.
    const { manifest } = (await platform.rest('issuer', `/passports/${passportId}`)).body;
    expect(claims!.manifest_digest).toBe(createHash('sha256').update(canonicalJson(manifest)).digest('hex'));

    const publicView = verifyManifest(claims!, manifest);
    expect(publicView.report.verdict, JSON.stringify(publicView.report.findings)).toBe('valid');
    expect(publicView.disclosed).not.toHaveProperty('state_of_health');
    for (const who of ['legitimateInterest', 'authority']) {
      const view = (await platform.rest('issuer', `/passports/${passportId}`, { headers: bearer(tokens[who]) })).body;
      const checked = verifyManifest(
        claims!,
        view.manifest,
        view.disclosures.map((disclosure: { disclosure: string }) => disclosure.disclosure),
      );
      expect(checked.report.verdict, JSON.stringify(checked.report.findings)).toBe('valid');
      expect(checked.disclosed!.state_of_health).toEqual(CONFIG_VECTOR.state_of_health);
    }
    const owner = (await platform.rest('issuer', `/passports/${passportId}`, { as: 'writer' })).body;
    const full = verifyManifest(
      claims!,
      owner.manifest,
      owner.disclosures.map((disclosure: { disclosure: string }) => disclosure.disclosure),
    );
    expect(full.disclosed).toEqual(CONFIG_VECTOR);
    // A value changed in a disclosure no longer verifies.
    const forged = Buffer.from(JSON.stringify([JSON.parse(Buffer.from(owner.disclosures[0].disclosure, 'base64url').toString())[0], owner.disclosures[0].name, 'changed'])).toString('base64url');
    expect(verifyManifest(claims!, owner.manifest, [forged]).report.verdict).toBe('invalid');

    // The command line, as a stranger runs it on what the public and a legitimate-interest reader saved.
    const folder = mkdtempSync(join(tmpdir(), 'audiences-'));
    try {
      const keyringFile = join(folder, 'keyring.json');
      writeFileSync(keyringFile, JSON.stringify(keyring));
      const saved = async (who: string) => {
        const file = join(folder, `${who}.json`);
        writeFileSync(file, (await platform.rest('issuer', `/passports/${passportId}`, { headers: bearer(tokens[who]) })).text);
        return run(['manifest', file, '--pack', minted.body.text, '--pin', keyringFile, '--json']);
      };
      const anonymous = await saved('anonymous');
      expect(anonymous.code, anonymous.stdout).toBe(0);
      expect(JSON.parse(anonymous.stdout).findings.map((finding: { check: string }) => finding.check)).toEqual(expect.arrayContaining(['pack.signature', 'manifest.digest', 'manifest.restricted']));
      const legitimate = await saved('legitimateInterest');
      expect(legitimate.code, legitimate.stdout).toBe(0);
      expect(JSON.parse(legitimate.stdout).findings.find((finding: { check: string }) => finding.check === 'manifest.disclosures').message).toContain('state_of_health');
      const tampered = join(folder, 'tampered.json');
      writeFileSync(tampered, JSON.stringify({ ...owner, manifest: { ...owner.manifest, chemistry: { short_name: 'LFP' } } }));
      expect((await run(['manifest', tampered, '--pack', minted.body.text, '--pin', keyringFile])).code).toBe(1);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('issue the credential as a vc+sd-jwt with the caller’s disclosures; every view verifies with jose and node:crypto', async () => {
    const did = (await platform.rest('issuer', '/did.json')).body;
    const views: Record<string, string[]> = { anonymous: [], otherReader: [], legitimateInterest: ['state_of_health'], authority: ['declaration_of_conformity_url', 'state_of_health'] };
    for (const [who, names] of Object.entries(views)) {
      const answer = await platform.rest('issuer', `/passports/${passportId}/credential`, { headers: bearer(tokens[who]) });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/vc+sd-jwt');
      const [jws, ...rest] = answer.text.split('~');
      expect(rest.at(-1)).toBe('');
      const presented = rest.slice(0, -1);
      const header = jose.decodeProtectedHeader(jws!);
      expect(header).toMatchObject({ typ: 'vc+sd-jwt', cty: 'vc' });
      const method = did.verificationMethod.find((candidate: { id: string }) => candidate.id === header.kid);
      const { payload } = await jose.compactVerify(jws!, await jose.importJWK(method.publicKeyJwk, header.alg));
      const credential = JSON.parse(new TextDecoder().decode(payload));
      expect(credential._sd_alg).toBe('sha-256');
      const characteristics = credential.credentialSubject.product.characteristics;
      expect(characteristics).not.toHaveProperty('state_of_health');
      const committed = new Set(characteristics._sd);
      const disclosed = presented.map((text) => {
        expect(committed.has(independentDigest(text)), who).toBe(true);
        return JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))[1] as string;
      });
      expect(disclosed.sort(), who).toEqual(names);
      if (names.length === 0) for (const text of RESTRICTED_STRINGS) expect(answer.text, who).not.toContain(text);
    }
    // The resolver's linkset names the credential's media type.
    const linkset = (await (await fetch(`${platform.base('issuer')}/01/${GTIN}/21/${SERIAL}?linkType=all`, { headers: { accept: 'application/linkset+json' } })).json()) as {
      linkset: Record<string, any>[];
    };
    const links = linkset.linkset[0]!['https://ref.gs1.org/voc/dpp'] as { href: string; type: string }[];
    expect(links.find((link) => link.href.endsWith('/credential'))!.type).toBe('application/vc+sd-jwt');
  });

  it('never hold a restricted value in a public answer, nor in the servers’ log lines', async () => {
    const publicAnswers: [string, string][] = [];
    const logged = await loggedWhile(async () => {
      for (const who of ['anonymous', 'otherReader']) {
        const headers = bearer(tokens[who]);
        publicAnswers.push([`${who} REST`, (await platform.rest('issuer', `/passports/${passportId}?include_events=true`, { headers })).text]);
        publicAnswers.push([
          `${who} GraphQL`,
          (await graphql('query ($id: ID!) { passport(id: $id) { core manifest disclosures { value } latestPack credential { jwt credential } events } }', { id: passportId }, tokens[who])).text,
        ]);
        for (const accept of ['application/vc+sd-jwt', 'application/vc', 'application/json']) {
          publicAnswers.push([`${who} credential ${accept}`, (await platform.rest('issuer', `/passports/${passportId}/credential`, { headers: { ...headers, accept } })).text]);
        }
        for (const accept of ['application/linkset+json', 'application/json', 'text/html']) {
          const resolved = await fetch(`${platform.base('issuer')}/01/${GTIN}/21/${SERIAL}?linkType=all`, { headers: { ...headers, accept }, redirect: 'manual' });
          publicAnswers.push([`${who} resolver ${accept}`, await resolved.text()]);
        }
        const verifyPage = new URL('/verify/', platform.base('issuer')).href;
        publicAnswers.push([`${who} verify page`, await (await fetch(verifyPage, { headers })).text()]);
        publicAnswers.push([`${who} verify anchors`, await (await fetch(new URL('/verify/anchors.json', verifyPage), { headers })).text()]);
      }
      const snapshot = await platform.rest('archive', '/snapshots', { body: { passport_id: passportId }, as: 'writer' });
      expect(snapshot.status, snapshot.text).toBe(201);
      const bag = await fetch(snapshot.body.href);
      publicAnswers.push(['snapshot', Buffer.from(await bag.arrayBuffer()).toString('latin1')]);
      publicAnswers.push(['snapshot list', (await platform.rest('archive', `/snapshots?passport_id=${passportId}`)).text]);
    });
    const secrets = [...RESTRICTED_STRINGS, ...disclosures.map((disclosure) => disclosure.disclosure)];
    for (const [where, text] of publicAnswers) {
      expect(text.length, where).toBeGreaterThan(0);
      for (const secret of secrets) expect(text.includes(secret), `${where} holds ${secret}`).toBe(false);
    }
    // The snapshot is of the public view: its manifest is the committed one.
    expect(publicAnswers.find(([where]) => where === 'snapshot')![1]).toContain('"_sd"');
    for (const secret of secrets) expect(logged.includes(secret), `a log line holds ${secret}`).toBe(false);
  });
});

describe('a passport whose profile restricts nothing', () => {
  it('keeps its manifest, pack claims and vc+jwt credential as before', async () => {
    const plainModel = `audiences-plain-${process.pid}`;
    const model = await platform.rest('registry', '/', { body: { kind: 'model', id: plainModel, body: { title: 'Battery passport', schema: batteryPassportSchema } }, as: 'writer' });
    expect(model.status).toBe(201);
    const created = await platform.rest('issuer', '/passports', {
      body: { identity: `https://id.gs1.org/01/${GTIN}/21/${SERIAL}-plain`, type_ref: { id: plainModel, version: 1 }, config_vector: CONFIG_VECTOR, capability_class: 'trace' },
      as: 'writer',
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.manifest).toEqual(CONFIG_VECTOR);
    expect(created.body).not.toHaveProperty('disclosures');
    const credential = await platform.rest('issuer', `/passports/${created.body.passport_id}/credential`);
    expect(credential.headers.get('content-type')).toBe('application/vc+jwt');
    expect(credential.text).not.toContain('~');
    const minted = await platform.rest('issuer', `/passports/${created.body.passport_id}/pack`, { method: 'POST', as: 'writer' });
    expect(minted.body.claims.manifest_digest).toBe(createHash('sha256').update(canonicalJson(CONFIG_VECTOR)).digest('hex'));
  });
});

describe('passports created in bulk under the profile', () => {
  it('are committed as one created alone is: the public view holds digests only, the owner gets the disclosures', async () => {
    const items = [1, 2].map((n) => ({ identity: `https://id.gs1.org/01/${GTIN}/21/${SERIAL}-bulk-${n}`, type_ref: { id: MODEL, version: 1 }, config_vector: CONFIG_VECTOR }));
    const created = await platform.rest('issuer', '/passports/batch', { body: { passports: items }, as: 'writer' });
    expect(created.status, created.text).toBe(201);
    for (const passport of created.body.passports) {
      const anonymous = await platform.rest('issuer', `/passports/${passport.passport_id}`);
      for (const value of RESTRICTED_STRINGS) expect(anonymous.text).not.toContain(value);
      expect(anonymous.body.manifest._sd).toHaveLength(2);
      const owner = await platform.rest('issuer', `/passports/${passport.passport_id}`, { headers: bearer(tokens.ownerReader) });
      const shown = owner.body.disclosures as typeof disclosures;
      expect(shown.map(({ name, value }) => [name, value]).sort()).toEqual([
        ['declaration_of_conformity_url', DOC_URL],
        ['state_of_health', CONFIG_VECTOR.state_of_health],
      ]);
      for (const { disclosure } of shown) expect(anonymous.body.manifest._sd).toContain(independentDigest(disclosure));
    }
  });
});

afterEach(() => vi.restoreAllMocks());

/** RFC 8785 for the JSON these documents hold (strings, finite numbers, objects, arrays): sorted keys, no spaces. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
