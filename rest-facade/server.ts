/**
 * The REST facade's HTTP server: it matches a request against the service's route table, checks
 * credentials, content type and size, sends the route's GraphQL operation to the gateway and maps
 * the answer back. Every error is an RFC 9457 problem.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { identify, refusalOf, type AccessTokens } from '../lib/auth/tokens.js';
import type { ServiceName } from '../lib/config/services.js';
import type { ListeningServer } from '../lib/graphql/subgraph-server.js';
import { BodyTooLargeError, MAX_JSON_DEPTH, nestedDeeperThan, readBody } from '../lib/http/body.js';
import { jsonPoster, type JsonAnswer } from '../lib/http/post-json.js';
import { problem } from '../lib/problem.js';
import { notModified } from './conditional.js';
import { RouteMatcher } from './matching.js';
import { openApiDocument } from './openapi.js';
import { problemFromGraphqlErrors, problemHeaders, RequestProblem, sendProblem } from './problems.js';
import { parseQuery } from './query.js';
import type { Route, RouteContext, ServiceRoutes } from './route-table.js';

export interface FacadeMount {
  service: ServiceName;
  port: number;
  /** Path prefix of the service's base address on that port: `/trust`, or `` for the whole port. */
  prefix: string;
}

export interface FacadeOptions {
  host: string;
  mounts: readonly FacadeMount[];
  tables: Record<ServiceName, ServiceRoutes>;
  gatewayUrl: string;
  tokens: AccessTokens;
  bodyLimit: number;
}

export interface RunningFacade extends ListeningServer {
  /** Base URL of each service as mounted. */
  baseUrls: Record<ServiceName, string>;
}

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

interface MountedService {
  prefix: string;
  table: ServiceRoutes;
  matcher: RouteMatcher;
}

function checkCredentials(route: Route, request: IncomingMessage, tokens: AccessTokens): void {
  if (!route.role) return;
  const refusal = refusalOf(identify(tokens, request.headers.authorization), [route.role]);
  if (!refusal) return;
  // RFC 6750 §3: a 401 names the scheme, and says when the token itself was the trouble.
  const challenge = refusal.code === 'INVALID_TOKEN' ? 'Bearer realm="passport", error="invalid_token"' : 'Bearer realm="passport"';
  throw new RequestProblem(problem(refusal.status, refusal.code, refusal.detail), refusal.status === 401 ? { 'www-authenticate': challenge } : {});
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

async function readJsonBody(route: Route, request: IncomingMessage, limit: number): Promise<unknown> {
  if (route.method !== 'POST' || !route.body) {
    request.resume();
    return undefined;
  }
  const contentType = request.headers['content-type'];
  if (!contentType || !JSON_MEDIA_TYPE.test(contentType)) {
    throw new RequestProblem(problem(415, 'UNSUPPORTED_MEDIA_TYPE', `The body must be application/json, not ${contentType ?? 'absent'}.`), { 'accept-post': 'application/json' });
  }
  let raw: Buffer;
  try {
    raw = await readBody(request, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new RequestProblem(problem(413, 'BODY_TOO_LARGE', `The body exceeds ${limit} bytes.`, { limit }));
    throw error;
  }
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    throw new RequestProblem(problem(400, 'MALFORMED_JSON', 'The body is not UTF-8.'));
  }
  if (text.trim() === '') throw new RequestProblem(problem(400, 'MALFORMED_JSON', 'The body is empty; a JSON object is required.'));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new RequestProblem(problem(400, 'MALFORMED_JSON', `The body is not valid JSON: ${(error as Error).message}`));
  }
  // JSON.parse takes any nesting; passing it on to the gateway overflowed the stack (a 503/500).
  if (nestedDeeperThan(body)) throw new RequestProblem(problem(400, 'INVALID_BODY', `The body nests arrays and objects more than ${MAX_JSON_DEPTH} deep.`));
  return body;
}

/**
 * Writes a streamed body piece by piece, waiting for the client to drain each; stops reading the
 * source when the client goes away. A failing source leaves the response incomplete, which the
 * client sees as an aborted transfer (the caller destroys the connection).
 */
async function sendStream(response: ServerResponse, status: number, headers: Record<string, string>, body: AsyncIterable<Uint8Array> | undefined): Promise<void> {
  response.writeHead(status, { 'content-type': 'application/octet-stream', ...headers });
  if (body) {
    for await (const piece of body) {
      if (response.destroyed) return;
      if (!response.write(piece)) await drained(response);
    }
  }
  response.end();
}

/** Resolves when the client has taken what was written, or has gone away. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

export async function startFacade(options: FacadeOptions): Promise<RunningFacade> {
  const byPort = new Map<number, MountedService[]>();
  for (const mount of options.mounts) {
    const table = options.tables[mount.service];
    const list = byPort.get(mount.port) ?? [];
    list.push({ prefix: mount.prefix.replace(/\/+$/, ''), table, matcher: new RouteMatcher(table.routes) });
    byPort.set(mount.port, list.sort((a, b) => b.prefix.length - a.prefix.length));
  }

  // Kept-alive sockets to the gateway, over node:http rather than fetch (see lib/http/post-json.ts).
  const postToGateway = jsonPoster();
  async function callGateway(operation: string, variables: Record<string, unknown>, authorization: string | undefined) {
    let answer: JsonAnswer;
    try {
      answer = await postToGateway(options.gatewayUrl, JSON.stringify({ query: operation, variables }), authorization ? { authorization } : {});
    } catch {
      throw new RequestProblem(problem(503, 'GATEWAY_UNAVAILABLE', 'The GraphQL gateway does not answer.'), { 'retry-after': '5' });
    }
    let payload: { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
    try {
      payload = JSON.parse(answer.text);
    } catch {
      payload = {};
    }
    if (payload.errors?.length) {
      const details = problemFromGraphqlErrors(payload.errors);
      throw new RequestProblem(details, problemHeaders(details));
    }
    if (!payload.data) throw new RequestProblem(problem(502, 'BAD_GATEWAY_ANSWER', `The gateway answered ${answer.status} without data.`));
    return payload.data;
  }

  async function handle(request: IncomingMessage, response: ServerResponse, services: readonly MountedService[]): Promise<void> {
    // The request target is split by hand: as a URL, `//trust/x` would name a host called "trust".
    const [pathname = '/', search = ''] = (request.url ?? '/').split(/\?(.*)/s, 2);
    if (!pathname.startsWith('/')) throw new RequestProblem(problem(400, 'MALFORMED_PATH', 'The request target must be an absolute path.'));
    const url = { pathname, searchParams: new URLSearchParams(search) };
    const method = request.method ?? 'GET';
    const head = method === 'HEAD';
    const docs = /^\/docs\/([a-z]+)\/openapi\.json$/.exec(url.pathname);
    const documented = docs ? options.mounts.find((mount) => mount.service === docs[1]) : undefined;
    if (documented && (method === 'GET' || head)) {
      const hostName = (request.headers.host ?? options.host).replace(/:\d+$/, '');
      const body = JSON.stringify(openApiDocument(options.tables[documented.service], `http://${hostName}:${ports.get(documented.port)}${documented.prefix}`));
      response.writeHead(200, { 'content-type': 'application/openapi+json', 'content-length': Buffer.byteLength(body) });
      return void response.end(head ? undefined : body);
    }
    const service = services.find((candidate) => candidate.prefix === '' || url.pathname === candidate.prefix || url.pathname.startsWith(`${candidate.prefix}/`));
    if (!service) throw new RequestProblem(problem(404, 'NOT_FOUND', `No service is mounted at ${url.pathname}.`));
    const relative = url.pathname.slice(service.prefix.length).replace(/(.)\/+$/, '$1') || '/';
    const matched = service.matcher.match(method, relative);
    if (matched.kind === 'bad-path') throw new RequestProblem(problem(400, 'MALFORMED_PATH', 'The path is not validly percent-encoded.'));
    if (matched.kind === 'not-found') throw new RequestProblem(problem(404, 'NOT_FOUND', `The ${service.table.service} service has no resource at ${relative}.`));
    if (matched.kind === 'method-not-allowed') {
      const allow = matched.allow.includes('GET') ? [...matched.allow, 'HEAD'] : matched.allow;
      throw new RequestProblem(problem(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${relative}; allowed: ${allow.join(', ')}.`), { allow: allow.join(', ') });
    }
    const { route, params } = matched.match;
    checkCredentials(route, request, options.tokens);
    const query = parseQuery(route, url.searchParams);
    const body = await readJsonBody(route, request, options.bodyLimit);
    const variables = route.variables?.({ params, query, body }) ?? {};
    const data = await callGateway(route.operation, variables, request.headers.authorization);
    const baseUrl = `http://${request.headers.host ?? 'localhost'}${service.prefix}`;
    const context: RouteContext = {
      service: service.table.service,
      baseUrl,
      routes: service.table.routes,
      request: { params, query, body },
      graphql: (operation, more) => callGateway(operation, more, request.headers.authorization),
    };
    const result = route.result(data, context);
    const unchanged = notModified(method, request.headers['if-none-match'], result.status ?? 200, result.headers ?? {});
    if (unchanged) {
      response.writeHead(304, unchanged);
      return void response.end();
    }
    if (result.stream) return sendStream(response, result.status ?? 200, result.headers ?? {}, head ? undefined : result.stream);
    const payload = result.raw ?? Buffer.from(JSON.stringify(result.body ?? null));
    response.writeHead(result.status ?? 200, { 'content-type': 'application/json; charset=utf-8', 'content-length': payload.length, ...result.headers });
    response.end(head ? undefined : payload);
  }

  /** Configured port → bound port (they differ when 0 asks for any free port). */
  const ports = new Map<number, number>();
  const servers = [...byPort.entries()].map(([port, services]) => {
    const server = createServer((request, response) => {
      handle(request, response, services).catch((error: unknown) => {
        const instance = (request.url ?? '/').split('?')[0]!;
        if (response.headersSent) {
          // A streamed body failed halfway: cutting the connection short is the only honest answer left.
          console.error('[rest-facade] body aborted:', error instanceof RequestProblem ? error.details : error);
          return void response.destroy();
        }
        if (error instanceof RequestProblem) return sendProblem(response, error.details, instance, error.headers, request.method === 'HEAD');
        console.error('[rest-facade]', error);
        sendProblem(response, problem(500, 'INTERNAL_ERROR', 'The REST facade failed to answer; the failure is logged.'), instance);
      });
    });
    server.keepAliveTimeout = 65_000;
    return { port, server };
  });
  for (const { port, server } of servers) {
    await new Promise<void>((resolve) => server.listen(port, options.host, resolve));
    ports.set(port, (server.address() as AddressInfo).port);
  }
  const baseUrls = Object.fromEntries(options.mounts.map((mount) => [mount.service, `http://${options.host}:${ports.get(mount.port)}${mount.prefix}`])) as Record<ServiceName, string>;
  return {
    url: `http://${options.host}:${ports.get(options.mounts[0]!.port)}`,
    baseUrls,
    async stop() {
      await Promise.all(
        servers.map(
          ({ server }) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      );
    },
  };
}
