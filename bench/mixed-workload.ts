/**
 * The mixed workload of the platform benchmark (bench/platform.ts), shared with the benchmark of what
 * the operator plumbing costs (bench/ops-cost.ts): the data it reads, seeded through the REST facade,
 * and its request bodies, many distinct cross-service GraphQL queries drawn with a fixed seed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { jwkThumbprint } from '../lib/crypto/index.js';
import type { ServiceName } from '../lib/config/services.js';
import { nationalPassportId } from '../test/support/national/build.js';
import { compactDelegation, ed25519KeyPair, seededDraws } from './support.js';

/** The registry model the seeded passports are of. */
export const MIX_MODEL = 'bench-platform-battery';

/**
 * The mixed workload: five kinds of request in turn, each with variables of its own (passports,
 * models, instants and page sizes drawn for every request), so that no two requests in flight are
 * alike and no sharing of identical queries helps either gateway. Singles and lists; key standing
 * both as a passport's signing-key standing (issuer → trust) and asked of trust directly.
 */
export const MIX_QUERIES = {
  passport: `query MixPassport($id: ID!, $kid: String!, $at: DateTimeISO!) {
  passport(id: $id) {
    id status logSize
    typeRecord { id version status }
    snapshots { id sha512 size }
    signingKeys { role kid standingAtFirstUse { standing rootId path { id } } standingAtLastUse { standing } }
  }
  trustKeyStanding(kid: $kid, at: $at)
}`,
  passports: `query MixPassports($ids: [ID!]!) {
  passports(ids: $ids) {
    id status
    typeRecord { id version kind }
    snapshots { id size }
    signingKeys { kid standingAtLastUse { standing revoked } }
  }
}`,
  standings: `query MixStandings($questions: [TrustKeyStandingQuestion!]!) {
  trustKeyStandings(questions: $questions) { kid at standing revoked rootId path { id iss sub } }
}`,
  snapshots: `query MixSnapshots($first: Int, $at: DateTimeISO) {
  snapshots(first: $first, at: $at) { nodes { id passportId createdAt size passport { id status } } pageInfo { hasNextPage endCursor } }
}`,
  modelAndPassport: `query MixModel($model: ID!, $id: ID!) {
  registryRecord(id: $model, kind: "model") { id version status body }
  passport(id: $id) { id status capabilityClass logHead }
}`,
} as const;

/** The query text of each kind, for the report. */
export const mixKinds = Object.keys(MIX_QUERIES) as (keyof typeof MIX_QUERIES)[];

/**
 * Passports the mix draws from, by index: an array of ids, or anything that yields the id at an
 * index without holding them all (a million passports built in bulk, their ids derived or read in
 * pages). Draws are uniform over `length`, so a large set leaves no cache a working set it can hold.
 */
export interface PassportIds {
  readonly length: number;
  at(index: number): string | undefined;
}

/** What the seeding made, from which the mix draws. */
export interface SeededData {
  passportIds: PassportIds;
  models: string[];
  /** The issuer's current key ids and the trust root's. */
  kids: string[];
  dayAgo: Date;
  seededFrom: Date;
  seededUntil: Date;
}

/** How the seeding reaches the platform: an admin POST through the REST facade, and the issuer's REST base (for its keyring). */
export interface SeedingApi {
  rest(service: ServiceName, path: string, body?: unknown): Promise<any>;
  issuerBase: string;
}

/**
 * Data: a model, passports of it with an event (every third with a pack) and a snapshot each, more
 * models, and a trust root delegating to the issuer's current signing keys (so the passports' keys
 * stand `valid`, with a path).
 */
export async function seedPlatformData(api: SeedingApi, options: { passports: number; models: number }): Promise<SeededData & { passportIds: string[] }> {
  const seededFrom = new Date();
  await api.rest('registry', '/', {
    kind: 'model',
    id: MIX_MODEL,
    body: { title: MIX_MODEL, schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'] } },
  });
  const passportIds: string[] = [];
  for (let i = 0; i < options.passports; i += 1) {
    const identity = `https://id.gs1.org/01/09520123456788/21/PLATFORM-${i}`;
    const passport = await api.rest('issuer', '/passports', { identity, type_ref: { id: MIX_MODEL, version: 1 }, config_vector: { chemistry: 'LFP' } });
    const id = passport.passport_id as string;
    await api.rest('issuer', `/passports/${id}/events`, {
      type: 'ObjectEvent',
      payload: {
        eventTime: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
        eventTimeZoneOffset: '+01:00',
        action: 'OBSERVE',
        bizStep: 'inspecting',
        epcList: [identity],
        readPoint: { id: 'urn:epc:id:sgln:9520123.00001.0' },
      },
    });
    if (i % 3 === 0) await api.rest('issuer', `/passports/${id}/pack`);
    await api.rest('archive', '/snapshots', { passport_id: id });
    passportIds.push(id);
  }
  const models = [MIX_MODEL];
  for (let i = 1; i < options.models; i += 1) {
    const id = `${MIX_MODEL}-${i}`;
    await api.rest('registry', '/', { kind: 'model', id, body: { title: id, schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' } } });
    models.push(id);
  }
  const { issuerKids, rootKid, dayAgo } = await vouchForIssuerKeys(api);
  const seededUntil = new Date();

  const kids = [...issuerKids, rootKid];
  return { passportIds, models, kids, dayAgo, seededFrom, seededUntil };
}

/** The file bench/national-scale.ts leaves in NATIONAL_KEEP's folder, saying what it built there. */
export const NATIONAL_MANIFEST = 'national.json';

export interface KeptNationalData {
  passports: number;
  /** The registry model every built passport is of. */
  model: string;
  builtAt: string;
  commit: string;
  /** The platform's data folder (PASSPORT_DATA_DIR): its embedded cluster and key-encryption key. */
  platformDataDir: string;
}

export function readKeptNationalData(folder: string): KeptNationalData {
  try {
    return JSON.parse(readFileSync(join(folder, NATIONAL_MANIFEST), 'utf8')) as KeptNationalData;
  } catch (error) {
    throw new Error(`${folder} holds no national build (${NATIONAL_MANIFEST}): build one with NATIONAL_KEEP=${folder} npm run bench:national. ${(error as Error).message}`);
  }
}

/**
 * The mix's data from a kept national build, read from its database: every passport by its derived
 * id (none held in memory), the build's registry model, the keys of the root and issuer nodes that
 * bench:national vouched with (vouchForIssuerKeys), and the span of its archive snapshots.
 */
export async function nationalMixData(kept: KeptNationalData, databaseUrl: string): Promise<SeededData> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const keys = await db.query<{ kid: string; vouched: Date }>(
      `SELECT key->>'kid' AS kid, node.created_at AS vouched FROM trust.trust_node node, jsonb_array_elements(node.document->'keys') key WHERE node.id IN ('bench-root', 'bench-issuer')`,
    );
    const span = await db.query<{ first: Date; last: Date }>('SELECT min(created_at) AS first, max(created_at) AS last FROM archive.snapshot');
    const { first, last } = span.rows[0]!;
    if (keys.rows.length < 2 || !first || !last) throw new Error('the national build has no vouched keys or no snapshots: was it built to the end?');
    // The root's key and its delegation date from a day before the vouching; a second later, every instant drawn finds them valid.
    const dayAgo = new Date(keys.rows[0]!.vouched.getTime() - 86_400_000 + 1000);
    const passportIds: PassportIds = { length: kept.passports, at: (index) => (index < kept.passports ? nationalPassportId(index) : undefined) };
    return { passportIds, models: [kept.model], kids: keys.rows.map((row) => row.kid), dayAgo, seededFrom: first, seededUntil: last };
  } finally {
    await db.end();
  }
}

/** Trust vouches for the issuer's current keys: a root, the issuer as a node, the root's delegation (a day ago, for a year). */
export async function vouchForIssuerKeys(api: SeedingApi): Promise<{ issuerKids: string[]; rootKid: string; dayAgo: Date }> {
  const issuerKeys = ((await (await fetch(`${api.issuerBase}/keyring`)).json()) as { keys: { kid: string; exp?: number }[] }).keys.filter((key) => !key.exp);
  const { publicKey: rootPublic, privateKey: rootPrivate } = ed25519KeyPair();
  const rootJwk = rootPublic.export({ format: 'jwk' });
  const rootKid = jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: rootJwk.x! });
  const dayAgo = new Date(Date.now() - 86_400_000);
  await api.rest('trust', '/nodes', { id: 'bench-root', kind: 'root', keys: [{ kty: 'OKP', crv: 'Ed25519', x: rootJwk.x, kid: rootKid, iat: Math.floor(dayAgo.getTime() / 1000) }] });
  await api.rest('trust', '/nodes', {
    id: 'bench-issuer',
    kind: 'issuer',
    keys: issuerKeys.map(({ kty, crv, x, y, kid, alg, iat }: Record<string, unknown>) => ({ kty, crv, x, ...(y ? { y } : {}), kid, alg, iat })),
  });
  const delegation = { iss: 'bench-root', sub: 'bench-issuer', scope: {}, iat: dayAgo.toISOString(), exp: new Date(Date.now() + 365 * 86_400_000).toISOString() };
  await api.rest('trust', '/edges', { credential: compactDelegation(delegation, { kid: rootKid, privateKey: rootPrivate }) });
  return { issuerKids: issuerKeys.map((key) => key.kid), rootKid, dayAgo };
}

/** `count` bodies of the mix, the kinds in turn, every one with variables drawn for it (seed 17: every run asks the same mix of its data). */
export function mixedWorkload(data: SeededData, count: number): { kind: (typeof mixKinds)[number]; body: string }[] {
  const { passportIds, models, kids, dayAgo, seededFrom, seededUntil } = data;
  const draw = seededDraws(17);
  const pickPassports = (count: number) => {
    const chosen = new Set<string>();
    while (chosen.size < count) chosen.add(passportIds.at(draw.index(passportIds.length))!);
    return [...chosen];
  };
  const instant = (from: Date, to: Date) => new Date(draw.between(from.getTime(), to.getTime())).toISOString();
  const mixVariables = (kind: (typeof mixKinds)[number]): Record<string, unknown> => {
    switch (kind) {
      case 'passport':
        return { id: pickPassports(1)[0], kid: kids[draw.index(kids.length)], at: instant(dayAgo, new Date(Date.now() + 86_400_000)) };
      case 'passports':
        return { ids: pickPassports(3 + draw.index(6)) };
      case 'standings':
        return { questions: Array.from({ length: 2 + draw.index(4) }, () => ({ kid: kids[draw.index(kids.length)], at: instant(dayAgo, new Date(Date.now() + 86_400_000)) })) };
      case 'snapshots':
        return { first: 5 + draw.index(16), at: instant(seededFrom, seededUntil) };
      case 'modelAndPassport':
        return { model: models[draw.index(models.length)], id: pickPassports(1)[0] };
    }
  };
  const mix = Array.from({ length: count }, (_, i) => {
    const kind = mixKinds[i % mixKinds.length]!;
    return { kind, body: JSON.stringify({ query: MIX_QUERIES[kind], variables: mixVariables(kind) }) };
  });
  const distinctBodies = new Set(mix.map((request) => request.body)).size;
  // Repeats are few and far apart in the turn (the kinds take turns), so rarely in flight together.
  if (distinctBodies < count * 0.85) throw new Error(`the mix repeats itself: ${distinctBodies} distinct bodies of ${count}`);
  return mix;
}
