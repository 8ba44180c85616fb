/**
 * Soak part: the authorization matrix. Every write path (POST) and every admin path of the route
 * tables gets an otherwise valid request with no token, malformed Authorization headers, unknown
 * bearer tokens and, on admin paths, the writer token; each must be refused (401, or 403 for the
 * under-privileged writer, as lib/auth/tokens.ts and DESIGN §3 decide) and change no table but the
 * admin logs, which must account for every refusal, itemised or counted (docs/DESIGN-NOTES.md,
 * "Authentication"). The same operations go straight to the gateway's /graphql with the same
 * credentials. As a control, the right token (and the admin token on writer paths) must be accepted.
 *
 *   SOAK_SEED=<seed> npm run soak -- authorization
 */
import { Kind, parse } from 'graphql';
import type { ServiceName } from '../lib/config/services.js';
import type { Route } from '../rest-facade/route-table.js';
import type { SoakContext } from './context.js';
import { allRoutes, fillPath, graphqlOutcome, prng, seedFixtures, settleAdminLogs, validRequest, type Fixtures, type ValidRequest } from '../test/support/write-fixtures.js';
import { excerpt, problemViolation, send } from '../test/support/soak-http.js';
import { FailureLog, markdownTable, notRun, type SoakSection } from './report.js';
import { ADMIN_LOG_TABLES, type AdminLogRow, changedTables, watchTables } from '../test/support/tables.js';

type CredentialKind = 'none' | 'malformed' | 'unknown' | 'writer';

interface Credential {
  kind: CredentialKind;
  /** The Authorization header, absent for `none`. */
  header?: string;
  status: 401 | 403;
  code: string;
}

function credentials(context: SoakContext, adminRoute: boolean): Credential[] {
  const { admin, writer } = context.tokens;
  const malformed = [`Basic ${Buffer.from(`admin:${admin}`).toString('base64')}`, 'Bearer', `Bearer ${admin} ${admin}`, admin, `Bearer "${admin}"`, `Token ${admin}`];
  const random = prng(context.seed);
  const unknown = [`Bearer wrong-${Array.from({ length: 24 }, () => Math.floor(random() * 16).toString(16)).join('')}`, `Bearer ${admin}x`, `Bearer ${writer.slice(0, -1)}`];
  return [
    { kind: 'none', status: 401, code: 'MISSING_TOKEN' },
    ...malformed.map((header): Credential => ({ kind: 'malformed', header, status: 401, code: 'INVALID_TOKEN' })),
    ...unknown.map((header): Credential => ({ kind: 'unknown', header, status: 401, code: 'INVALID_TOKEN' })),
    ...(adminRoute ? [{ kind: 'writer', header: `Bearer ${writer}`, status: 403, code: 'INSUFFICIENT_ROLE' } as Credential] : []),
  ];
}

/**
 * The mutations only an admin may run: those of the admin paths of the route tables, and key
 * rotation and revocation (DESIGN-NOTES, keys), which no path maps.
 */
function adminMutationNames(mutations: readonly string[]): Set<string> {
  const names = new Set(mutations.filter((name) => /(RotateKey|RevokeKey)$/.test(name)));
  for (const { route } of allRoutes()) {
    if (route.role !== 'admin') continue;
    const [operation] = parse(route.operation).definitions;
    if (operation?.kind !== Kind.OPERATION_DEFINITION || operation.operation !== 'mutation') continue;
    for (const selection of operation.selectionSet.selections) if (selection.kind === Kind.FIELD) names.add(selection.name.value);
  }
  return names;
}

/** The write paths (every POST) and the admin paths, each with its required role. */
export function guardedRoutes(): { service: ServiceName; route: Route & { role: NonNullable<Route['role']> } }[] {
  const guarded = allRoutes().filter(({ route }) => route.method === 'POST' || route.path.startsWith('/admin/') || route.role);
  for (const { service, route } of guarded) {
    // A write or admin path that any caller could use is itself a finding; the matrix cannot be built for it.
    if (!route.role) throw new Error(`${service} ${route.method} ${route.path} needs no role`);
    if (route.path.startsWith('/admin/') && route.role !== 'admin') throw new Error(`${service} ${route.method} ${route.path} is an admin path open to ${route.role}`);
  }
  return guarded as ReturnType<typeof guardedRoutes>;
}

function restRequest(context: SoakContext, service: ServiceName, route: Route, request: ValidRequest, authorization?: string) {
  const query = new URLSearchParams(request.query).toString();
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  return send({
    url: `${context.stack.facade.baseUrls[service]}${fillPath(route, request.params)}${query ? `?${query}` : ''}`,
    method: route.method,
    headers: { ...(authorization ? { authorization } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body }),
  });
}

function graphqlRequest(context: SoakContext, route: Route, request: ValidRequest, authorization?: string) {
  const variables = route.variables?.({ params: request.params, query: request.query, body: request.body }) ?? {};
  return send({
    url: context.stack.gateway.graphqlUrl,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ query: route.operation, variables }),
  });
}

interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}

const TYPE_REF = 'kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } }';

/**
 * Every mutation of the composed graph, the ones no REST path maps (key rotation, …) included, as
 * a document with well-typed dummy arguments: arguments are checked before the resolver, so only
 * well-typed ones show that the role check refuses.
 */
async function everyMutation(context: SoakContext): Promise<{ name: string; document: string }[]> {
  const answer = await send({
    url: context.stack.gateway.graphqlUrl,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `{ __schema { mutationType { fields { name args { name type { ${TYPE_REF} } } type { ${TYPE_REF} } } }
        types { kind name enumValues { name } inputFields { name type { ${TYPE_REF} } } } } }`,
    }),
  });
  const schema = (JSON.parse(answer.text) as { data: { __schema: any } }).data.__schema;
  const types = new Map<string, { kind: string; enumValues?: { name: string }[]; inputFields?: { name: string; type: TypeRef }[] }>(schema.types.map((type: { name: string }) => [type.name, type]));
  const literal = (ref: TypeRef): string => {
    if (ref.kind === 'NON_NULL') return literal(ref.ofType!);
    if (ref.kind === 'LIST') return `[${literal(ref.ofType!)}]`;
    const type = types.get(ref.name!)!;
    if (type.kind === 'ENUM') return type.enumValues![0]!.name;
    if (type.kind === 'INPUT_OBJECT') {
      const required = type.inputFields!.filter((field) => field.type.kind === 'NON_NULL');
      return `{ ${required.map((field) => `${field.name}: ${literal(field.type)}`).join(', ')} }`;
    }
    const scalars: Record<string, string> = {
      String: '"soak-probe"',
      ID: '"soak-probe"',
      Int: '1',
      Float: '1.5',
      Boolean: 'true',
      DateTimeISO: '"2026-01-01T00:00:00.000Z"',
      JSON: '{}',
      JSONObject: '{}',
    };
    return scalars[ref.name!] ?? '"soak-probe"';
  };
  const leaf = (ref: TypeRef): boolean => (ref.ofType ? leaf(ref.ofType) : ['SCALAR', 'ENUM'].includes(types.get(ref.name!)!.kind));
  return (schema.mutationType.fields as { name: string; args: { name: string; type: TypeRef }[]; type: TypeRef }[]).map((field) => {
    const args = field.args.filter((arg) => arg.type.kind === 'NON_NULL').map((arg) => `${arg.name}: ${literal(arg.type)}`);
    return { name: field.name, document: `mutation { ${field.name}${args.length ? `(${args.join(', ')})` : ''}${leaf(field.type) ? '' : ' { __typename }'} }` };
  });
}

/** The facade's refusal reports, which no token can sign (lib/audit/refusal-report.ts): refused 403 INVALID_SIGNATURE to anyone else. */
const isRefusalReport = (mutation: string) => /ReportRefusals$/.test(mutation);
const INVALID_SIGNATURE = { status: 403, code: 'INVALID_SIGNATURE' } as const;

/** Refusals by `<service> <outcome>` (or by outcome alone where the service is not known), as made or as the admin logs count them. */
class RefusalTally {
  readonly #counts = new Map<string, number>();

  add(key: string, count = 1): void {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + count);
  }

  /** Where `logged` differs from these, each as a sentence. */
  differences(logged: RefusalTally, where: string): string[] {
    const keys = new Set([...this.#counts.keys(), ...logged.#counts.keys()]);
    return [...keys]
      .filter((key) => (this.#counts.get(key) ?? 0) !== (logged.#counts.get(key) ?? 0))
      .map((key) => `${where}: the admin logs count ${logged.#counts.get(key) ?? 0} refusals ${key}, ${this.#counts.get(key) ?? 0} were made`);
  }
}

/** The refusals new admin-log entries stand for (an itemised entry one, a counted one its count); any entry that is no refusal is a finding. */
function loggedRefusals(entries: AdminLogRow[], outcomes: ReadonlySet<string>, byService: boolean, where: string, findings: string[]): RefusalTally {
  const logged = new RefusalTally();
  for (const entry of entries) {
    if (outcomes.has(entry.outcome)) logged.add(byService ? `${entry.service} ${entry.outcome}` : entry.outcome, entry.count);
    else findings.push(`${where} left an admin-log entry ${entry.service} ${entry.action} ${entry.outcome} (${entry.role})`);
  }
  return logged;
}

const cell = (statuses: number[]) => {
  if (statuses.length === 0) return '–';
  if (statuses.every((status) => status === 0)) return 'public read';
  const counts = new Map<number, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts].map(([status, count]) => (count > 1 ? `${status} ×${count}` : String(status))).join(', ');
};

export async function runAuthorization(context: SoakContext, given?: Fixtures): Promise<SoakSection> {
  const started = performance.now();
  const failures = new FailureLog(Number(process.env.SOAK_FAILURES_SHOWN) || 20);
  const fixtures = given ?? (await seedFixtures(context).catch((error: unknown) => notRun('Authorization matrix', error, started)));
  if (!('run' in fixtures)) return fixtures;
  const tables = await watchTables(context.databaseUrl);
  const routes = guardedRoutes();
  const rows = new Map<string, Record<string, number[]>>();
  const rowOf = (service: ServiceName, route: Route) => {
    const key = `${service} ${route.method} ${route.path}`;
    if (!rows.has(key)) rows.set(key, {});
    return rows.get(key)!;
  };
  const note = (service: ServiceName, route: Route, column: string, status: number) => (rowOf(service, route)[column] ??= []).push(status);
  let refusals = 0;
  /** Refusal findings of the admin logs: entries that are no refusal, refusals not accounted for. */
  const logFindings: string[] = [];
  let unauthorisedWrites = 0;
  let gatewayRefusals = 0;
  let graphMutationRefusals = 0;
  let noValidRequest = 0;

  try {
    // Valid requests first, so that a refusal cannot be explained by a bad body.
    const requests = new Map<Route, ValidRequest>();
    for (const { service, route } of routes) {
      const request = await validRequest(context, service, route, fixtures);
      if (request) requests.set(route, request);
      else {
        noValidRequest += 1;
        failures.add(`${service} ${route.method} ${route.path}: no valid request is known for it (fixtures need extending)`);
        requests.set(route, { params: {}, query: {}, body: {} });
      }
    }

    // 1. Through the REST facade: every refusal, then every table as it was but the admin logs, which hold each refusal.
    const outcomes = new Set(['MISSING_TOKEN', 'INVALID_TOKEN', 'INSUFFICIENT_ROLE', INVALID_SIGNATURE.code]);
    const restMade = new RefusalTally();
    await settleAdminLogs(context);
    const beforeRest = await tables.snapshot();
    for (const { service, route } of routes) {
      for (const credential of credentials(context, route.role === 'admin')) {
        const answer = await restRequest(context, service, route, requests.get(route)!, credential.header);
        refusals += 1;
        restMade.add(`${service} ${credential.code}`);
        note(service, route, `REST ${credential.kind}`, answer.status);
        const where = `REST ${service} ${route.method} ${route.path} with ${credential.kind} credentials (${excerpt(credential.header ?? 'no header', 40)})`;
        if (answer.status >= 200 && answer.status < 300) unauthorisedWrites += 1;
        if (answer.status !== credential.status) failures.add(`${where}: ${answer.status}, expected ${credential.status}: ${excerpt(answer.text)}`);
        else {
          const violation = problemViolation(answer, route.method);
          if (violation) failures.add(`${where}: not a problem (${violation})`);
          else if (JSON.parse(answer.text).code !== credential.code) failures.add(`${where}: code ${JSON.parse(answer.text).code}, expected ${credential.code}`);
          if (answer.status === 401 && !answer.headers['www-authenticate']) failures.add(`${where}: 401 without WWW-Authenticate`);
        }
      }
    }
    await settleAdminLogs(context);
    const afterRest = await tables.snapshot();
    const restChanges = changedTables(beforeRest, afterRest, ADMIN_LOG_TABLES);
    for (const change of restChanges) failures.add(`refused REST requests changed ${change}`);
    const restLogged = await tables.adminLogSince(beforeRest);
    logFindings.push(...restMade.differences(loggedRefusals(restLogged, outcomes, true, 'refused REST requests', logFindings), 'refused REST requests'));

    // 2. Straight to the gateway: mutations and admin operations. A non-admin query (the registry's
    // validation) is a read, public in the graph as every read is (DESIGN §3); REST asks a token for it
    // only because it is a POST.
    const graphRoutes = routes.filter(({ route }) => route.role === 'admin' || /^\s*mutation\b/.test(route.operation));
    const publicReads = routes.filter(({ route }) => !graphRoutes.some((guarded) => guarded.route === route));
    for (const { service, route } of publicReads) note(service, route, 'GraphQL none', 0);
    // The same credentials as above; each refusal is logged by the service that refused it.
    const gatewayMade = new RefusalTally();
    for (const { service, route } of graphRoutes) {
      for (const credential of credentials(context, route.role === 'admin')) {
        const answer = await graphqlRequest(context, route, requests.get(route)!, credential.header);
        gatewayRefusals += 1;
        gatewayMade.add(`${service} ${credential.code}`);
        const outcome = graphqlOutcome(answer);
        note(service, route, `GraphQL ${credential.kind}`, outcome.status ?? answer.status);
        const where = `gateway ${route.operation.split(/[({]/)[0]!.trim()} (${service} ${route.path}) with ${credential.kind} credentials`;
        if (outcome.data) unauthorisedWrites += 1;
        if (answer.status >= 500) failures.add(`${where}: HTTP ${answer.status}: ${excerpt(answer.text)}`);
        else if (outcome.status !== credential.status || outcome.code !== credential.code || outcome.data) {
          failures.add(
            `${where}: ${outcome.status ?? 'no problem'} ${outcome.code ?? ''}${outcome.data ? ' with data' : ''}, expected ${credential.status} ${credential.code}: ${excerpt(answer.text)}`,
          );
        }
      }
    }
    await settleAdminLogs(context);
    const afterGateway = await tables.snapshot();
    const gatewayChanges = changedTables(afterRest, afterGateway, ADMIN_LOG_TABLES);
    for (const change of gatewayChanges) failures.add(`refused GraphQL requests changed ${change}`);
    const gatewayLogged = await tables.adminLogSince(afterRest);
    logFindings.push(...gatewayMade.differences(loggedRefusals(gatewayLogged, outcomes, true, 'refused GraphQL requests', logFindings), 'refused GraphQL requests'));

    // 2b. Every mutation of the graph, without credentials or with an unknown token: 401 (a refusal
    // report, which no token signs: 403 INVALID_SIGNATURE), nothing written but the refusals' entries.
    const mutations = await everyMutation(context);
    const adminMutations = adminMutationNames(mutations.map((mutation) => mutation.name));
    const graphRows: string[][] = [];
    const graphMade = new RefusalTally();
    const beforeGraph = await tables.snapshot();
    for (const { name, document } of mutations) {
      const statuses: string[] = [];
      // Admin mutations must refuse the writer token too (403).
      const adminOnly = adminMutations.has(name);
      for (const sent of credentials(context, adminOnly).filter((candidate) => candidate.kind === 'none' || candidate.kind === 'writer' || candidate.header === `Bearer ${context.tokens.admin}x`)) {
        const credential = isRefusalReport(name) ? { ...sent, ...INVALID_SIGNATURE } : sent;
        graphMade.add(credential.code);
        const answer = await send({
          url: context.stack.gateway.graphqlUrl,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(credential.header ? { authorization: credential.header } : {}) },
          body: JSON.stringify({ query: document }),
        });
        gatewayRefusals += 1;
        graphMutationRefusals += 1;
        const outcome = graphqlOutcome(answer);
        statuses.push(String(outcome.status ?? answer.status));
        if (outcome.data) unauthorisedWrites += 1;
        if (outcome.status !== credential.status || outcome.code !== credential.code || outcome.data)
          failures.add(
            `gateway mutation ${name} with ${credential.kind} credentials: ${outcome.status ?? answer.status} ${outcome.code ?? ''}, expected ${credential.status} ${credential.code}: ${excerpt(answer.text)}`,
          );
      }
      graphRows.push([name, ...statuses.concat(adminOnly ? [] : ['–'])]);
    }
    await settleAdminLogs(context);
    const afterGraph = await tables.snapshot();
    const graphChanges = changedTables(beforeGraph, afterGraph, ADMIN_LOG_TABLES);
    for (const change of graphChanges) failures.add(`unauthenticated mutations of the graph changed ${change}`);
    // Which service a mutation belongs to is the supergraph's to say: counted by outcome over all four.
    const graphLogged = await tables.adminLogSince(beforeGraph);
    logFindings.push(...graphMade.differences(loggedRefusals(graphLogged, outcomes, false, 'refused mutations of the graph', logFindings), 'refused mutations of the graph'));
    for (const finding of logFindings) failures.add(finding);

    // 3. Controls: the right token is accepted (with fresh valid requests), and so is admin on writer paths.
    let controls = 0;
    let controlsAccepted = 0;
    const beforeControls = await tables.snapshot();
    for (const { service, route } of routes) {
      const tokens: ['writer' | 'admin', string][] =
        route.role === 'admin'
          ? [['admin', context.tokens.admin]]
          : [
              ['writer', context.tokens.writer],
              ['admin', context.tokens.admin],
            ];
      for (const [name, token] of tokens) {
        const request = await validRequest(context, service, route, fixtures);
        if (!request) continue;
        const answer = await restRequest(context, service, route, request, `Bearer ${token}`);
        controls += 1;
        note(service, route, `REST ${name} (control)`, answer.status);
        if (answer.status >= 200 && answer.status < 300) controlsAccepted += 1;
        else failures.add(`control: REST ${service} ${route.method} ${route.path} with the ${name} token: ${answer.status}: ${excerpt(answer.text)}`);
      }
      if (service === 'issuer' && route.path === '/passports') {
        const answer = await graphqlRequest(context, route, (await validRequest(context, service, route, fixtures))!, `Bearer ${context.tokens.writer}`);
        controls += 1;
        const outcome = graphqlOutcome(answer);
        note(service, route, 'GraphQL writer (control)', outcome.data ? answer.status : (outcome.status ?? answer.status));
        if (outcome.data) controlsAccepted += 1;
        else failures.add(`control: gateway createPassport with the writer token: ${excerpt(answer.text)}`);
      }
    }
    const afterControls = await tables.snapshot();
    const controlChanges = changedTables(beforeControls, afterControls);
    if (controlChanges.length === 0) failures.add('the accepted controls changed no table: the table check cannot see writes');

    const columns = [
      'REST none',
      'REST malformed',
      'REST unknown',
      'REST writer',
      'GraphQL none',
      'GraphQL malformed',
      'GraphQL unknown',
      'GraphQL writer',
      'REST writer (control)',
      'REST admin (control)',
    ];
    const details = [
      `Seed ${context.seed}. Credentials: no header; malformed headers (Basic, a bare \`Bearer\`, two tokens, a token without scheme, a quoted token, another scheme); unknown bearer tokens (random, a valid token with a character added, one with a character removed); the writer token on admin paths (lib/auth/tokens.ts has two roles: writer for the writes, admin for \`/admin/*\` and whatever a writer may, so that is the only under-privileged case). Cells are HTTP statuses (REST) or the status of the problem in the first GraphQL error; ×n counts repeats.`,
      '',
      markdownTable(
        ['path', ...columns],
        [...rows].map(([path, cells]) => [path, ...columns.map((column) => cell(cells[column] ?? []))]),
      ),
      '',
      `Every mutation of the composed graph (${mutations.length}, the ones no REST path maps included), with well-typed dummy arguments, straight to the gateway:`,
      '',
      markdownTable(['mutation', 'no token', 'unknown token', 'writer token (admin mutations)'], graphRows),
      '',
      "The `<service>ReportRefusals` mutations take the REST facade's signed refusal reports, whatever the token: anyone else is refused 403 `INVALID_SIGNATURE` (docs/GRAPHQL-ERRORS.md).",
      '',
      `Public reads in the graph, not refused there (REST asks a token because they are POSTs): ${publicReads.map(({ service, route }) => `${service} ${route.path}`).join(', ') || 'none'}.`,
      '',
      `Tables changed by refused requests, the admin logs aside: by REST ${restChanges.length ? restChanges.join('; ') : 'none'}; by GraphQL ${gatewayChanges.length ? gatewayChanges.join('; ') : 'none'}; by the graph's mutations ${graphChanges.length ? graphChanges.join('; ') : 'none'}. Every refusal is logged (docs/DESIGN-NOTES.md, "Authentication"): the first of a kind a minute itemised, the rest counted in one entry; the admin-log entries the refusals left, read after each service's log was brought up to date (a REST read of it sends the facade's gathered refusals first, and the service writes its counts): REST ${restLogged.length}, GraphQL ${gatewayLogged.length}, the graph's mutations ${graphLogged.length}, standing for ${refusals}, ${gatewayRefusals - graphMutationRefusals} and ${graphMutationRefusals} refusals. Tables changed by the accepted controls: ${controlChanges.length}.`,
    ].join('\n');

    return {
      title: 'Authorization matrix',
      method: `The ${routes.length} write and admin paths of the route tables: ${refusals} refused REST requests (no token, malformed headers, unknown tokens, the writer token on admin paths), the same mutations and admin operations straight to the gateway (${gatewayRefusals} requests), and ${controls} controls with the right token; every table of every service schema hashed before and after.`,
      passed: failures.empty,
      figures: [
        { measure: 'write and admin paths', value: routes.length },
        { measure: 'refused REST requests sent', value: refusals },
        { measure: 'refused GraphQL requests sent', value: gatewayRefusals },
        { measure: 'unauthorised writes (refusals answered 2xx or with data)', value: unauthorisedWrites, expected: 0 },
        { measure: 'tables changed by refused requests (the admin logs aside)', value: restChanges.length + gatewayChanges.length + graphChanges.length, expected: 0 },
        { measure: 'refusals the admin logs miscount, and entries they left that are no refusal', value: logFindings.length, expected: 0 },
        {
          measure: 'mutations of the graph refused without valid credentials',
          value: `${graphRows.filter(([name, ...row]) => (isRefusalReport(name!) ? row.slice(0, 2).every((status) => status === '403') : row.slice(0, 2).every((status) => status === '401')) && ['403', '–'].includes(row[2]!)).length} of ${mutations.length}`,
          expected: `${mutations.length} of ${mutations.length}`,
        },
        { measure: 'paths without a known valid request', value: noValidRequest, expected: 0 },
        { measure: 'controls accepted', value: `${controlsAccepted} of ${controls}`, expected: `${controls} of ${controls}` },
      ],
      failures: failures.list(),
      details,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await tables.close();
  }
}
