/**
 * Realistic data for the bad-input and authorization parts of the soak run and the authorization
 * matrix (test/auth/authorization-matrix.test.ts), made through the REST
 * facade: trust nodes, an edge, a trust list, a witness set and master-list entry, a revocation,
 * the sample register plus a model and a generic record, a profile, passports with events and a
 * pack, and a snapshot. Also, for every write path of the route tables, an otherwise valid request.
 */
import { ed25519PublicJwk, generateSecretKey, jwkThumbprint, publicKeyOf, rawKeySigner, signJson, type PublicJwk, type Signer } from '../../lib/crypto/index.js';
import { randomBytes } from 'node:crypto';
import type { ServiceName } from '../../lib/config/services.js';
import { ROUTE_TABLES } from '../../rest-facade/routes/index.js';
import type { Route } from '../../rest-facade/route-table.js';
import type { RunningStack } from '../../bin/stack.js';
import { problemOf } from '../../lib/problem.js';
import { requestJson, type Answer } from './rest-client.js';
import { excerpt, send, type RawAnswer } from './soak-http.js';

/** A running platform and its tokens, one of each configured role: what the fixtures are written with (the soak run's context is one). */
export interface WriteContext {
  stack: RunningStack;
  tokens: { admin: string; writer: string };
  /** Seed of the deterministic generators: part of the fixtures' names. */
  seed: number;
}

/** A JSON request to a service through the facade. */
export function rest(context: WriteContext, service: ServiceName, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<Answer> {
  return requestJson(`${context.stack.facade.baseUrls[service]}${path}`, method, options);
}

export interface Key {
  jwk: PublicJwk & { kid: string };
  signer: Signer;
}

export function newKey(): Key {
  const secret = generateSecretKey('Ed25519');
  const jwk = ed25519PublicJwk(publicKeyOf('Ed25519', secret));
  const kid = jwkThumbprint(jwk);
  return { jwk: { ...jwk, kid }, signer: rawKeySigner('Ed25519', kid, secret) };
}

/** A GS1 serial (AI 21: at most 20 characters) not used before on this database. */
const SERIAL_PREFIX = `S${randomBytes(3).toString('hex')}`;
let serials = 0;
const newSerial = () => `${SERIAL_PREFIX}-${(serials += 1)}`;

const seconds = (offset = 0) => Math.floor(Date.now() / 1000) + offset;
const DAY = 86_400;
const iso = (offsetSeconds: number) => new Date((seconds() + offsetSeconds) * 1000).toISOString();

export const MODEL_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { chemistry: { enum: ['LFP', 'NMC', 'LTO'] }, capacity_kwh: { type: 'number', exclusiveMinimum: 0 } },
  required: ['chemistry'],
  additionalProperties: false,
};
export const CONFIG_VECTOR = { chemistry: 'LFP', capacity_kwh: 75 };

const OBJECT_EVENT = (n: number) => ({
  eventTime: new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString(),
  eventTimeZoneOffset: '+01:00',
  action: 'OBSERVE',
  bizStep: 'inspecting',
  epcList: ['https://id.gs1.org/01/09520123456788/21/SN-1'],
  readPoint: { id: 'urn:epc:id:sgln:9520123.00001.0' },
});

/** Jurisdictions for new trust lists, one per valid creation. */
const JURISDICTIONS = 'FR IT ES NL BE AT PL SE FI DK PT IE CZ HU GR RO BG HR SI SK LT LV EE LU MT CY NO IS CH GB US CA JP KR AU NZ BR MX IN ZA'.split(' ');

/** What the seeding made: real ids for path parameters, and the keys that make further valid writes. */
export interface Fixtures {
  run: string;
  rootKey: Key;
  rootId: string;
  issuerId: string;
  witness: Key;
  jurisdiction: string;
  modelId: string;
  genericId: string;
  profileId: string;
  passports: string[];
  snapshotId: string;
  /** First record id of each registry collection (`''` for generic records at the root). */
  registryIds: Record<string, string>;
}

async function must(answer: Promise<Answer>, what: string): Promise<Answer> {
  const result = await answer;
  if (result.status >= 300) throw new Error(`seeding: ${what} answered ${result.status}: ${result.text.slice(0, 300)}`);
  return result;
}

export async function seedFixtures(context: WriteContext): Promise<Fixtures> {
  const { writer, admin } = context.tokens;
  const run = `${context.seed.toString(36)}-${Date.now().toString(36)}`;
  // The trust graph is the platform admin's (docs/OPERATORS.md); the rest is written by the writer.
  const w = (service: ServiceName, path: string, body?: unknown, token = service === 'trust' ? admin : writer) =>
    must(rest(context, service, 'POST', path, { token, ...(body === undefined ? {} : { body }) }), `POST /${service}${path}`);

  // Trust: a root delegating to an issuer node, a trust list with an entry, witnesses, a master-list entry, a revocation.
  const rootKey = newKey();
  const issuerKey = newKey();
  const witness = newKey();
  const rootId = `soak-root-${run}`;
  const issuerId = `soak-issuer-${run}`;
  await w('trust', '/nodes', { id: rootId, kind: 'root', jurisdiction: 'DE', keys: [{ ...rootKey.jwk, iat: seconds(-DAY) }] });
  await w('trust', '/nodes', { id: issuerId, kind: 'issuer', jurisdiction: 'DE', keys: [{ ...issuerKey.jwk, iat: seconds(-DAY) }] });
  await w('trust', '/edges', signJson({ iss: rootId, sub: issuerId, scope: {}, iat: iso(-DAY / 2), exp: iso(365 * DAY) }, rootKey.signer));
  const jurisdiction = 'DE';
  const lists = await rest(context, 'trust', 'GET', `/trust-lists/${jurisdiction}`);
  if (lists.status === 404) await w('trust', '/trust-lists', { jurisdiction, framework: 'eIDAS' });
  await w('trust', `/trust-lists/${jurisdiction}/entries`, { id: `soak-entry-${run}`, service_type: 'https://example.org/service/issuer', name: 'Soak issuer', node_id: issuerId });
  await w('trust', '/master-list/witnesses', { m: 1, keys: [witness.jwk] });
  await w('trust', '/master-list/entries', { id: `soak-ml-${run}`, body: { jurisdiction: 'DE', root: rootId } });
  const doomed = newKey();
  const doomedId = `soak-revoked-${run}`;
  await w('trust', '/nodes', { id: doomedId, kind: 'issuer', keys: [{ ...doomed.jwk, iat: seconds(-DAY) }] });
  await w('trust', '/revocations', { subject: `${doomedId}#${doomed.jwk.kid}`, reason: 'superseded' });

  // Registry: the sample register, a model for passports, a generic record.
  await w('registry', '/admin/seed', undefined, admin);
  const modelId = `soak-battery-${run}`;
  await w('registry', '/', { kind: 'model', id: modelId, body: { title: 'Soak battery', schema: MODEL_SCHEMA } });
  const genericId = `soak-generic-${run}`;
  await w('registry', '/', { kind: 'generic', id: genericId, body: { note: 'soak fixture' } });
  const registryIds: Record<string, string> = { '': genericId, models: modelId };
  for (const route of ROUTE_TABLES.registry.routes) {
    const collection = /^\/([a-z-]+)\/\{id\}$/.exec(route.path)?.[1];
    if (!collection || registryIds[collection]) continue;
    const page = await must(rest(context, 'registry', 'GET', `/${collection}?limit=1`), `GET /registry/${collection}`);
    const first = (page.body as { records: { id: string }[] }).records[0];
    if (first) registryIds[collection] = first.id;
  }

  // Issuer: a profile, passports with events, a pack; archive: a snapshot.
  const profileId = `soak-${run.replace(/[^a-z0-9-]/g, '')}`.slice(0, 60);
  await w('issuer', '/admin/profiles', { profile_id: profileId, capability_classes: ['identify', 'trace'] }, admin);
  const passports: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const created = await w('issuer', '/passports', {
      identity: `https://id.gs1.org/01/09520123456788/21/${newSerial()}`,
      granularity: 'item',
      type_ref: { id: modelId, version: 1 },
      config_vector: CONFIG_VECTOR,
    });
    const id = (created.body as { passport_id: string }).passport_id;
    passports.push(id);
    await w('issuer', `/passports/${encodeURIComponent(id)}/events`, { type: 'activated', payload: { placed_on_market_at: '2025-02-01T00:00:00Z' } });
    await w('issuer', `/passports/${encodeURIComponent(id)}/events`, { type: 'ObjectEvent', payload: OBJECT_EVENT(i) });
  }
  await w('issuer', `/passports/${encodeURIComponent(passports[0]!)}/pack`);
  const snapshot = await w('archive', '/snapshots', { passport_id: passports[0] });
  const snapshotId = (snapshot.body as { id: string }).id;
  return { run, rootKey, rootId, issuerId, witness, jurisdiction, modelId, genericId, profileId, passports, snapshotId, registryIds };
}

/** Real values for a route's path parameters. */
export function realParams(service: ServiceName, route: Route, fixtures: Fixtures): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    if (service === 'trust') params[name!] = fixtures.jurisdiction;
    else if (service === 'issuer') params[name!] = fixtures.passports[1]!;
    else if (service === 'archive') params[name!] = fixtures.snapshotId;
    else {
      const collection = /^\/([a-z-]+)\/\{id\}/.exec(route.path)?.[1] ?? '';
      params[name!] = fixtures.registryIds[collection] ?? fixtures.genericId;
    }
  }
  return params;
}

/** A route's path with parameters filled in (each percent-encoded). */
export function fillPath(route: Route, params: Record<string, string>, raw = false): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => (raw ? params[name]! : encodeURIComponent(params[name]!)));
}

export interface ValidRequest {
  params: Record<string, string>;
  query: Record<string, string>;
  body?: unknown;
}

let counter = 0;

/**
 * An otherwise valid request for a route: what its role-holder would send. Every call makes fresh
 * values where a repeat would conflict (new node ids, a new jurisdiction, …). Reads that need a
 * role (admin logs) take no body. `undefined` when no valid request of the route is known.
 */
export async function validRequest(context: WriteContext, service: ServiceName, route: Route, fixtures: Fixtures): Promise<ValidRequest | undefined> {
  counter += 1;
  const n = `${fixtures.run}-${counter}`;
  const params = realParams(service, route, fixtures);
  const plain = (body?: unknown): ValidRequest => ({ params, query: {}, ...(body === undefined ? {} : { body }) });
  if (route.method === 'GET') return plain();
  const key = `${service} ${route.path}`;
  switch (key) {
    case 'trust /nodes':
      return plain({ id: `soak-node-${n}`, kind: 'issuer', jurisdiction: 'DE', keys: [{ ...newKey().jwk, iat: seconds(-60) }] });
    case 'trust /edges':
      return plain(signJson({ iss: fixtures.rootId, sub: fixtures.issuerId, scope: {}, iat: iso(-3600 - counter), exp: iso(30 * DAY) }, fixtures.rootKey.signer));
    case 'trust /trust-lists':
      return plain({ jurisdiction: JURISDICTIONS[counter % JURISDICTIONS.length], framework: `soak-${n}` });
    case 'trust /trust-lists/{jur}/entries':
      return plain({ id: `soak-entry-${n}`, service_type: 'https://example.org/service/issuer', name: `Entry ${n}`, node_id: fixtures.issuerId });
    case 'trust /master-list/witnesses':
      return plain({ m: 1, keys: [fixtures.witness.jwk] });
    case 'trust /master-list/entries':
      return plain({ id: `soak-ml-${n}`, body: { jurisdiction: 'DE', root: fixtures.rootId, n } });
    case 'trust /revocations': {
      // A revocation needs a subject that is not yet revoked: a node made for it.
      const key = newKey();
      const id = `soak-revocable-${n}`;
      const node = await rest(context, 'trust', 'POST', '/nodes', { token: context.tokens.admin, body: { id, kind: 'issuer', keys: [{ ...key.jwk, iat: seconds(-60) }] } });
      if (node.status >= 300) return undefined;
      return plain({ subject: `${id}#${key.jwk.kid}`, reason: 'keyCompromise' });
    }
    case 'registry /':
      return plain({ kind: 'generic', id: `soak-rec-${n}`, body: { note: n } });
    case 'registry /admin/seed':
    case 'issuer /passports/{id}/pack':
    case 'issuer /admin/restore/acknowledgement':
      return plain();
    case 'registry /models/{id}/validate':
      return plain(CONFIG_VECTOR);
    case 'issuer /passports':
      return plain({ identity: `https://id.gs1.org/01/09520123456788/21/${newSerial()}`, granularity: 'item', type_ref: { id: fixtures.modelId, version: 1 }, config_vector: CONFIG_VECTOR });
    case 'issuer /passports/batch':
      return plain({
        passports: [newSerial(), newSerial()].map((serial) => ({
          identity: `https://id.gs1.org/01/09520123456788/21/${serial}`,
          type_ref: { id: fixtures.modelId, version: 1 },
          config_vector: CONFIG_VECTOR,
        })),
      });
    case 'issuer /passports/{id}/events':
      return plain({ type: 'ObjectEvent', payload: OBJECT_EVENT(counter) });
    case 'issuer /admin/profiles':
      return plain({ profile_id: `soak-p${counter}`, capability_classes: ['identify'], description: n });
    case 'issuer /admin/applicability':
      return plain({ model_id: `soak-unused-model-${counter}`, model_version: 1, profile_id: fixtures.profileId });
    case 'archive /snapshots':
      return plain({ passport_id: fixtures.passports[counter % fixtures.passports.length] });
  }
  if (service === 'registry' && route.path.endsWith('/{id}/versions')) {
    // The next version of the record, built on the current one.
    const readPath = fillPath(route, params).replace(/\/versions$/, '');
    const current = await rest(context, 'registry', 'GET', readPath);
    if (current.status !== 200) return undefined;
    const record = current.body as { version: number; body: unknown };
    return plain({ expected_version: record.version, body: record.body });
  }
  return undefined;
}

/** Every route of every table, with its service. */
export function allRoutes(): { service: ServiceName; route: Route }[] {
  return Object.values(ROUTE_TABLES).flatMap((table) => table.routes.map((route) => ({ service: table.service, route })));
}

/** A deterministic generator (mulberry32). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The problem a gateway answer carries in its first error, and whether any root field has data. */
export function graphqlOutcome(answer: RawAnswer): { status?: number; code?: string; data: boolean } {
  try {
    const payload = JSON.parse(answer.text) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
    const first = payload.errors?.[0];
    const details = first ? problemOf(first) : undefined;
    const data = Object.values(payload.data ?? {}).some((value) => value !== null);
    return { status: details?.status, code: details?.code ?? (first?.extensions?.code as string | undefined), data };
  } catch {
    return { data: false };
  }
}

/**
 * Brings each service's admin log up to every refusal made so far: a REST read of the log first sends
 * the refusals the facade has gathered for that service, and the service writes its counts before it
 * reads (docs/DESIGN-NOTES.md, "Authentication"). A granted read is not logged.
 */
export async function settleAdminLogs(context: WriteContext): Promise<void> {
  for (const service of Object.keys(context.stack.facade.baseUrls) as ServiceName[]) {
    const answer = await send({ url: `${context.stack.facade.baseUrls[service]}/admin/log?limit=1`, method: 'GET', headers: { authorization: `Bearer ${context.tokens.admin}` } });
    if (answer.status !== 200) throw new Error(`the ${service} admin log could not be read: ${answer.status} ${excerpt(answer.text)}`);
  }
}
