/**
 * Object-level authorization everywhere (issue 44 item 3), as two operators meet it: every write
 * route of the published OpenAPI documents and every admin read, and every mutation of the composed
 * schema, tried by an anonymous caller, a reader, writer and admin of the operator that owns the
 * object, a writer and admin of another operator, and the platform admin. What each may do is
 * declared once, in RULES (docs/OPERATORS.md, "What each role may do", is the same table): a route
 * or mutation without a rule fails. Every refusal is tried through the REST facade, the gateway and
 * the subgraph reached directly: it answers the declared status and code, changes no table of any
 * service or of the identity store, and is in the service's admin log under the refused caller and
 * its operator (whose admin reads it).
 * Every allowed caller then succeeds, with a request of its own.
 */
import { type OperationDefinitionNode, parse } from 'graphql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES, type ServiceName } from '../../lib/config/services.js';
import { actionOf } from '../../rest-facade/access.js';
import type { Route } from '../../rest-facade/route-table.js';
import { ROUTE_TABLES } from '../../rest-facade/routes/index.js';
import { pool, send, type RawAnswer } from '../support/soak-http.js';
import { ADMIN_LOG_TABLES, changedTables, watchTables } from '../support/tables.js';
import { fillPath, graphqlOutcome, seedFixtures, settleAdminLogs, validRequest, type Fixtures, type ValidRequest, type WriteContext } from '../support/write-fixtures.js';
import { startTestStack, TOKENS, type TestStack } from '../support/stack.js';

const CALLERS = ['anonymous', 'ownReader', 'ownWriter', 'ownAdmin', 'otherWriter', 'otherAdmin', 'platformAdmin'] as const;
type Caller = (typeof CALLERS)[number];
/** `ok`: a 2xx (REST) or data (GraphQL); otherwise the refusal's status and code. */
type Outcome = 'ok' | readonly [number, string];
type Rule = Record<Caller, Outcome>;

const MISSING: Outcome = [401, 'MISSING_TOKEN'];
const ROLE: Outcome = [403, 'INSUFFICIENT_ROLE'];
const PLATFORM: Outcome = [403, 'PLATFORM_ADMIN_REQUIRED'];
const OTHERS: Outcome = [403, 'OWNED_BY_ANOTHER_OPERATOR'];

/** A write to an object an operator owns (a passport, a registry record): its writers and admins, and the platform admin. */
const OWNED: Rule = { anonymous: MISSING, ownReader: ROLE, ownWriter: 'ok', ownAdmin: 'ok', otherWriter: OTHERS, otherAdmin: OTHERS, platformAdmin: 'ok' };
/** A creation: any writer makes one of its own operator's. */
const ANY_WRITER: Rule = { anonymous: MISSING, ownReader: ROLE, ownWriter: 'ok', ownAdmin: 'ok', otherWriter: 'ok', otherAdmin: 'ok', platformAdmin: 'ok' };
/** What is the platform's: its admin only. */
const PLATFORM_ONLY: Rule = { anonymous: MISSING, ownReader: ROLE, ownWriter: ROLE, ownAdmin: PLATFORM, otherWriter: ROLE, otherAdmin: PLATFORM, platformAdmin: 'ok' };
/** An operator's own administration (its tokens): another operator's admin is told it does not exist. */
const OWN_ADMIN = (unknown: string): Rule => ({ anonymous: MISSING, ownReader: ROLE, ownWriter: ROLE, ownAdmin: 'ok', otherWriter: ROLE, otherAdmin: [404, unknown], platformAdmin: 'ok' });
/** Only the REST facade's signed reports: refused to every caller. */
const SIGNED_REPORT: Rule = Object.fromEntries(CALLERS.map((caller) => [caller, [403, 'INVALID_SIGNATURE']])) as unknown as Rule;

/** Who may do what, by the field of the graph a route or mutation runs: the one declaration of the matrix. */
const RULES: Record<string, Rule> = {
  createPassport: ANY_WRITER,
  createPassports: ANY_WRITER,
  appendPassportEvent: OWNED,
  mintPassportPack: OWNED,
  createSnapshot: OWNED,
  createRegistryRecord: ANY_WRITER,
  appendRegistryRecordVersion: OWNED,
  registryValidateDocument: ANY_WRITER,
  upsertTrustNode: PLATFORM_ONLY,
  addTrustEdge: PLATFORM_ONLY,
  declareTrustRevocation: PLATFORM_ONLY,
  registerTrustList: PLATFORM_ONLY,
  upsertTrustListEntry: PLATFORM_ONLY,
  replaceTrustWitnessSet: PLATFORM_ONLY,
  upsertTrustMasterListEntry: PLATFORM_ONLY,
  placePlatformKeys: PLATFORM_ONLY,
  upsertIssuerProfile: PLATFORM_ONLY,
  setIssuerApplicability: PLATFORM_ONLY,
  acknowledgeRestore: PLATFORM_ONLY,
  seedRegistry: PLATFORM_ONLY,
  createOperator: PLATFORM_ONLY,
  suspendOperator: PLATFORM_ONLY,
  operators: PLATFORM_ONLY,
  operator: { ...PLATFORM_ONLY, ownAdmin: 'ok' },
  createAccessToken: OWN_ADMIN('UNKNOWN_OPERATOR'),
  accessTokens: OWN_ADMIN('UNKNOWN_OPERATOR'),
  revokeAccessToken: OWN_ADMIN('UNKNOWN_OPERATOR'),
  adminLog: { ...PLATFORM_ONLY, ownAdmin: 'ok', otherAdmin: 'ok' },
  ...Object.fromEntries(
    SERVICES.flatMap((service) => [
      [`${service}RotateKey`, PLATFORM_ONLY],
      [`${service}RevokeKey`, PLATFORM_ONLY],
      [`${service}ReportRefusals`, SIGNED_REPORT],
    ]),
  ),
};

/** One operation of the matrix: a route of the facade, or a field of the graph (sent to the gateway and to its subgraph). */
interface Operation {
  name: string;
  action: string;
  service: ServiceName;
  route?: Route;
  /** A valid request as `caller` would send it (for a refused caller, one all refused callers share). */
  request(caller: Caller | 'refused'): Promise<ValidRequest>;
  graphql?(request: ValidRequest): { query: string; variables: Record<string, unknown> };
}

const suffix = Math.random().toString(36).slice(2, 7);
const OWN = `own-${suffix}`;
const OTHER = `other-${suffix}`;

let stack: TestStack;
let fixtures: Fixtures;
let context: WriteContext;
const tokens = {} as Record<Exclude<Caller, 'anonymous' | 'platformAdmin'>, { secret: string; actor: string }>;
const header = (caller: Caller): Record<string, string> => (caller === 'anonymous' ? {} : { authorization: `Bearer ${caller === 'platformAdmin' ? TOKENS.admin : tokens[caller].secret}` });
/** The operator the admin log files a caller's refusals under, for its admin to read: none for the platform and the anonymous. */
const operatorOf = (caller: Caller) => (caller.startsWith('own') ? OWN : caller.startsWith('other') ? OTHER : null);
const actorOf = (caller: Caller) => (caller === 'anonymous' ? 'anonymous' : caller === 'platformAdmin' ? 'test-admin' : tokens[caller].actor);

async function must(answer: Promise<RawAnswer>, what: string): Promise<any> {
  const { status, text } = await answer;
  if (status >= 300) throw new Error(`${what}: ${status} ${text}`);
  return JSON.parse(text);
}
const restAs = (service: ServiceName, method: string, path: string, body?: unknown) =>
  must(
    send({
      url: `${stack.base(service)}${path}`,
      method,
      headers: { authorization: `Bearer ${TOKENS.admin}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
    `${method} /${service}${path}`,
  );
const graphqlAsAdmin = async (query: string, variables: Record<string, unknown> = {}) => {
  const answer = await stack.graphql(query, variables, 'admin');
  if (answer.errors) throw new Error(`${query}: ${JSON.stringify(answer.errors)}`);
  return answer.data;
};

let made = 0;
const fresh = () => `${suffix}-${(made += 1)}`;

/** Requests the soak's fixtures do not know: what only operators and the platform's keys need. */
async function ownRequest(service: ServiceName, route: Route, caller: Caller | 'refused'): Promise<ValidRequest | undefined> {
  const plain = (params: Record<string, string>, query: Record<string, string> = {}, body?: unknown): ValidRequest => ({ params, query, ...(body === undefined ? {} : { body }) });
  switch (`${service} ${route.method} ${route.path}`) {
    case 'issuer POST /operators':
      return plain({}, {}, { id: `made-${fresh()}`, name: 'Made in the matrix' });
    case 'issuer GET /operators/{id}':
      return plain({ id: OWN });
    case 'issuer POST /operators/{id}/suspension': {
      // The platform admin suspends an operator made for it; a refused caller tries the owner itself.
      if (caller !== 'platformAdmin') return plain({ id: OWN });
      const id = `doomed-${fresh()}`;
      await restAs('issuer', 'POST', '/operators', { id, name: 'Doomed' });
      return plain({ id });
    }
    case 'issuer POST /admin/tokens':
      return plain({}, {}, { operator: OWN, role: 'reader', label: `made ${fresh()}` });
    case 'issuer GET /admin/tokens':
      return plain({}, { operator: OWN });
    case 'issuer POST /admin/tokens/{id}/revocation': {
      const { id } = await restAs('issuer', 'POST', '/admin/tokens', { operator: OWN, role: 'reader', label: `to revoke ${fresh()}` });
      return plain({ id }, { operator: OWN });
    }
  }
  return undefined;
}

/** The mutations no route runs, with what a request of them needs. */
function unroutedOperation(name: string): Operation | undefined {
  const service = SERVICES.find((candidate) => name.startsWith(candidate)) ?? (name === 'placePlatformKeys' ? 'trust' : undefined);
  if (!service) return undefined;
  const base = { name: `graph ${name}`, action: name, service };
  const serviceKid = async () =>
    ((await graphqlAsAdmin(`{ ${service} { keyring } }`))[service].keyring.keys as { kid: string; purpose?: string; exp?: number }[]).find((key) => key.purpose === 'service' && key.exp === undefined)!
      .kid;
  const of =
    (query: string, variables: Record<string, unknown> = {}) =>
    () => ({ query, variables });
  const none: ValidRequest = { params: {}, query: {} };
  if (name === 'placePlatformKeys') return { ...base, request: async () => none, graphql: of('mutation { placePlatformKeys { created } }') };
  if (name.endsWith('RotateKey')) return { ...base, request: async () => none, graphql: of(`mutation { ${name}(purpose: "service") }`) };
  if (name.endsWith('ReportRefusals')) return { ...base, request: async () => none, graphql: of(`mutation { ${name}(report: "[]", signature: "not the facade's") }`) };
  if (name.endsWith('RevokeKey')) {
    return {
      ...base,
      async request(caller) {
        // The platform admin revokes a key it retired first; a refused caller names the current one.
        const kid = await serviceKid();
        if (caller === 'platformAdmin') await graphqlAsAdmin(`mutation { ${service}RotateKey(purpose: "service") }`);
        return { params: { kid }, query: {} };
      },
      graphql: (request) => ({ query: `mutation ($kid: String!) { ${name}(kid: $kid, reason: "superseded") }`, variables: { kid: request.params.kid } }),
    };
  }
  return undefined;
}

/** Every operation of the published documents and of the composed schema, each with the route or field it runs. */
async function operations(): Promise<{ operations: Operation[]; unknown: string[] }> {
  const found: Operation[] = [];
  const unknown: string[] = [];
  const routed = new Set<string>();
  for (const service of SERVICES) {
    const document = await must(send({ url: `${new URL(stack.base(service)).origin}/docs/${service}/openapi.json`, method: 'GET', headers: {} }), `the ${service} OpenAPI document`);
    // Paths are relative to the document's server, the service's base URL.
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, { security?: unknown[] }>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        // Writes (every POST) and every read that needs a token.
        if (method !== 'post' && !(operation.security?.length ?? 0)) continue;
        const route = ROUTE_TABLES[service].routes.find((candidate) => candidate.path === path && candidate.method === method.toUpperCase());
        if (!route) {
          unknown.push(`${method.toUpperCase()} ${path}: no route of the table`);
          continue;
        }
        const action = actionOf(route.operation, service);
        routed.add(action);
        const isGraphWrite = (parse(route.operation).definitions[0] as OperationDefinitionNode).operation === 'mutation' || route.role === 'admin';
        found.push({
          name: `${route.method} /${service}${route.path}`,
          action,
          service,
          route,
          async request(caller) {
            const request = (await ownRequest(service, route, caller)) ?? (await validRequest(context, service, route, fixtures));
            if (!request) throw new Error(`no valid request of ${route.method} /${service}${route.path}`);
            return request;
          },
          // A POST that only reads (validating a document) is public in the graph, as every read is.
          ...(isGraphWrite && { graphql: (request: ValidRequest) => ({ query: route.operation, variables: route.variables?.({ ...request, body: request.body }) ?? {} }) }),
        });
      }
    }
  }
  const schema = await stack.graphql('{ __schema { mutationType { fields { name } } } }');
  for (const { name } of schema.data.__schema.mutationType.fields as { name: string }[]) {
    if (routed.has(name)) continue;
    const operation = unroutedOperation(name);
    if (operation) found.push(operation);
    else unknown.push(`mutation ${name}: no request is known for it`);
  }
  return { operations: found, unknown };
}

/** A request of an operation by a caller, through one door: the outcome, as RULES writes it. */
async function attempt(operation: Operation, request: ValidRequest, caller: Caller, door: 'rest' | 'gateway' | 'subgraph'): Promise<{ outcome: Outcome; text: string }> {
  if (door === 'rest') {
    const route = operation.route!;
    const query = new URLSearchParams(request.query).toString();
    const answer = await send({
      url: `${stack.base(operation.service)}${fillPath(route, request.params)}${query ? `?${query}` : ''}`,
      method: route.method,
      headers: { ...header(caller), ...(request.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
    if (answer.status < 300) return { outcome: 'ok', text: answer.text };
    const problem = JSON.parse(answer.text) as { code?: string };
    return { outcome: [answer.status, problem.code ?? ''], text: answer.text };
  }
  const url = door === 'gateway' ? stack.stack.gateway.graphqlUrl : stack.stack.subgraphUrls[operation.service];
  const answer = await send({ url, method: 'POST', headers: { 'content-type': 'application/json', ...header(caller) }, body: JSON.stringify(operation.graphql!(request)) });
  const { status, code, data } = graphqlOutcome(answer);
  return { outcome: data && !code ? 'ok' : [status ?? answer.status, code ?? ''], text: answer.text };
}

let all: Operation[];
let unknownOperations: string[];

beforeAll(async () => {
  stack = await startTestStack();
  for (const [id, name] of [
    [OWN, 'Own Batteries'],
    [OTHER, 'Other Batteries'],
  ]) {
    await restAs('issuer', 'POST', '/operators', { id, name });
  }
  const issue = async (operator: string, role: string, caller: keyof typeof tokens) => {
    const label = `matrix ${caller}`;
    const { id, secret } = await restAs('issuer', 'POST', '/admin/tokens', { operator, role, label });
    tokens[caller] = { secret, actor: `${label} [${id}]` };
  };
  await Promise.all([
    issue(OWN, 'reader', 'ownReader'),
    issue(OWN, 'writer', 'ownWriter'),
    issue(OWN, 'admin', 'ownAdmin'),
    issue(OTHER, 'writer', 'otherWriter'),
    issue(OTHER, 'admin', 'otherAdmin'),
  ]);
  // The soak's fixtures, written by the own operator's writer (the trust graph by the platform admin).
  context = { stack: stack.stack, tokens: { admin: TOKENS.admin, writer: tokens.ownWriter.secret }, seed: 44 };
  fixtures = await seedFixtures(context);
  // The sample register is the default operator's: each collection's record to version is a copy the own operator makes.
  for (const [collection, id] of Object.entries(fixtures.registryIds)) {
    if (collection === '' || collection === 'models') continue;
    const record = await must(send({ url: `${stack.base('registry')}/${collection}/${encodeURIComponent(id)}`, method: 'GET', headers: {} }), `GET ${collection}/${id}`);
    const copy = `own-${collection}-${suffix}`;
    await must(
      send({
        url: `${stack.base('registry')}/`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...header('ownWriter') },
        body: JSON.stringify({ kind: record.kind, id: copy, body: record.body }),
      }),
      `a copy of ${collection}/${id}`,
    );
    fixtures.registryIds[collection] = copy;
  }
  ({ operations: all, unknown: unknownOperations } = await operations());
}, 240_000);

afterAll(() => stack?.stop());

describe('the authorization matrix', () => {
  it('has a rule for every write route of the OpenAPI documents, every admin read and every mutation of the schema', () => {
    expect(unknownOperations).toEqual([]);
    expect(all.filter((operation) => !RULES[operation.action]).map((operation) => `${operation.name} (${operation.action})`)).toEqual([]);
    // The documents name every write and guarded route of the tables, and the mutations no route runs are there too.
    const guarded = SERVICES.flatMap((service) => ROUTE_TABLES[service].routes.filter((route) => route.method === 'POST' || route.role).map((route) => `${route.method} /${service}${route.path}`));
    expect(
      all
        .filter((operation) => operation.route)
        .map((operation) => operation.name)
        .sort(),
    ).toEqual(guarded.sort());
    expect(all.filter((operation) => !operation.route).map((operation) => operation.action)).toContain('issuerRotateKey');
  });

  it('refuses as declared, through the facade, the gateway and the subgraph reached directly; nothing changes, and every refusal is in the admin log', async () => {
    const requests = new Map<Operation, ValidRequest>();
    for (const operation of all) requests.set(operation, await operation.request('refused'));
    const tables = await watchTables(stack.databaseUrl, [...SERVICES, 'identity']);
    const logs = new pg.Client({ connectionString: stack.databaseUrl });
    await logs.connect();
    try {
      await settleAdminLogs(context);
      const before = await tables.snapshot();
      const lastIds: Record<string, string> = {};
      for (const service of SERVICES) lastIds[service] = (await logs.query(`SELECT coalesce(max(id), 0)::text AS max FROM ${service}.admin_log`)).rows[0].max;
      const tries = all.flatMap((operation) =>
        CALLERS.filter((caller) => RULES[operation.action]?.[caller] !== 'ok').flatMap((caller) =>
          [...(operation.route ? (['rest'] as const) : []), ...(operation.graphql ? (['gateway', 'subgraph'] as const) : [])].map((door) => ({ operation, caller, door })),
        ),
      );
      const wrong: string[] = [];
      const made = new Map<string, number>();
      await pool(tries, 8, async ({ operation, caller, door }) => {
        const expected = RULES[operation.action]![caller];
        const { outcome, text } = await attempt(operation, requests.get(operation)!, caller, door);
        if (JSON.stringify(outcome) !== JSON.stringify(expected))
          wrong.push(`${operation.name} by ${caller} at the ${door}: ${JSON.stringify(outcome)}, expected ${JSON.stringify(expected)}: ${text.slice(0, 300)}`);
        const key = `${operation.service} ${operation.action} ${actorOf(caller)} ${operatorOf(caller)} ${(expected as readonly [number, string])[1]}`;
        made.set(key, (made.get(key) ?? 0) + 1);
      });
      expect(wrong).toEqual([]);

      await settleAdminLogs(context);
      expect(changedTables(before, await tables.snapshot(), ADMIN_LOG_TABLES)).toEqual([]);
      const logged = new Map<string, number>();
      for (const service of SERVICES) {
        const rows = await logs.query<{ action: string; actor: string; operator: string | null; outcome: string; count: number }>(
          `SELECT action, actor, operator, outcome, coalesce((detail->>'count')::int, 1) AS count FROM ${service}.admin_log WHERE id > $1::bigint`,
          [lastIds[service]],
        );
        for (const { action, actor, operator, outcome, count } of rows.rows) {
          const key = `${service} ${action} ${actor} ${operator} ${outcome}`;
          logged.set(key, (logged.get(key) ?? 0) + count);
        }
      }
      expect(Object.fromEntries([...logged].sort())).toEqual(Object.fromEntries([...made].sort()));
    } finally {
      await Promise.all([tables.close(), logs.end()]);
    }
  }, 240_000);

  it('lets every allowed caller do it, each with a request of its own', async () => {
    const wrong: string[] = [];
    await pool(all, 4, async (operation) => {
      for (const caller of CALLERS.filter((candidate) => RULES[operation.action]?.[candidate] === 'ok')) {
        const request = await operation.request(caller);
        const { outcome, text } = await attempt(operation, request, caller, operation.route ? 'rest' : 'gateway');
        if (outcome !== 'ok') wrong.push(`${operation.name} by ${caller}: ${JSON.stringify(outcome)}: ${text.slice(0, 300)}`);
      }
    });
    expect(wrong).toEqual([]);
  }, 240_000);
});
