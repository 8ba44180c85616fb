/**
 * Soak part: the authorization matrix. Every write path (POST) and every admin path of the route
 * tables gets an otherwise valid request with no token, malformed Authorization headers, unknown
 * bearer tokens and, on admin paths, the writer token; each must be refused (401, or 403 for the
 * under-privileged writer, as lib/auth/tokens.ts and DESIGN §3 decide) and change no table. The
 * same operations go straight to the gateway's /graphql with the same credentials. As a control,
 * the right token (and the admin token on writer paths) must be accepted.
 *
 *   node --import tsx soak/run-part.ts authorization [seed]
 */
import { randomBytes } from 'node:crypto';
import type { ServiceName } from '../lib/config/services.js';
import { problemOf } from '../lib/problem.js';
import type { Route } from '../rest-facade/route-table.js';
import type { SoakContext } from './context.js';
import { allRoutes, fillPath, seedFixtures, validRequest, type Fixtures, type ValidRequest } from './fixtures.js';
import { excerpt, problemViolation, send, type RawAnswer } from './http.js';
import { FailureLog, markdownTable, type SoakSection } from './report.js';
import { ADMIN_LOG_TABLES, changedTables, watchTables } from './tables.js';

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
  const malformed = [
    `Basic ${Buffer.from(`admin:${admin}`).toString('base64')}`,
    'Bearer',
    `Bearer ${admin} ${admin}`,
    admin,
    `Bearer "${admin}"`,
    `Token ${admin}`,
  ];
  const unknown = [`Bearer wrong-${randomBytes(12).toString('hex')}`, `Bearer ${admin}x`, `Bearer ${writer.slice(0, -1)}`];
  return [
    { kind: 'none', status: 401, code: 'MISSING_TOKEN' },
    ...malformed.map((header): Credential => ({ kind: 'malformed', header, status: 401, code: 'INVALID_TOKEN' })),
    ...unknown.map((header): Credential => ({ kind: 'unknown', header, status: 401, code: 'INVALID_TOKEN' })),
    ...(adminRoute ? [{ kind: 'writer', header: `Bearer ${writer}`, status: 403, code: 'INSUFFICIENT_ROLE' } as Credential] : []),
  ];
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

/** The problem a gateway answer carries in its first error, and whether any root field has data. */
function graphqlOutcome(answer: RawAnswer): { status?: number; code?: string; data: boolean } {
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
  const fixtures = given ?? (await seedFixtures(context));
  const tables = await watchTables(context.databaseUrl);
  const routes = guardedRoutes();
  const rows = new Map<string, Record<string, number[]>>();
  const rowOf = (service: ServiceName, route: Route) => {
    const key = `${service} ${route.method} ${route.path}`;
    if (!rows.has(key)) rows.set(key, {});
    return rows.get(key)!;
  };
  const note = (service: ServiceName, route: Route, column: string, status: number) => ((rowOf(service, route)[column] ??= []).push(status));
  let refusals = 0;
  let unauthorisedWrites = 0;
  let gatewayRefusals = 0;
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

    // 1. Through the REST facade: every refusal, then every table as it was, admin logs included.
    const beforeRest = await tables.snapshot();
    for (const { service, route } of routes) {
      for (const credential of credentials(context, route.role === 'admin')) {
        const answer = await restRequest(context, service, route, requests.get(route)!, credential.header);
        refusals += 1;
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
    const afterRest = await tables.snapshot();
    const restChanges = changedTables(beforeRest, afterRest);
    for (const change of restChanges) failures.add(`refused REST requests changed ${change}`);

    // 2. Straight to the gateway: mutations and admin operations. A non-admin query (the registry's
    // validation) is a read, public in the graph as every read is (DESIGN §3); REST asks a token for it
    // only because it is a POST.
    const graphRoutes = routes.filter(({ route }) => route.role === 'admin' || /^\s*mutation\b/.test(route.operation));
    const publicReads = routes.filter(({ route }) => !graphRoutes.some((guarded) => guarded.route === route));
    for (const { service, route } of publicReads) note(service, route, 'GraphQL none', 0);
    // The same credentials as above. An authenticated caller's
    // refused mutation is written to the admin log by design (DESIGN §3: every state-changing
    // request, with its outcome), so admin logs may only gain INSUFFICIENT_ROLE entries here.
    for (const { service, route } of graphRoutes) {
      for (const credential of credentials(context, route.role === 'admin')) {
        const answer = await graphqlRequest(context, route, requests.get(route)!, credential.header);
        gatewayRefusals += 1;
        const outcome = graphqlOutcome(answer);
        note(service, route, `GraphQL ${credential.kind}`, outcome.status ?? answer.status);
        const where = `gateway ${route.operation.split(/[({]/)[0]!.trim()} (${service} ${route.path}) with ${credential.kind} credentials`;
        if (outcome.data) unauthorisedWrites += 1;
        if (answer.status >= 500) failures.add(`${where}: HTTP ${answer.status}: ${excerpt(answer.text)}`);
        else if (outcome.status !== credential.status || outcome.code !== credential.code || outcome.data) {
          failures.add(`${where}: ${outcome.status ?? 'no problem'} ${outcome.code ?? ''}${outcome.data ? ' with data' : ''}, expected ${credential.status} ${credential.code}: ${excerpt(answer.text)}`);
        }
      }
    }
    const afterGateway = await tables.snapshot();
    const gatewayChanges = changedTables(afterRest, afterGateway, ADMIN_LOG_TABLES);
    for (const change of gatewayChanges) failures.add(`refused GraphQL requests changed ${change}`);
    const logged = await tables.adminLogSince(afterRest);
    const badLog = logged.filter((entry) => entry.outcome !== 'INSUFFICIENT_ROLE');
    for (const entry of badLog) failures.add(`refused GraphQL request left an admin-log entry ${entry.service} ${entry.action} ${entry.outcome} (${entry.role})`);

    // 3. Controls: the right token is accepted (with fresh valid requests), and so is admin on writer paths.
    let controls = 0;
    let controlsAccepted = 0;
    const beforeControls = await tables.snapshot();
    for (const { service, route } of routes) {
      const tokens: ['writer' | 'admin', string][] = route.role === 'admin' ? [['admin', context.tokens.admin]] : [['writer', context.tokens.writer], ['admin', context.tokens.admin]];
      for (const [name, token] of tokens) {
        const request = await validRequest(context, service, route, fixtures);
        if (!request) continue;
        const answer = await restRequest(context, service, route, request, `Bearer ${token}`);
        controls += 1;
        note(service, route, `REST ${name} (control)`, answer.status);
        if (answer.status >= 200 && answer.status < 300) controlsAccepted += 1;
        else failures.add(`control: REST ${service} ${route.method} ${route.path} with the ${name} token: ${answer.status}: ${excerpt(answer.text)}`);
      }
      if (route.role === 'writer' && route.path === '/nodes') {
        const answer = await graphqlRequest(context, route, (await validRequest(context, service, route, fixtures))!, `Bearer ${context.tokens.writer}`);
        controls += 1;
        const outcome = graphqlOutcome(answer);
        note(service, route, 'GraphQL writer (control)', outcome.data ? answer.status : (outcome.status ?? answer.status));
        if (outcome.data) controlsAccepted += 1;
        else failures.add(`control: gateway upsertTrustNode with the writer token: ${excerpt(answer.text)}`);
      }
    }
    const afterControls = await tables.snapshot();
    const controlChanges = changedTables(beforeControls, afterControls);
    if (controlChanges.length === 0) failures.add('the accepted controls changed no table: the table check cannot see writes');

    const columns = ['REST none', 'REST malformed', 'REST unknown', 'REST writer', 'GraphQL none', 'GraphQL malformed', 'GraphQL unknown', 'GraphQL writer', 'REST writer (control)', 'REST admin (control)'];
    const details = [
      `Seed ${context.seed}. Credentials: no header; malformed headers (Basic, a bare \`Bearer\`, two tokens, a token without scheme, a quoted token, another scheme); unknown bearer tokens (random, a valid token with a character added, one with a character removed); the writer token on admin paths. Cells are HTTP statuses (REST) or the status of the problem in the first GraphQL error; ×n counts repeats.`,
      '',
      markdownTable(['path', ...columns], [...rows].map(([path, cells]) => [path, ...columns.map((column) => cell(cells[column] ?? []))])),
      '',
      `Public reads in the graph, not refused there (REST asks a token because they are POSTs): ${publicReads.map(({ service, route }) => `${service} ${route.path}`).join(', ') || 'none'}.`,
      '',
      `Tables changed by refused REST requests: ${restChanges.length ? restChanges.join('; ') : 'none'}. By refused GraphQL requests (admin logs aside): ${gatewayChanges.length ? gatewayChanges.join('; ') : 'none'}; admin-log entries they left: ${logged.length} (all INSUFFICIENT_ROLE by the writer token: DESIGN §3 logs every authenticated state-changing request with its outcome). Tables changed by the accepted controls: ${controlChanges.length}.`,
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
        { measure: 'tables changed by refused requests', value: restChanges.length + gatewayChanges.length + badLog.length, expected: 0 },
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
