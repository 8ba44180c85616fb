/** One service's routes under its prefix on a port of the facade, with its OpenAPI document and its own 404 and 405s. */
import { METHODS } from 'node:http';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../lib/auth/tokens.js';
import type { OidcConfig } from '../lib/config/oidc.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import { drainRefusedBody } from '../lib/http/server-options.js';
import { problem, ProblemError, problemHeaders } from '../lib/problem.js';
import { answerOptions } from '../lib/server/cross-origin.js';
import { actionOf, credentialRefusal, refusalProblem, type RefusalReporter } from './access.js';
import { openApiOptions, routeSchema } from './openapi.js';
import { type SendProblem, tooLarge } from './problems.js';
import { answerRoute, type RouteAnswering } from './route-answer.js';
import type { ServiceRoutes } from './route-table.js';

/** Every method Node parses except CONNECT (which names no path), so each gets 405 where it does not apply. */
export const OTHER_METHODS = METHODS.filter((method) => method !== 'CONNECT');

export interface ServiceMounting extends RouteAnswering {
  bodyLimit: number;
  authenticator: Authenticator;
  /** The OpenID provider whose access tokens are taken, for the OpenAPI document's security scheme. */
  oidc?: OidcConfig;
  refusals: RefusalReporter;
  sendProblem: SendProblem;
}

/** Registers the routes on `instance` (the prefix's own Fastify context); the service's OpenAPI document, made when first asked for. */
export async function mountService(instance: FastifyInstance, table: ServiceRoutes, prefix: string, facade: ServiceMounting): Promise<() => unknown> {
  await instance.register(swagger, openApiOptions(table, prefix, facade.oidc) as never);
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of table.routes) {
    const url = route.path.replace(/\{(\w+)\}/g, ':$1');
    const action = route.role && actionOf(route.operation, table.service);
    methodsByPath.set(url, (methodsByPath.get(url) ?? new Set()).add(route.method));
    instance.route({
      method: route.method,
      url,
      schema: routeSchema(route),
      // A declared size over the limit, then credentials, before anything else is read: a refused
      // client's query and body are never parsed (the body is read and thrown away, so the client
      // reads the refusal instead of a reset).
      onRequest: async (request, reply) => {
        let refused: RequestProblem | undefined;
        if (Number(request.headers['content-length']) > facade.bodyLimit) refused = tooLarge(facade.bodyLimit);
        else {
          try {
            const denied = await credentialRefusal(route, request.headers.authorization, facade.authenticator);
            if (denied) facade.refusals.report(table.service, action!, denied);
            refused = denied && refusalProblem(denied.refusal);
          } catch (error) {
            // The identity store or the OpenID provider out of reach: 503 with Retry-After, as any missing database.
            if (error instanceof RequestProblem) refused = error;
            else if (error instanceof ProblemError) refused = new RequestProblem(error.problem, problemHeaders(error.problem));
            else throw error;
          }
        }
        if (!refused) return;
        drainRefusedBody(request.raw, reply);
        return facade.sendProblem(request, reply, refused.details, refused.headers);
      },
      handler: (request, reply) => answerRoute(route, table, request, reply, facade),
    });
  }
  for (const [url, declared] of methodsByPath) {
    const allow = declared.has('GET') ? [...declared, 'HEAD'] : [...declared];
    // OPTIONS names them too, and answers an allowed origin's preflight (lib/server/cross-origin.ts).
    answerOptions(instance, url, allow);
    instance.route({
      method: OTHER_METHODS.filter((method) => !allow.includes(method) && method !== 'OPTIONS'),
      url,
      schema: { hide: true } as never,
      onRequest: async (request, reply) => {
        const relative = request.url.split('?')[0]!.slice(prefix.length) || '/';
        return facade.sendProblem(request, reply, problem(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${relative}; allowed: ${allow.join(', ')}.`), { allow: allow.join(', ') });
      },
      handler: async () => undefined,
    });
  }
  instance.setNotFoundHandler((request, reply) => {
    const relative = request.url.split('?')[0]!.slice(prefix.length) || '/';
    return facade.sendProblem(request, reply, problem(404, 'NOT_FOUND', `The ${table.service} service has no resource at ${relative}.`));
  });
  return () => instance.swagger();
}
